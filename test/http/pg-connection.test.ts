/**
 * A connection dropped mid-request, end to end through the built CLI on a real PostgreSQL:
 * "a dropped connection mid-request is a 503 with Retry-After, never a half-applied change;
 * the instance reconnects". The request is caught part-way through its transaction (its first
 * write made, the next waiting on a lock another session holds), its database session is ended
 * as a restart or a failover would end it, and then: `serve` answers 503 with Retry-After and
 * the MCP server (`mcp --http`) a tool error of status 503 (a money call on a service thread, a
 * search on the server's own connection alike); nothing of the change is in the database; the
 * same instance answers the next request on a new connection.
 */
import pgClient from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, runCliAsync, spawnAnnounced, spawnServe, type Announced } from '../helpers/cli.js';
import { usePostgres } from '../helpers/postgres.js';
import { stop } from '../helpers/temp.js';
import { DEMO_FIXTURE } from '../helpers/world.js';
import { connectHttp, type McpClient } from '../mcp/clients.js';
import { firstJson } from '../mcp/harness.js';

const pg = usePostgres();
/** One service thread: the connection dropped is the one the next request must connect again. */
const ENV = { WORKSPACE_SECRET: 'ef'.repeat(32), WORKSPACE_PG_POOL: '1' };

const running: Announced[] = [];
const clients: McpClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  await Promise.all(running.splice(0).map((r) => stop(r.proc)));
});

/** A seeded database of its own: its URL and name. */
async function seeded(): Promise<{ url: string; db: string }> {
  const url = await pg.server().database();
  const r = await runCliAsync(['seed', DEMO_FIXTURE, '--db', url], cliEnv());
  expect(r.status, r.stderr).toBe(0);
  return { url, db: url.split('/').pop()! };
}

const rows = async (db: string, sql: string) => (await pg.server().admin(sql, db)).rows;

/**
 * Hold `table` against writes (EXCLUSIVE: reads go on; ACCESS EXCLUSIVE: reads too) while
 * `request` runs; once the request's session waits on it, check that the session has already
 * written `written` in its open transaction, end that session, and let the table go. What the
 * request answered.
 */
async function dropMidRequest<T>(
  url: string,
  db: string,
  table: string,
  written: string | undefined,
  request: () => Promise<T>,
  mode = 'EXCLUSIVE',
): Promise<T> {
  const locker = new pgClient.Client({ connectionString: url });
  await locker.connect();
  try {
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE ${table} IN ${mode} MODE`);
    const self = (await locker.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
    const answered = request();
    let pid: number | undefined;
    for (let i = 0; i < 200 && pid === undefined; i++) {
      const waiting = await rows(
        db,
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%${table}%' AND pid <> ${self}`,
      );
      pid = waiting[0]?.pid;
      if (pid === undefined) await new Promise((r) => setTimeout(r, 50));
    }
    expect(pid, `no request came to wait on ${table}`).toBeDefined();
    if (written !== undefined) {
      // Half-way: the session holds a write lock on `written`, taken by its transaction's first write.
      const held = await rows(
        db,
        `SELECT 1 FROM pg_locks WHERE pid = ${pid} AND relation = '${written}'::regclass AND mode = 'RowExclusiveLock' AND granted`,
      );
      expect(held).toHaveLength(1);
    }
    await rows(db, `SELECT pg_terminate_backend(${pid}, 5000)`);
    await locker.query('ROLLBACK');
    return await answered;
  } finally {
    await locker.end();
  }
}

describe('a PostgreSQL connection dropped mid-request', () => {
  it('serve answers 503 with Retry-After, writes nothing of the request, and serves the next one on a new connection', async () => {
    const { url, db } = await seeded();
    const s = await spawnServe(['--db', url], ENV);
    running.push(s);
    const create = async () => {
      const res = await fetch(`${s.baseUrl}/createOrUpdateContact`, {
        method: 'POST',
        headers: { Accept: 'application/json', 'Content-Type': 'application/json', Authorization: 'Bearer demo-dana-key' },
        body: JSON.stringify({ bot_id: 11, messenger: 'telegram', telegram_id: '5550001', name: 'Half Applied' }),
      });
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as any };
    };
    const before = await rows(db, 'SELECT count(*)::int AS n FROM contacts');
    // The contact's row is written first, then its search index: the index is held.
    const lost = await dropMidRequest(url, db, 'contact_search_keys', 'contacts', create);
    expect(lost).toEqual({ status: 503, retryAfter: '1', body: { message: 'Service Unavailable' } });
    expect(await rows(db, 'SELECT count(*)::int AS n FROM contacts')).toEqual(before);
    expect(await rows(db, "SELECT id FROM contacts WHERE telegram_id = '5550001'")).toEqual([]);

    const again = await create();
    expect(again.status, JSON.stringify(again.body)).toBeLessThan(300);
    expect(again.body.data).toMatchObject({ name: 'Half Applied', telegram_id: '5550001' });
    expect(await rows(db, "SELECT key FROM contact_search_keys WHERE key = 'i:5550001'")).toHaveLength(1);
  });

  it('mcp --http answers a money call with a 503 tool error, moves nothing, and moves the next call on a new connection; a search cut off answers 503 too', async () => {
    const { url, db } = await seeded();
    const m = await spawnAnnounced(
      ['mcp', '--http', '--port', '0', '--db', url],
      /(http:\/\/\S+\/mcp)/,
      cliEnv({ ...ENV, WORKSPACE_API_KEY: 'demo-dana-key' }),
    );
    running.push(m);
    const c = await connectHttp('2026-07-28', m.url);
    clients.push(c);
    const ledger = async () =>
      (
        await rows(
          db,
          'SELECT (SELECT amount FROM contact_accounts WHERE id = 501)::int AS amount, (SELECT count(*) FROM account_journal WHERE account_id = 501)::int AS entries',
        )
      )[0];
    const deposit = (key: string) =>
      c.callTool({
        name: 'addFundsToContactAccount',
        arguments: { account_id: 501, amount: 100, description: 'Mid-request', idempotency_key: key },
      });
    const before = await ledger();
    // The move is made, then its audit line in the same transaction: the audit trail is held.
    const lost = await dropMidRequest(url, db, 'mcp_audit', 'contact_accounts', () => deposit('drop-1'));
    expect(lost.isError).toBe(true);
    expect(firstJson(lost)).toEqual({
      status: 503,
      message: 'Service Unavailable',
      warnings: ['Service unavailable: addFundsToContactAccount was not carried out; retry in 1 s.'],
    });
    expect(await ledger()).toEqual(before);
    // The audit trail records the call as it ended (its line in the lost transaction went with it).
    expect(
      await rows(db, "SELECT entry::json->>'status' AS status FROM mcp_audit WHERE entry::json->>'idempotency_key' = 'drop-1'"),
    ).toEqual([{ status: '503' }]);

    const moved = await deposit('drop-2');
    expect(moved.isError, JSON.stringify(moved.content)).toBeFalsy();
    expect(await ledger()).toEqual({ amount: before.amount + 100, entries: before.entries + 1 });

    // findContacts reads on the server's own connection (not a service thread's): the same 503
    // (not a 500, which would say a bug), and the next search connects again.
    const find = () => c.callTool({ name: 'findContacts', arguments: { query: 'Anna Smith' } });
    const cut = await dropMidRequest(url, db, 'contact_terms', undefined, find, 'ACCESS EXCLUSIVE');
    expect(cut.isError).toBe(true);
    expect(firstJson(cut)).toEqual({
      status: 503,
      message: 'Service Unavailable',
      warnings: ['Service unavailable: findContacts was not carried out; retry in 1 s.'],
    });
    const found = await find();
    expect(found.isError, JSON.stringify(found.content)).toBeFalsy();
    expect((found.structuredContent as any).data[0]).toMatchObject({ id: 1001, name: 'Anna Smith' });
  });
});
