#!/usr/bin/env node
/**
 * Contacts at scale, over real HTTP: a 1 000 000-contact bot exported with offset paging
 * (limit 1000). Times the pages at offsets 0, 500 000 and 990 000 (median of several runs),
 * the whole export, and getNumberOfContacts; prints the ratio last page / first page
 * (it should stay under 2: a page must not cost more the further it is). Then the same with
 * a `date_to` cap, as the MCP exportContacts tool always sends one (`date_to` = now), and with
 * a `date_from`/`date_to` window whose ends fall inside blocks.
 *
 *   npm run build && node tools/bench/contacts.mjs [--db FILE] [--count 1000000] [--runs 9]
 *     [--times ascending|descending] [--no-whole]
 *
 * Without --db (or with a --db that does not exist yet) it seeds one with tools/seed-contacts.mjs
 * (`--times descending` seeds a bot whose contacts are not in time order: the slow date path).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { listen } from '../../dist/http/server.js';
import { Service } from '../../dist/service/pipeline.js';
import { deriveSecrets } from '../../dist/service/secrets.js';
import { Store } from '../../dist/store/index.js';
import { tempDir } from './lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    count: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '9' },
    bot: { type: 'string', default: '900' },
    key: { type: 'string', default: 'bench-key' },
    times: { type: 'string', default: 'ascending' },
    'no-whole': { type: 'boolean', default: false },
  },
});
const runs = Number(values.runs);
const botId = Number(values.bot);
let dbFile = values.db;
if (!dbFile) dbFile = join(tempDir('workspace-bench-contacts-'), 'contacts.db');
if (!existsSync(dbFile)) {
  const t = performance.now();
  const out = execFileSync(
    process.execPath,
    [
      join(here, '..', 'seed-contacts.mjs'),
      '--db',
      dbFile,
      '--count',
      values.count,
      '--bot',
      values.bot,
      '--key',
      values.key,
      '--times',
      values.times,
    ],
    { encoding: 'utf8' },
  );
  console.log(`seed: ${out.trim()} (${((performance.now() - t) / 1000).toFixed(1)} s)`);
}

const store = Store.open(dbFile);
const service = new Service(store, { rateLimit: 0, secrets: deriveSecrets(Buffer.alloc(32, 1)) });
const { server, baseUrl } = await listen(service, '127.0.0.1', 0);

async function call(method, params) {
  const res = await fetch(`${baseUrl}/${method}`, {
    method: 'POST',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json', Authorization: `Bearer ${values.key}` },
    body: JSON.stringify(params),
  });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`${method} ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
  return body;
}

async function timed(fn) {
  const t = performance.now();
  const out = await fn();
  return [performance.now() - t, out];
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function medianOf(fn) {
  await fn(); // warm-up
  const times = [];
  for (let i = 0; i < runs; i++) times.push((await timed(fn))[0]);
  return median(times);
}

const ms = (x) => `${x.toFixed(2)} ms`;

try {
  const { count } = await call('getNumberOfContacts', { bot_id: botId });
  console.log(`contacts listed in bot ${botId}: ${count}`);

  const countMs = await medianOf(() => call('getNumberOfContacts', { bot_id: botId }));
  const countAllMs = await medianOf(() => call('getNumberOfContacts', {}));
  const totalMs = await medianOf(() => call('getContacts', { bot_id: botId, offset: 0, limit: 1 }));
  console.log(
    `getNumberOfContacts (bot_id): ${ms(countMs)}   (all bots): ${ms(countAllMs)}   getContacts limit 1 (meta.total): ${ms(totalMs)}`,
  );

  const offsets = [0, 500_000, 990_000];
  const exportPages = async (label, filter) => {
    const { count: n } = await call('getNumberOfContacts', { bot_id: botId, ...filter });
    const countMs = await medianOf(() => call('getNumberOfContacts', { bot_id: botId, ...filter }));
    console.log(`\n${label}: ${n} contacts; getNumberOfContacts ${ms(countMs)}`);
    // Round robin over the offsets, after a warm-up, so that JIT and cache warm-up favour none.
    const samples = Object.fromEntries(offsets.map((o) => [o, []]));
    const page = async (offset) => {
      const body = await call('getContacts', { bot_id: botId, ...filter, offset, limit: 1000 });
      if (offset < n && body.data.length === 0) throw new Error(`empty page at ${offset}`);
      if (body.meta.total !== n) throw new Error(`meta.total ${body.meta.total}, count ${n}`);
      return body;
    };
    for (let i = 0; i < 3; i++) for (const o of offsets) await page(o);
    for (let i = 0; i < runs; i++) for (const o of offsets) samples[o].push((await timed(() => page(o)))[0]);
    const pageAt = {};
    for (const o of offsets) {
      pageAt[o] = median(samples[o]);
      console.log(
        `  page offset ${String(o).padStart(7)} limit 1000: ${ms(pageAt[o])} (median of ${runs}; min ${ms(Math.min(...samples[o]))})`,
      );
    }
    console.log(`  ratio last/first (offset 990000 / offset 0): ${(pageAt[990_000] / pageAt[0]).toFixed(2)}`);
    return n;
  };

  // The whole export, as a client would run it; checks order and completeness on the way.
  const wholeExport = async (label, filter, n) => {
    const t = performance.now();
    let offset = 0;
    let rows = 0;
    let pages = 0;
    let lastId = 0;
    let slowest = 0;
    for (;;) {
      const [pageMs, body] = await timed(() => call('getContacts', { bot_id: botId, ...filter, offset, limit: 1000 }));
      slowest = Math.max(slowest, pageMs);
      pages++;
      for (const c of body.data) {
        if (c.id <= lastId) throw new Error(`ids out of order at ${c.id}`);
        lastId = c.id;
      }
      rows += body.data.length;
      if (body.data.length < 1000 || offset + 1000 >= body.meta.total) break;
      offset += 1000;
    }
    const whole = (performance.now() - t) / 1000;
    console.log(
      `  whole export${label}: ${rows} contacts in ${pages} pages, ${whole.toFixed(1)} s (${ms((whole * 1000) / pages)} a page, slowest ${ms(slowest)})` +
        (rows === n ? '' : `  MISMATCH: expected ${n}`),
    );
  };

  const all = await exportPages('no date filter', {});
  if (!values['no-whole']) await wholeExport('', {}, all);

  // What exportContacts sends: date_to = now (the cap fixed when the export starts).
  const inOrder = store.contacts.inTimeOrder?.(botId);
  const cap = Math.floor(Date.now() / 1000);
  const order = inOrder === undefined ? 'not tracked' : inOrder ? 'yes' : 'no';
  const capped = await exportPages(`date_to = now (${cap}); bot in time order: ${order}`, { date_to: cap });
  if (!values['no-whole']) await wholeExport(' (date_to = now)', { date_to: cap }, capped);

  // A window whose ends fall inside blocks: between the creation times of the 3rd contact and
  // of the one 3 000 before the end.
  const created = async (offset) => Date.parse((await call('getContacts', { bot_id: botId, offset, limit: 1 })).data[0].created_at) / 1000;
  const [a, b] = [await created(2), await created(Math.max(0, all - 3_000))];
  const [from, to] = [Math.min(a, b), Math.max(a, b)];
  await exportPages(`date_from ${from} .. date_to ${to}`, { date_from: from, date_to: to });
} finally {
  await new Promise((r) => server.close(() => r()));
  store.close();
}
