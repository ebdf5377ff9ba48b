/**
 * Two `serve` processes (the built CLI) on one PostgreSQL database, as behind a load balancer:
 * concurrent debits and deposits through both end exact (never below zero, the journal sums to
 * the balance, no move refused for anything but funds); "Rate limiting: 120 requests per minute" per owner is one window across both, so
 * 121 requests spread over them get exactly one 429; a key rotated (admin) is refused by both
 * at once; a method deprecated (admin) is announced by both at once, and past its "Sunset"
 * refused by both (410). And what one instance writes the other reads.
 */
import { describe, expect, it } from 'vitest';
import { runCliAsync, spawnServe, type Served } from '../helpers/cli.js';
import { usePostgres } from '../helpers/postgres.js';
import { DEMO_FIXTURE } from '../helpers/world.js';
import { cliEnv } from '../helpers/cli.js';

const pg = usePostgres();
const SECRET = { WORKSPACE_SECRET: 'ab'.repeat(32) };

async function call(s: Served, method: string, key: string, body?: object): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${s.baseUrl}/${method}`, {
    method: body ? 'POST' : 'GET',
    headers: { Accept: 'application/json', Authorization: `Bearer ${key}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

describe('two serve instances on one PostgreSQL database', () => {
  it('share the ledger, the rate window, the keys and deprecations', async () => {
    const url = await pg.server().database();
    // As docs/hosting.md starts them: seed, then both at once, from DATABASE_URL (a, --db).
    const seeded = await runCliAsync(['seed', DEMO_FIXTURE], cliEnv({ DATABASE_URL: url }));
    expect(seeded.status, seeded.stderr).toBe(0);
    const [a, b] = await Promise.all([spawnServe(['--db', url], SECRET), spawnServe([], { ...SECRET, DATABASE_URL: url })]);
    const both = [a, b];

    // 80 debits of 2000 at once, half through each: 75 fit in 150000, the rest are refused.
    // Each queues on the account's row lock (no serialisation failure, no 503 to retry); at
    // the same time account 501 takes 12 deposits of 100 and 12 debits of 300 mixed (Dana's
    // requests in this test stay under the 120 a minute).
    const debit = (i: number) =>
      call(both[i % 2]!, 'withdrawFundsFromContactAccount', 'demo-dana-key', { account_id: 504, amount: 2000, description: `race ${i}` });
    const mixed = (i: number) =>
      i % 2 === 0
        ? call(both[(i >> 1) % 2]!, 'addFundsToContactAccount', 'demo-dana-key', { account_id: 501, amount: 100, description: `in ${i}` })
        : call(both[(i >> 1) % 2]!, 'withdrawFundsFromContactAccount', 'demo-dana-key', {
            account_id: 501,
            amount: 300,
            description: `out ${i}`,
          });
    const [debits, moves] = await Promise.all([
      Promise.all(Array.from({ length: 80 }, (_, i) => debit(i))),
      Promise.all(Array.from({ length: 24 }, (_, i) => mixed(i))),
    ]);
    const statuses = debits.map((d) => d.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(75);
    expect(debits.filter((d) => d.status !== 200).map((d) => d.body.code)).toEqual(Array(5).fill('insufficient_funds'));
    const after = await call(b, 'getContactAccounts', 'demo-dana-key', { contact_id: 1006 });
    expect(after.body.data.find((x: { id: number }) => x.id === 504).amount).toBe(0);
    const sums = await pg
      .server()
      .admin('SELECT sum(amount)::bigint AS s, count(*)::int AS n FROM account_journal WHERE account_id = 504', url.split('/').pop());
    expect(sums.rows[0]).toEqual({ s: '0', n: 76 });
    // Every deposit lands; a debit lands or is refused for funds, and the balance is what landed.
    expect(moves.filter((m, i) => i % 2 === 0 && m.status !== 200)).toEqual([]);
    const refused = moves.filter((m, i) => i % 2 === 1 && m.status !== 200);
    for (const r of refused) expect([r.status, r.body.code]).toEqual([422, 'insufficient_funds']);
    const usd = (await call(a, 'getContactAccounts', 'demo-dana-key', { contact_id: 1001 })).body.data.find(
      (x: { id: number }) => x.id === 501,
    );
    expect(usd.amount).toBe(2500 + 12 * 100 - (12 - refused.length) * 300);
    // "journal sum = balance" for every account right after, and none below zero.
    const ledger = await pg.server().admin(
      `SELECT a.id, a.amount, (SELECT coalesce(sum(j.amount), 0) FROM account_journal j WHERE j.account_id = a.id)::bigint AS journal
       FROM contact_accounts a WHERE a.amount < 0 OR a.amount <> (SELECT coalesce(sum(j.amount), 0) FROM account_journal j WHERE j.account_id = a.id)`,
      url.split('/').pop(),
    );
    expect(ledger.rows).toEqual([]);

    // One window for Oleg across both instances: 120 answered, the 121st refused.
    const gets = await Promise.all(Array.from({ length: 121 }, (_, i) => call(both[i % 2]!, 'getMe', 'demo-oleg-key')));
    expect(gets.filter((g) => g.status === 429)).toHaveLength(1);
    expect(gets.filter((g) => g.status === 200)).toHaveLength(120);
    expect(gets.find((g) => g.status === 429)!.headers.get('retry-after')).toMatch(/^\d+$/);

    // A key rotated is refused by both at once; the new one works on both.
    for (const s of both) expect((await call(s, 'getBalance', 'demo-dana-key')).status).toBe(200);
    const rotated = await runCliAsync(['admin', 'regenerate-key', '--owner', '1', '--db', url], cliEnv());
    expect(rotated.status, rotated.stderr).toBe(0);
    const key = rotated.stdout.trim();
    for (const s of both) {
      expect((await call(s, 'getBalance', 'demo-dana-key')).status).toBe(401);
      expect((await call(s, 'getBalance', key)).status).toBe(200);
    }

    // A deprecation set with admin is announced by both at once; past its sunset, both refuse the method.
    const deprecate = async (sunset: string) => {
      const r = await runCliAsync(['admin', 'deprecate', '--method', 'getBalance', '--sunset', sunset, '--db', url], cliEnv());
      expect(r.status, r.stderr).toBe(0);
    };
    await deprecate('2030-01-01T00:00:00Z');
    for (const s of both) {
      const r = await call(s, 'getBalance', key);
      expect([r.status, r.headers.get('deprecation'), r.headers.get('sunset')]).toEqual([200, 'true', 'Tue, 01 Jan 2030 00:00:00 GMT']);
    }
    await deprecate('2020-01-01T00:00:00Z');
    for (const s of both) {
      const r = await call(s, 'getBalance', key);
      expect([r.status, r.body.code]).toEqual([410, 'method_removed']);
    }

    // What one writes, the other reads: a contact made through a, found through b.
    const made = await call(a, 'createOrUpdateContact', key, {
      bot_id: 11,
      messenger: 'telegram',
      telegram_id: '987654',
      name: 'Through A',
    });
    expect(made.status, JSON.stringify(made.body)).toBeLessThan(300);
    const count = async (s: Served) => (await call(s, 'getNumberOfContacts', key, { bot_id: 11 })).body;
    expect(await count(b)).toEqual(await count(a));
  });

  it('refuses to start without WORKSPACE_SECRET, which every instance must share', async () => {
    const url = await pg.server().database();
    const r = await runCliAsync(['serve', '--db', url, '--port', '0'], cliEnv());
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^workspace-mcp: a PostgreSQL database needs WORKSPACE_SECRET/);
    expect(r.stderr).not.toMatch(/test-password/);
  });
});
