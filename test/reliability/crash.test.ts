/**
 * Crash: a storm of top-ups and debits against two server processes on one database file,
 * `kill -9` of both in the middle, restart. Every acknowledged operation is there, no journal
 * record lacks its balance change, and each account's journal sums to its balance.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { spawnServe } from '../helpers/cli.js';
import { callApi } from '../helpers/http.js';
import { stop } from '../helpers/temp.js';
import { accountFixture, seedDb } from '../helpers/world.js';

const ACCOUNTS = [501, 502, 503];

describe('crash in the middle of a money storm', () => {
  it('keeps every acknowledged move and a journal that sums to each balance', async () => {
    const db = seedDb(accountFixture(ACCOUNTS.map((id, i) => ({ id, currency: ['USD', 'EUR', 'JPY'][i]!, amount: 5000 }))), 'crash.db');

    const servers = await Promise.all([spawnServe(['--db', db, '--rate-limit', '0']), spawnServe(['--db', db, '--rate-limit', '0'])]);
    const acked: string[] = [];
    // The kill comes once this many moves are acknowledged, with the workers still sending.
    const KILL_AFTER = 60;
    let reached: () => void;
    const enough = new Promise<void>((r) => (reached = r));
    let n = 0;
    let stopped = false;
    const worker = async (w: number) => {
      while (!stopped) {
        const id = `op-${w}-${n++}`;
        const server = servers[n % 2]!;
        const withdraw = n % 3 === 0;
        try {
          const method = withdraw ? 'withdrawFundsFromContactAccount' : 'addFundsToContactAccount';
          const res = await callApi(server.baseUrl, method, { account_id: ACCOUNTS[n % 3], amount: 1 + (n % 7), description: id });
          if (res.status === 200 && acked.push(id) === KILL_AFTER) reached();
        } catch {
          // The server died under this request: not acknowledged, may or may not be written.
        }
      }
    };
    const storm = Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)));
    await enough;
    await Promise.all(servers.map((s) => new Promise((r) => s.proc.once('exit', r).kill('SIGKILL'))));
    stopped = true;
    await storm;
    expect(acked.length).toBeGreaterThanOrEqual(KILL_AFTER);

    // Restart on the same file: it opens and answers.
    const again = await spawnServe(['--db', db, '--rate-limit', '0']);
    try {
      const res = await callApi(again.baseUrl, 'getContactAccounts', { contact_id: 100 });
      const accounts = res.body.data as { id: number; amount: number }[];
      const conn = new Database(db, { readonly: true });
      const journal = conn
        .prepare('SELECT account_id, operation, amount, description, balance_after FROM account_journal ORDER BY id')
        .all() as {
        account_id: number;
        operation: string;
        amount: number;
        description: string;
        balance_after: number;
      }[];
      conn.close();
      const described = new Set(journal.map((j) => j.description));
      for (const id of acked) expect(described.has(id), `acknowledged ${id} is in the journal`).toBe(true);
      for (const a of accounts) {
        const rows = journal.filter((j) => j.account_id === a.id);
        // Debits are journaled as negative amounts.
        const sum = rows.reduce((s, j) => s + j.amount, 0);
        expect(sum, `journal of ${a.id} sums to its balance`).toBe(a.amount);
        expect(rows.at(-1)!.balance_after).toBe(a.amount);
      }
    } finally {
      await stop(again.proc);
    }
  });
});
