/**
 * A connection lost during COMMIT itself, end to end through the built CLI on a real PostgreSQL
 * behind a proxy that cuts the connection there (test/helpers/pg-proxy.ts). "A dropped
 * connection mid-request is a 503 with Retry-After, never a half-applied change": and never a
 * 503 for a change that was made, which a client would send again (a debit moved twice). The
 * store asks on a new connection whether the transaction committed: committed, the request
 * answers what it would have (200, the account as moved); not committed, the 503; not known,
 * a 503 that says so and to read back first.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, runCliAsync, spawnAnnounced, spawnServe, type Announced } from '../helpers/cli.js';
import { startPgProxy, type PgProxy } from '../helpers/pg-proxy.js';
import { usePostgres } from '../helpers/postgres.js';
import { stop } from '../helpers/temp.js';
import { DEMO_FIXTURE } from '../helpers/world.js';
import { connectHttp, type McpClient } from '../mcp/clients.js';
import { firstJson } from '../mcp/harness.js';

const pg = usePostgres();
/** One service thread: the connection cut is the one the next request must connect again. */
const ENV = { WORKSPACE_SECRET: 'ef'.repeat(32), WORKSPACE_PG_POOL: '1' };
/** Dana's empty EUR account in the demo fixture: every change to it is in the journal. */
const ACCOUNT = 502;
/** Text of the move's own statement, so that only its transaction's COMMIT is cut. */
const MOVE = 'account_journal';

const running: Announced[] = [];
const clients: McpClient[] = [];
const proxies: PgProxy[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  await Promise.all(running.splice(0).map((r) => stop(r.proc)));
  for (const p of proxies.splice(0)) await p.close();
});

/** A seeded database of its own, and a proxy in front of it: the database's name and the URL through the proxy. */
async function seededBehindProxy(): Promise<{ db: string; url: string; proxy: PgProxy }> {
  const direct = await pg.server().database();
  const r = await runCliAsync(['seed', DEMO_FIXTURE, '--db', direct], cliEnv());
  expect(r.status, r.stderr).toBe(0);
  const proxy = await startPgProxy(Number(new URL(direct).port));
  proxies.push(proxy);
  return { db: direct.split('/').pop()!, url: proxy.url(direct), proxy };
}

const rows = async (db: string, sql: string) => (await pg.server().admin(sql, db)).rows;

/** The account's balance, its journal's entries and their sum. */
const ledger = async (db: string) =>
  (
    await rows(
      db,
      `SELECT (SELECT amount FROM contact_accounts WHERE id = ${ACCOUNT})::int AS balance,
              (SELECT count(*) FROM account_journal WHERE account_id = ${ACCOUNT})::int AS entries,
              (SELECT coalesce(sum(amount), 0) FROM account_journal WHERE account_id = ${ACCOUNT})::int AS sum`,
    )
  )[0];

async function post(baseUrl: string, method: string, body: object) {
  const res = await fetch(`${baseUrl}/${method}`, {
    method: 'POST',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json', Authorization: 'Bearer demo-dana-key' },
    body: JSON.stringify(body),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as any };
}

/** `serve` through the proxy, the account topped up to 1000 (one journal entry). */
async function served() {
  const { db, url, proxy } = await seededBehindProxy();
  const s = await spawnServe(['--db', url], ENV);
  running.push(s);
  const debit = (amount: number) =>
    post(s.baseUrl, 'withdrawFundsFromContactAccount', { account_id: ACCOUNT, amount, description: 'Cut at COMMIT' });
  const deposit = await post(s.baseUrl, 'addFundsToContactAccount', { account_id: ACCOUNT, amount: 1000, description: 'Opening' });
  expect(deposit.status, JSON.stringify(deposit.body)).toBe(200);
  expect(await ledger(db)).toEqual({ balance: 1000, entries: 1, sum: 1000 });
  return { db, proxy, debit };
}

describe('a PostgreSQL connection lost during COMMIT', () => {
  it('a debit that committed answers 200 with the account as moved, once, and the next request runs on a new connection', async () => {
    const { db, proxy, debit } = await served();
    const before = proxy.connections();
    const lost = await proxy.cut({ mode: 'answer-lost', after: MOVE }, () => debit(300));
    expect(lost.status, JSON.stringify(lost.body)).toBe(200);
    expect(lost.body.data).toMatchObject({ id: ACCOUNT, amount: 700, currency: 'EUR' });
    expect(await ledger(db)).toEqual({ balance: 700, entries: 2, sum: 700 });
    // The question went on a new connection, and the next request runs on it.
    expect(proxy.connections()).toBeGreaterThan(before);
    const next = await debit(200);
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(next.body.data.amount).toBe(500);
    expect(await ledger(db)).toEqual({ balance: 500, entries: 3, sum: 500 });
  });

  it('a debit whose COMMIT never reached the server answers 503 with Retry-After and moves nothing', async () => {
    const { db, proxy, debit } = await served();
    const lost = await proxy.cut({ mode: 'before-commit', after: MOVE }, () => debit(300));
    expect(lost).toEqual({ status: 503, retryAfter: '1', body: { message: 'Service Unavailable' } });
    expect(await ledger(db)).toEqual({ balance: 1000, entries: 1, sum: 1000 });
    const again = await debit(300);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(await ledger(db)).toEqual({ balance: 700, entries: 2, sum: 700 });
  });

  it('when whether it committed cannot be learnt, a 503 with Retry-After that says the outcome is unknown and to read back first', async () => {
    const { db, proxy, debit } = await served();
    // The COMMIT reaches the server, and then no new connection can be made to ask.
    const lost = await proxy.cut({ mode: 'answer-lost', after: MOVE, refuseAfter: true }, () => debit(300));
    expect(lost.status).toBe(503);
    expect(lost.retryAfter).toBe('1');
    expect(lost.body).toEqual({
      message: expect.stringMatching(/money may or may not have moved\. Check with getContactAccounts/),
      error: lost.body.message,
      code: 'outcome_unknown',
    });
    // It was made: the answer was right not to say "nothing changed".
    expect(await ledger(db)).toEqual({ balance: 700, entries: 2, sum: 700 });
    proxy.accept();
    const next = await debit(100);
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(await ledger(db)).toEqual({ balance: 600, entries: 3, sum: 600 });
  });

  it('a transaction the server still holds open after a moment (its client gone unseen) is not called rolled back: the outcome is unknown', async () => {
    const { db, proxy, debit } = await served();
    const lost = await proxy.cut({ mode: 'stalled', after: MOVE }, () => debit(300));
    expect(lost.status).toBe(503);
    expect(lost.retryAfter).toBe('1');
    expect(lost.body.code).toBe('outcome_unknown');
    // The server rolls it back once it sees the connection closed; the account is free again.
    proxy.release();
    expect(await ledger(db)).toEqual({ balance: 1000, entries: 1, sum: 1000 });
    const next = await debit(300);
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(await ledger(db)).toEqual({ balance: 700, entries: 2, sum: 700 });
  });

  it('any other writing transaction too (its id asked before COMMIT): a contact created whose COMMIT answer is lost answers 201 and exists once', async () => {
    const { db, url, proxy } = await seededBehindProxy();
    const s = await spawnServe(['--db', url], ENV);
    running.push(s);
    const created = await proxy.cut({ mode: 'answer-lost', after: 'contact_search_keys' }, () =>
      post(s.baseUrl, 'createOrUpdateContact', { bot_id: 11, messenger: 'telegram', telegram_id: '5550002', name: 'Cut At Commit' }),
    );
    expect(created.status, JSON.stringify(created.body)).toBeLessThan(300);
    expect(created.body.data).toMatchObject({ name: 'Cut At Commit', telegram_id: '5550002' });
    expect(await rows(db, "SELECT name FROM contacts WHERE telegram_id = '5550002'")).toEqual([{ name: 'Cut At Commit' }]);
  });

  it('mcp --http: a money call whose COMMIT answer is lost succeeds once, its audit line with it', async () => {
    const { db, url, proxy } = await seededBehindProxy();
    const m = await spawnAnnounced(
      ['mcp', '--http', '--port', '0', '--db', url],
      /(http:\/\/\S+\/mcp)/,
      cliEnv({ ...ENV, WORKSPACE_API_KEY: 'demo-dana-key' }),
    );
    running.push(m);
    const c = await connectHttp('2026-07-28', m.url);
    clients.push(c);
    const deposit = (key: string) =>
      c.callTool({
        name: 'addFundsToContactAccount',
        arguments: { account_id: ACCOUNT, amount: 400, description: 'Cut at COMMIT', idempotency_key: key },
      });
    const moved = await proxy.cut({ mode: 'answer-lost', after: MOVE }, () => deposit('cut-1'));
    expect(moved.isError, JSON.stringify(moved.content)).toBeFalsy();
    expect(firstJson(moved)).toMatchObject({ data: { id: ACCOUNT, amount: 400 } });
    expect(await ledger(db)).toEqual({ balance: 400, entries: 1, sum: 400 });
    // The audit line was in the same transaction: committed with it, as the call ended.
    expect(
      await rows(db, "SELECT entry::json->>'status' AS status FROM mcp_audit WHERE entry::json->>'idempotency_key' = 'cut-1'"),
    ).toEqual([{ status: '200' }]);
    // The same key again replays the kept answer: nothing moves twice.
    const again = await deposit('cut-1');
    expect(again.isError, JSON.stringify(again.content)).toBeFalsy();
    expect(await ledger(db)).toEqual({ balance: 400, entries: 1, sum: 400 });

    // When the outcome cannot be learnt, the tool error says so, and how to check.
    const lost = await proxy.cut({ mode: 'answer-lost', after: MOVE, refuseAfter: true }, () => deposit('cut-2'));
    proxy.accept();
    expect(lost.isError).toBe(true);
    expect(firstJson(lost)).toMatchObject({
      status: 503,
      code: 'outcome_unknown',
      message: expect.stringMatching(/money may or may not have moved\. Check with getContactAccounts/),
    });
    expect(await ledger(db)).toEqual({ balance: 800, entries: 2, sum: 800 });
  });
});
