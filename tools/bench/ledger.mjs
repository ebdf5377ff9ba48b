// Debits per second in-process on one SQLite file, two ways in the same run, alternating rounds:
//   service   withdrawFundsFromContactAccount through the whole pipeline (service.call)
//   raw       the bare transaction (raw.mjs): BEGIN IMMEDIATE; UPDATE … WHERE amount >= ?
//             RETURNING *; INSERT journal; COMMIT, the account back
// (The same debit over HTTP, beside a bare node:http server running the raw transaction, is in
// run.mjs's http area.) Each way debits its own account; at the end every account's journal must
// sum to its balance and every debit must have landed.
// Usage: npm run build && node tools/bench/ledger.mjs [rounds=5] [debits-per-round=5000]
import { join } from 'node:path';
import { fmt, median, ROOT, tempDir } from './lib.mjs';
import { accountView, openRaw, rawDebit } from './raw.mjs';

const dist = (p) => import(join(ROOT, 'dist', p));
const { Store } = await dist('store/index.js');
const { loadFixture } = await dist('store/seed.js');
const { Service } = await dist('service/pipeline.js');
const { deriveSecrets } = await dist('service/secrets.js');

const rounds = Number(process.argv[2] ?? 5);
const total = Number(process.argv[3] ?? 5000);
const KEY = 'bench-key';
const START = 10 ** 15; // far more than rounds × total × 1 minor unit
const ACCOUNT = { service: 502, raw: 503 };

const dir = tempDir(); // removed when this process ends
const file = join(dir, 'ledger.db');
const store = Store.open(file);
loadFixture(store, {
  owners: [{ id: 1, name: 'Bench', plan: 'pro', api_key: KEY }],
  projects: [{ uuid: '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10', owner_id: 1, name: 'Bench' }],
  bots: [{ id: 10, project_uuid: '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10', name: 'Bench bot' }],
  contacts: [{ id: 100, bot_id: 10, messenger: 'telegram', name: 'Ann', telegram_id: '5001' }],
  accounts: Object.values(ACCOUNT).map((id, i) => ({ id, contact_id: 100, currency: ['USD', 'EUR'][i], amount: START })),
});
const service = new Service(store, { rateLimit: 0, secrets: deriveSecrets(Buffer.alloc(32, 7)) });
// The baseline: a second connection on the same file, the same pragmas as the store's.
const raw = openRaw(file);
const debit = rawDebit(raw);

const timeLoop = (n, fn) => {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn();
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  return { rps: n / secs, mean: (secs * 1000) / n };
};
const ways = {
  service: () =>
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
  raw: () =>
    timeLoop(total, () => {
      const row = debit(ACCOUNT.raw, 1, 'bench');
      if (!row) throw new Error('raw debit refused');
      accountView(row);
    }),
};

const runs = { service: [], raw: [] };
const ratios = [];
for (let i = 0; i < rounds + 1; i++) {
  const order = i % 2 ? ['raw', 'service'] : ['service', 'raw'];
  const res = {};
  for (const name of order) res[name] = ways[name]();
  if (i === 0) continue; // round 0 warms up
  for (const name of order) runs[name].push(res[name]);
  ratios.push(res.service.rps / res.raw.rps);
}

// The ledger must be exact: each account's journal sums to its balance, every debit landed.
const check = raw.prepare(
  `SELECT a.id, a.amount, (SELECT coalesce(sum(j.amount), 0) FROM account_journal j WHERE j.account_id = a.id) AS journal
   FROM contact_accounts a ORDER BY a.id`,
);
const expected = START - (rounds + 1) * total;
const accounts = check.all();
for (const row of accounts) {
  if (row.amount !== row.journal || row.amount !== expected) {
    throw new Error(`ledger mismatch on account ${row.id}: balance ${row.amount}, journal ${row.journal}, expected ${expected}`);
  }
}

const figures = Object.fromEntries(
  Object.entries(runs).map(([name, rs]) => [name, { rps: median(rs.map((r) => r.rps)), mean: median(rs.map((r) => r.mean)) }]),
);
const ratio = median(ratios);
console.log(`ledger debits in-process: ${rounds} rounds × ${total} debits each way (medians), node ${process.version}`);
console.log('way        debits/s   mean ms');
for (const [name, fig] of Object.entries(figures))
  console.log(`${name.padEnd(9)} ${fmt(fig.rps, 0).padStart(9)} ${fmt(fig.mean, 4).padStart(9)}`);
console.log(`ratio service/raw (median of per-round ratios): ${fmt(ratio, 2)}`);
console.log(`ledger check: every journal sums to its balance (${accounts.length} accounts, ${(rounds + 1) * total} debits each)`);
console.log(`BENCH_JSON ${JSON.stringify({ bench: 'ledger', rounds, total, ...figures, ratio })}`);
raw.close();
store.close();
