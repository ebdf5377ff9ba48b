/**
 * "The balance never goes below zero, even under simultaneous requests": four real `serve`
 * processes on ONE database (a file; in the `postgres` project one PostgreSQL database), debits
 * fired at one account through all of them at once.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, spawnServe, type Served } from '../helpers/cli.js';
import { callApi, type CallResult } from '../helpers/http.js';
import { openStore, seedStore, TEST_STORE } from '../helpers/store.js';
import { stop } from '../helpers/temp.js';
import { accountFixture, ROOT } from '../helpers/world.js';

const PROCESSES = 4;
const REQUESTS = 160;
const START = 100_037;
const DEBIT = 1_000; // floor(100037 / 1000) = 100 of the 160 succeed
const TOPUPS_PER_PROCESS = 10;

let dbFile: string;
let servers: Served[] = [];

beforeAll(async () => {
  if (!existsSync(CLI)) {
    // The CLI is built by `npm test`; build it here when this file runs alone.
    spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: ROOT });
  }
  dbFile = seedStore(
    accountFixture([
      { id: 500, currency: 'USD', amount: START },
      { id: 501, currency: 'EUR', amount: 0 },
    ]),
    'ledger.db',
  );
  // Instances on one PostgreSQL database share their secret through the environment.
  const env: Record<string, string> = TEST_STORE === 'postgres' ? { WORKSPACE_SECRET: 'ab'.repeat(32) } : {};
  // One after another: each opens the database and its secret before the next starts.
  for (let i = 0; i < PROCESSES; i++) {
    servers.push(await spawnServe(['--db', dbFile, '--rate-limit', '0'], env));
  }
}, 60_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => stop(s.proc)));
  servers = [];
});

/**
 * A call as a client of the API makes it. On PostgreSQL a transaction that kept colliding past
 * its retry budget answers 503 with Retry-After, having moved nothing: the client tries again,
 * as the API tells it to. On SQLite no call may answer 503.
 */
async function post(baseUrl: string, method: string, params: Record<string, unknown>): Promise<CallResult> {
  for (;;) {
    const r = await callApi(baseUrl, method, params);
    if (r.status !== 503 || TEST_STORE !== 'postgres') return r;
    await new Promise((resolve) => setTimeout(resolve, 1000 * Number(r.headers.get('retry-after'))));
  }
}

describe('withdrawFundsFromContactAccount across processes', () => {
  it('the balance never goes below zero, even under simultaneous requests from 4 processes on one database', async () => {
    const debits = Array.from({ length: REQUESTS }, (_, i) =>
      post(servers[i % PROCESSES]!.baseUrl, 'withdrawFundsFromContactAccount', {
        account_id: 500,
        amount: DEBIT,
        description: `debit ${i}`,
      }),
    );
    // Writes to another account of the same contact compete for the same write lock.
    const topUps = Array.from({ length: PROCESSES * TOPUPS_PER_PROCESS }, (_, i) =>
      post(servers[i % PROCESSES]!.baseUrl, 'addFundsToContactAccount', { account_id: 501, amount: 7, description: `top-up ${i}` }),
    );
    const [debitResults, topUpResults] = await Promise.all([Promise.all(debits), Promise.all(topUps)]);

    const expected = Math.floor(START / DEBIT);
    const ok = debitResults.filter((r) => r.status === 200);
    const refused = debitResults.filter((r) => r.status !== 200);
    expect(ok).toHaveLength(expected);
    expect(refused).toHaveLength(REQUESTS - expected);
    for (const r of refused) {
      expect(r.status).toBe(422);
      expect(r.body.code).toBe('insufficient_funds');
    }
    // Every success saw a distinct balance: the debits were serialized.
    const after = new Set(ok.map((r) => r.body.data!.amount));
    expect(after.size).toBe(expected);
    expect(Math.min(...after)).toBe(START - expected * DEBIT);
    expect(topUpResults.every((r) => r.status === 200)).toBe(true);
    for (const s of servers) expect(s.stderr()).not.toMatch(/unexpected error|SQLITE_BUSY/);

    const store = openStore(dbFile);
    try {
      const balances = new Map(store.contactAccounts.listByContact(100).map((a) => [a.id, a.amount]));
      expect([...balances.keys()]).toEqual([500, 501]);
      expect(balances.get(500)).toBe(START - expected * DEBIT);
      expect(balances.get(501)).toBe(PROCESSES * TOPUPS_PER_PROCESS * 7);
      for (const [id, amount] of balances) {
        const rows = store.admin.journal(id) as Array<{ amount: number; balance_after: number; operation: string }>;
        expect(
          rows.reduce((s, j) => s + j.amount, 0),
          `journal of ${id}`,
        ).toBe(amount);
        // The journal is one unbroken chain: each record starts where the previous one ended.
        let running = 0;
        for (const j of rows) {
          running += j.amount;
          expect(j.balance_after).toBe(running);
        }
      }
      expect((store.admin.journal(500) ?? []).filter((j) => j.operation === 'Debit via API')).toHaveLength(expected);
    } finally {
      store.close();
    }
  }, 60_000);
});

describe('addContactAccount across processes', () => {
  it('a contact has at most one account per currency, even when 4 processes open it at once', async () => {
    const results = await Promise.all(
      Array.from({ length: 4 * PROCESSES }, (_, i) =>
        post(servers[i % PROCESSES]!.baseUrl, 'addContactAccount', { contact_id: 100, currency: 'JPY' }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 201)) {
      expect(r.status).toBe(422);
      expect(r.body.code).toBe('currency_exists');
    }
    const list = await callApi(servers[0]!.baseUrl, 'getContactAccounts', { contact_id: 100 });
    const currencies = (list.body.data as Array<{ currency: string }>).map((a) => a.currency);
    expect(currencies).toEqual(['USD', 'EUR', 'JPY']);
  }, 60_000);
});
