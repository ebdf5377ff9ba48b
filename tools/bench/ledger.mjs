// Debits per second on one SQLite file, three ways in the same run, alternating rounds:
//   http      withdrawFundsFromContactAccount over HTTP against an in-process server
//   service   the same call through the whole pipeline in-process (service.call)
//   raw       bare better-sqlite3: BEGIN IMMEDIATE; SELECT; UPDATE; INSERT journal; COMMIT
// Each way debits its own account; at the end every account's journal must sum to its balance.
// Usage: npm run build && node tools/bench/ledger.mjs [rounds] [debits-per-round] [http-concurrency]
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { fmt, load, median, ROOT, tempDir } from './lib.mjs';

const dist = (p) => import(join(ROOT, 'dist', p));
const { Store } = await dist('store/index.js');
const { loadFixture } = await dist('store/seed.js');
const { Service } = await dist('service/pipeline.js');
const { deriveSecrets } = await dist('service/secrets.js');
const { listen } = await dist('http/server.js');
const { isoTime } = await dist('store/time.js');

const rounds = Number(process.argv[2] ?? 5);
const total = Number(process.argv[3] ?? 5000);
const concurrency = Number(process.argv[4] ?? 10);
const KEY = 'bench-key';
const START = 10 ** 15; // far more than rounds × total × 1 minor unit
const ACCOUNT = { http: 501, service: 502, raw: 503 };

const dir = tempDir();
const file = join(dir, 'ledger.db');
const store = Store.open(file);
loadFixture(store, {
  owners: [{ id: 1, name: 'Bench', plan: 'pro', api_key: KEY }],
  projects: [{ uuid: '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10', owner_id: 1, name: 'Bench' }],
  bots: [{ id: 10, project_uuid: '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10', name: 'Bench bot' }],
  contacts: [{ id: 100, bot_id: 10, messenger: 'telegram', name: 'Ann', telegram_id: '5001' }],
  accounts: Object.entries(ACCOUNT).map(([, id], i) => ({ id, contact_id: 100, currency: ['USD', 'EUR', 'GBP'][i], amount: START })),
});
const service = new Service(store, { rateLimit: 0, secrets: deriveSecrets(Buffer.alloc(32, 7)) });
const { server, baseUrl } = await listen(service, '127.0.0.1', 0);

// The baseline: a second connection on the same file, the same pragmas as the store's.
const raw = new Database(file);
raw.pragma('journal_mode = WAL');
raw.pragma('synchronous = NORMAL');
raw.pragma('foreign_keys = ON');
raw.pragma('busy_timeout = 10000');
const q = {
  begin: raw.prepare('BEGIN IMMEDIATE'),
  select: raw.prepare('SELECT amount, blocked_at FROM contact_accounts WHERE id = ?'),
  update: raw.prepare('UPDATE contact_accounts SET amount = ?, updated_at = ? WHERE id = ?'),
  journal: raw.prepare(
    `INSERT INTO account_journal (account_id, operation, amount, description, balance_after, created_at)
     VALUES (?, 'Debit via API', ?, ?, ?, ?)`,
  ),
  commit: raw.prepare('COMMIT'),
  rollback: raw.prepare('ROLLBACK'),
};

function rawDebit(id, amount) {
  q.begin.run();
  try {
    const row = q.select.get(id);
    if (!row || row.blocked_at !== null || row.amount < amount) throw new Error('debit refused');
    const now = isoTime();
    q.update.run(row.amount - amount, now, id);
    q.journal.run(id, -amount, 'bench', row.amount - amount, now);
    q.commit.run();
  } catch (e) {
    q.rollback.run();
    throw e;
  }
}

function timeLoop(n, fn) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn();
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  return { rps: n / secs, p50: (secs * 1000) / n };
}

const body = (id) => JSON.stringify({ account_id: id, amount: 1, description: 'bench' });
const ways = {
  http: () =>
    load(baseUrl, {
      method: 'POST',
      path: 'withdrawFundsFromContactAccount',
      headers: { accept: 'application/json', 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: body(ACCOUNT.http),
      total,
      concurrency,
    }),
  service: async () =>
    timeLoop(total, () => {
      const r = service.call({
        method: 'withdrawFundsFromContactAccount',
        verb: 'POST',
        input: { account_id: ACCOUNT.service, amount: 1, description: 'bench' },
        bearer: KEY,
        wantsJson: true,
        baseUrl: 'http://127.0.0.1/api/v1',
      });
      if (r.status !== 200) throw new Error(`status ${r.status}: ${JSON.stringify(r.body)}`);
    }),
  raw: async () => timeLoop(total, () => rawDebit(ACCOUNT.raw, 1)),
};

const runs = { http: [], service: [], raw: [] };
for (let i = 0; i < rounds + 1; i++) {
  for (const [name, run] of Object.entries(ways)) {
    const res = await run();
    if (i > 0) runs[name].push(res); // round 0 warms up
  }
}

// The ledger must be exact: each account's journal sums to its balance, every debit landed.
const check = raw.prepare(
  `SELECT a.id, a.amount, (SELECT coalesce(sum(j.amount), 0) FROM account_journal j WHERE j.account_id = a.id) AS journal
   FROM contact_accounts a ORDER BY a.id`,
);
const expected = START - (rounds + 1) * total;
for (const row of check.all()) {
  if (row.amount !== row.journal || row.amount !== expected) {
    throw new Error(`ledger mismatch on account ${row.id}: balance ${row.amount}, journal ${row.journal}, expected ${expected}`);
  }
}

const rawRps = median(runs.raw.map((r) => r.rps));
const rows = [
  ['way', 'debits/s', 'vs raw', 'p50 ms'],
  ...Object.entries(runs).map(([name, rs]) => {
    const rps = median(rs.map((r) => r.rps));
    return [name, fmt(rps, 0), `${fmt(rps / rawRps, 2)}×`, fmt(median(rs.map((r) => r.p50)), 3)];
  }),
];
const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
const line = (r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');
console.log(`ledger debits: ${rounds} rounds × ${total} debits each way (median), HTTP concurrency ${concurrency}, node ${process.version}`);
console.log(line(rows[0]));
for (const r of rows.slice(1)) console.log(line(r));
console.log(`ledger check: every journal sums to its balance (${check.all().length} accounts, ${(rounds + 1) * total} debits each)`);
console.log('(service and raw are sequential loops: their p50 column is the mean time per debit)');
const figures = Object.fromEntries(
  Object.entries(runs).map(([name, rs]) => {
    const rps = median(rs.map((r) => r.rps));
    return [name, { rps, vs_raw: rps / rawRps, p50: median(rs.map((r) => r.p50)) }];
  }),
);
console.log(`BENCH_JSON ${JSON.stringify({ bench: 'ledger', rounds, total, concurrency, ...figures })}`);

server.close();
server.closeAllConnections();
raw.close();
store.close();
