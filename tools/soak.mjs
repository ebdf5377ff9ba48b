#!/usr/bin/env node
/**
 * Soak: mixed traffic at a fixed rate against a `workspace-mcp serve` process, sampling the
 * server's resident memory (VmRSS) every few seconds; prints the curve and whether memory
 * stayed flat (median RSS of the last third of the run against the first third).
 *
 *   npm run build && node tools/soak.mjs [--duration 600] [--rate 100] [--sample 5] [--out FILE]
 *
 * --duration  seconds of traffic (default 600 = 10 minutes)
 * --rate      requests per second, fixed (default 100); at most --inflight in flight, the rest
 *             counted as skipped (the server fell behind), never queued without bound
 * --sample    seconds between RSS samples (default 5)
 * --growth    largest last-third/first-third RSS ratio still called flat (default 1.10); the
 *             first tenth of the run (at most 60 s) is warm-up, left out of the thirds
 * --out       also write the figures and the curve as JSON to FILE
 * --cli       the workspace-mcp entry point to soak (default dist/cli/main.js; e.g. another build)
 * --gc        also force a full garbage collection in the server before each sample (through the
 *             inspector on a loopback port) and judge flatness on the post-GC RSS: a leak raises
 *             what survives a collection, while V8's heap otherwise grows between major
 *             collections that may come minutes apart
 *
 * The traffic, per 20 requests: 8 reads (getContacts limit 100, getContactAccounts, getMe,
 * getNumberOfContacts), 5 top-ups, 5 debits, 2 creates (createOrUpdateContact with a new
 * telegram_id: the database grows, the process must not). Loopback only; the server runs on a
 * temp database that is removed at the end. At the end every account's balance is checked
 * against the sum of the acknowledged top-ups and debits.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool, WebSocket } from 'undici';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    cli: { type: 'string', default: join(ROOT, 'dist', 'cli', 'main.js') },
    duration: { type: 'string', default: '600' },
    rate: { type: 'string', default: '100' },
    sample: { type: 'string', default: '5' },
    inflight: { type: 'string', default: '64' },
    growth: { type: 'string', default: '1.10' },
    gc: { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});
const CLI = values.cli;
const DURATION = Number(values.duration);
const RATE = Number(values.rate);
const SAMPLE = Number(values.sample);
const INFLIGHT = Number(values.inflight);
const GROWTH = Number(values.growth);
for (const [k, v] of Object.entries({ DURATION, RATE, SAMPLE, INFLIGHT, GROWTH })) {
  if (!(v > 0) || !Number.isFinite(v)) {
    process.stderr.write(`soak: ${k.toLowerCase()} must be a positive number\n`);
    process.exit(2);
  }
}
if (!existsSync(CLI)) {
  process.stderr.write('soak: dist/ is missing; run npm run build first\n');
  process.exit(2);
}

const KEY = 'soak-key';
const BOT = 10;
const PROJECT = '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10';
const CONTACTS = 20;
const START = 10 ** 12;
const dir = mkdtempSync(join(tmpdir(), 'workspace-soak-'));
const db = join(dir, 'soak.db');
const fixtureFile = join(dir, 'fixture.json');
writeFileSync(
  fixtureFile,
  JSON.stringify({
    owners: [{ id: 1, name: 'Soak', email: 'soak@example.com', plan: 'pro', api_key: KEY }],
    projects: [{ uuid: PROJECT, owner_id: 1, name: 'Soak' }],
    bots: [{ id: BOT, project_uuid: PROJECT, name: 'Soak bot' }],
    contacts: Array.from({ length: CONTACTS }, (_, i) => ({
      id: 100 + i,
      bot_id: BOT,
      messenger: 'telegram',
      name: `C${i}`,
      telegram_id: String(7000 + i),
    })),
    accounts: Array.from({ length: CONTACTS }, (_, i) => ({ id: 500 + i, contact_id: 100 + i, currency: 'USD', amount: START })),
  }),
);
execFileSync(process.execPath, [CLI, 'seed', fixtureFile, '--db', db], { stdio: 'ignore' });

const server = spawn(
  process.execPath,
  [...(values.gc ? ['--inspect=127.0.0.1:0'] : []), CLI, 'serve', '--db', db, '--port', '0', '--rate-limit', '0'],
  {
    stdio: ['ignore', 'pipe', values.gc ? 'pipe' : 'ignore'],
    env: { ...process.env, WORKSPACE_LOG_LEVEL: 'warn' },
  },
);
// With --gc: the inspector's WebSocket, for HeapProfiler.collectGarbage.
const inspector = !values.gc
  ? null
  : await new Promise((resolve, reject) => {
      let err = '';
      server.stderr.on('data', (d) => {
        err += d;
        const m = /Debugger listening on (ws:\/\/127\.0\.0\.1:\d+\/\S+)/.exec(err);
        if (m && !resolve.done) {
          resolve.done = true;
          const ws = new WebSocket(m[1]);
          ws.onopen = () => resolve(ws);
          ws.onerror = (e) => reject(new Error(`inspector: ${e.message ?? e}`));
        }
      });
    });
let cdpId = 0;
const cdpWaiting = new Map();
if (inspector) {
  inspector.onmessage = (ev) => {
    const msg = JSON.parse(String(ev.data));
    cdpWaiting.get(msg.id)?.(msg);
    cdpWaiting.delete(msg.id);
  };
}
function collectGarbage() {
  const id = ++cdpId;
  return new Promise((resolve) => {
    cdpWaiting.set(id, resolve);
    inspector.send(JSON.stringify({ id, method: 'HeapProfiler.collectGarbage' }));
  });
}
const baseUrl = await new Promise((resolve, reject) => {
  let out = '';
  server.stdout.on('data', (d) => {
    out += d;
    const m = /(http:\/\/\S+\/api\/v1)/.exec(out);
    if (m) resolve(m[1]);
  });
  server.once('exit', (c) => reject(new Error(`serve exited ${c}`)));
});
const url = new URL(baseUrl);
const pool = new Pool(url.origin, { connections: 16 });
const headers = { accept: 'application/json', 'content-type': 'application/json', authorization: `Bearer ${KEY}` };

/**
 * The server's resident set in kB: /proc where there is one (with its anonymous part, the heaps,
 * and its file-backed part, mapped code and SQLite's shared memory), else ps (total only).
 */
function rssKb() {
  try {
    const status = readFileSync(`/proc/${server.pid}/status`, 'utf8');
    const kb = (name) => Number(new RegExp(`${name}:\\s+(\\d+)\\s+kB`).exec(status)?.[1] ?? NaN);
    if (!Number.isNaN(kb('VmRSS'))) return { total: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') };
  } catch {
    // no /proc (macOS): fall through
  }
  return { total: Number(execFileSync('ps', ['-o', 'rss=', '-p', String(server.pid)], { encoding: 'utf8' }).trim()), anon: NaN, file: NaN };
}

const expected = new Map(Array.from({ length: CONTACTS }, (_, i) => [500 + i, START]));
let nextTelegram = 1_000_000;
let seq = 0;
function nextRequest() {
  const k = seq++ % 20;
  const account = 500 + (seq % CONTACTS);
  if (k < 2) return { kind: 'read', method: 'getContacts', body: { bot_id: BOT, limit: 100 } };
  if (k < 4) return { kind: 'read', method: 'getContactAccounts', body: { contact_id: 100 + (seq % CONTACTS) } };
  if (k < 6) return { kind: 'read', method: 'getMe', body: {} };
  if (k < 8) return { kind: 'read', method: 'getNumberOfContacts', body: { bot_id: BOT } };
  if (k < 13)
    return {
      kind: 'topup',
      method: 'addFundsToContactAccount',
      body: { account_id: account, amount: 7, description: 'soak' },
      account,
      delta: 7,
    };
  if (k < 18)
    return {
      kind: 'debit',
      method: 'withdrawFundsFromContactAccount',
      body: { account_id: account, amount: 5, description: 'soak' },
      account,
      delta: -5,
    };
  const id = nextTelegram++;
  return {
    kind: 'create',
    method: 'createOrUpdateContact',
    body: { bot_id: BOT, messenger: 'telegram', name: `Soak ${id}`, telegram_id: id },
  };
}

const counts = { read: 0, topup: 0, debit: 0, create: 0 };
let sent = 0;
let done = 0;
let errors = 0;
let skipped = 0;
let inflight = 0;
let windowLat = [];
const firstErrors = [];

async function fire() {
  const req = nextRequest();
  inflight++;
  sent++;
  const t0 = performance.now();
  try {
    const res = await pool.request({ method: 'POST', path: `${url.pathname}/${req.method}`, headers, body: JSON.stringify(req.body) });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${req.method} ${res.statusCode}: ${text.slice(0, 200)}`);
    windowLat.push(performance.now() - t0);
    counts[req.kind]++;
    if (req.account !== undefined) expected.set(req.account, expected.get(req.account) + req.delta);
    done++;
  } catch (e) {
    errors++;
    if (firstErrors.length < 5) firstErrors.push(String(e.message ?? e));
  } finally {
    inflight--;
  }
}

const pct = (xs, p) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] : 0);
const median = (xs) => pct(xs, 0.5);

const curve = [];
const t0 = performance.now();
let lastDone = 0;
async function sample() {
  const t = (performance.now() - t0) / 1000;
  const rss = rssKb();
  const mb = (kb) => (Number.isNaN(kb) ? null : Math.round(kb / 102.4) / 10);
  let gc = null;
  if (inspector) {
    await collectGarbage();
    gc = rssKb();
  }
  const point = {
    t: Math.round(t),
    rss_mb: mb(rss.total),
    anon_mb: mb(rss.anon),
    file_mb: mb(rss.file),
    ...(gc ? { gc_rss_mb: mb(gc.total), gc_anon_mb: mb(gc.anon) } : {}),
    rps: Math.round((done - lastDone) / SAMPLE),
    p99_ms: Math.round(pct(windowLat, 0.99) * 100) / 100,
  };
  lastDone = done;
  windowLat = [];
  curve.push(point);
  process.stderr.write(
    `soak t=${point.t}s rss=${point.rss_mb} MB (anon ${point.anon_mb})${gc ? ` after GC ${point.gc_rss_mb} MB (anon ${point.gc_anon_mb})` : ''} rps=${point.rps} p99=${point.p99_ms} ms errors=${errors} skipped=${skipped}\n`,
  );
}

// Fixed rate: every tick sends what the clock says is due, never more than INFLIGHT at once.
await sample();
const TICK = 10;
const sampler = setInterval(() => void sample(), SAMPLE * 1000);
await new Promise((resolve) => {
  const timer = setInterval(() => {
    const elapsed = (performance.now() - t0) / 1000;
    if (elapsed >= DURATION) {
      clearInterval(timer);
      resolve();
      return;
    }
    const due = Math.floor(elapsed * RATE) - sent - skipped;
    for (let i = 0; i < due; i++) {
      if (inflight >= INFLIGHT) skipped++;
      else void fire();
    }
  }, TICK);
});
clearInterval(sampler);
while (inflight > 0) await new Promise((r) => setTimeout(r, 20));
if ((performance.now() - t0) / 1000 - curve.at(-1).t >= 1) await sample();

// Every acknowledged top-up and debit is in the balance, nothing else is.
const accRes = await Promise.all(
  Array.from({ length: CONTACTS }, async (_, i) => {
    const res = await pool.request({
      method: 'POST',
      path: `${url.pathname}/getContactAccounts`,
      headers,
      body: JSON.stringify({ contact_id: 100 + i }),
    });
    return JSON.parse(await res.body.text()).data;
  }),
);
let ledgerOk = true;
for (const list of accRes) {
  for (const a of list) {
    const want = expected.get(a.id);
    if (want !== undefined && a.amount !== want) ledgerOk = false;
  }
}
const ledgerNote = ledgerOk
  ? 'every balance = start + acknowledged top-ups - acknowledged debits'
  : 'MISMATCH between balances and acknowledged operations';

await pool.close();
inspector?.close();
server.kill('SIGTERM');
await new Promise((r) => server.once('exit', r));
rmSync(dir, { recursive: true, force: true });

// Start-up growth (JIT, caches, pool connections) is not a leak: the samples of the first tenth
// of the run (at most 60 s) are left out of the comparison, though they stay in the curve.
const warm = Math.min(60, DURATION / 10);
const steady = curve.filter((p) => p.t >= warm);
const third = Math.max(1, Math.floor(steady.length / 3));
// With --gc the verdict is on what survives a full collection; the raw figures stay in the curve.
const judged = (p) => (inspector ? p.gc_rss_mb : p.rss_mb);
const first = median(steady.slice(0, third).map(judged));
const last = median(steady.slice(-third).map(judged));
const anonFirst = median(steady.slice(0, third).map((p) => (inspector ? p.gc_anon_mb : p.anon_mb)));
const anonLast = median(steady.slice(-third).map((p) => (inspector ? p.gc_anon_mb : p.anon_mb)));
const rawFirst = median(steady.slice(0, third).map((p) => p.rss_mb));
const rawLast = median(steady.slice(-third).map((p) => p.rss_mb));
const peak = Math.max(...curve.map((p) => p.rss_mb));
const ratio = last / first;
const flat = ratio <= GROWTH;
const secs = (performance.now() - t0) / 1000;
const result = {
  bench: 'soak',
  duration_s: DURATION,
  rate: RATE,
  achieved_rps: Math.round(done / secs),
  requests: done,
  by_kind: counts,
  errors,
  skipped,
  first_errors: firstErrors,
  rss_first_third_mb: first,
  rss_last_third_mb: last,
  rss_peak_mb: peak,
  judged_after_gc: Boolean(inspector),
  raw_rss_first_third_mb: rawFirst,
  raw_rss_last_third_mb: rawLast,
  anon_first_third_mb: anonFirst,
  anon_last_third_mb: anonLast,
  growth: Math.round(ratio * 1000) / 1000,
  growth_limit: GROWTH,
  warmup_s: warm,
  flat,
  ledger_ok: ledgerOk,
  node: process.version,
  curve,
};
if (values.out) writeFileSync(values.out, JSON.stringify(result, null, 2) + '\n');

const out = (s) => process.stdout.write(s + '\n');
out(
  `soak: ${DURATION} s at ${RATE} req/s (achieved ${result.achieved_rps}), ${done} requests ` +
    `(${counts.read} reads, ${counts.topup} top-ups, ${counts.debit} debits, ${counts.create} creates), ${errors} errors, ${skipped} skipped`,
);
out(`  t s   RSS MB  anon MB  file MB${inspector ? '  RSS after GC  anon after GC' : ''}   req/s   p99 ms`);
const step = Math.max(1, Math.ceil(curve.length / 40));
for (let i = 0; i < curve.length; i += step) {
  const p = curve[i];
  out(
    `${String(p.t).padStart(5)} ${p.rss_mb.toFixed(1).padStart(8)} ${String(p.anon_mb ?? '-').padStart(8)} ${String(p.file_mb ?? '-').padStart(8)}${inspector ? `${String(p.gc_rss_mb).padStart(14)}${String(p.gc_anon_mb).padStart(15)}` : ''} ${String(p.rps).padStart(7)} ${p.p99_ms.toFixed(2).padStart(8)}`,
  );
}
out(
  `${inspector ? 'after a forced GC: ' : ''}RSS median first third ${first} MB, last third ${last} MB, peak ${peak} MB: ratio ${result.growth} -> ${flat ? 'flat' : 'GROWING'} (limit ${GROWTH}); anonymous part ${anonFirst} -> ${anonLast} MB`,
);
out(`ledger: ${ledgerNote}`);
out(`BENCH_JSON ${JSON.stringify({ ...result, curve: undefined })}`);
if (errors > 0 || !ledgerOk) process.exitCode = 1;
