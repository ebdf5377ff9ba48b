/**
 * The MCP server's state's tables on PostgreSQL, which have migrations of their own
 * (state/schema.ts, under `mcp_state_schema`) since the store's migrations 2, 4 and 5 stopped
 * making them: a new database gets them; a database the store made them in (the store's
 * migrations as they were, rebuilt here from the state's entries) opens with its rows, at every
 * version it may have been left at; a state of a newer version is refused (by `mcp` at its start,
 * in one line, exit status 2).
 */
import { describe, expect, it } from 'vitest';
import { PgStore } from '../../src/store/pg/index.js';
import { PgConnection } from '../../src/store/pg/connection.js';
import { migratePg, PgSchemaProblem, PG_MIGRATIONS } from '../../src/store/pg/migrations.js';
import { migratePgState, PgMcpState } from '../../src/state/pg/mcp-state.js';
import { PG_STATE_MIGRATIONS } from '../../src/state/schema.js';
import { cliEnv, runCliAsync } from '../helpers/cli.js';
import { usePostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/world.js';

const pg = usePostgres();

/** The store's migrations as they were before the state had its own: 2, 4 and 5 made its tables. */
const OLD_PG_MIGRATIONS = PG_MIGRATIONS.map((m, i) => {
  const made = (...state: number[]) => state.map((s) => PG_STATE_MIGRATIONS[s]!.replaceAll(' IF NOT EXISTS', '')).join('');
  return i === 1 ? made(0, 1) : i === 3 ? made(2) : i === 4 ? made(3) : m;
});

/** The MCP state's tables, their columns and indexes, as PostgreSQL describes them. */
function described(c: PgConnection): unknown[] {
  return c.query(
    `SELECT table_name, column_name, data_type, is_nullable, column_default, collation_name, is_identity
     FROM information_schema.columns WHERE table_schema = current_schema() AND table_name LIKE 'mcp\\_%' AND table_name <> 'mcp_audit'
     UNION ALL SELECT tablename, indexname, indexdef, NULL, NULL, NULL, NULL
     FROM pg_indexes WHERE schemaname = current_schema() AND tablename LIKE 'mcp\\_%' AND tablename <> 'mcp_audit'
     ORDER BY 1, 2`,
  ).rows;
}

const stateVersion = (c: PgConnection) => c.one<{ version: number }>('SELECT version FROM mcp_state_schema')?.version;

describe('the MCP state on PostgreSQL: its own migrations', () => {
  it('a new database gets the state with the store; opened again, nothing is made twice', async () => {
    const url = await pg.server().database();
    const store = pg.keep(PgStore.open(url));
    // The store's migrations alone make none of the state's tables now.
    expect(store.conn.one("SELECT count(*)::int AS n FROM pg_tables WHERE tablename LIKE 'mcp\\_%' AND tablename <> 'mcp_audit'")).toEqual({
      n: 0,
    });
    const state = new PgMcpState(store.conn);
    expect(stateVersion(store.conn)).toBe(PG_STATE_MIGRATIONS.length);
    expect(state.keys('s').reserve('k1', 'addFundsToContactAccount', 'h')).toBeUndefined();
    const before = described(store.conn);
    expect(before).not.toEqual([]);
    const again = pg.keep(PgStore.open(url));
    const reopened = new PgMcpState(again.conn);
    expect(stateVersion(again.conn)).toBe(PG_STATE_MIGRATIONS.length);
    expect(described(again.conn)).toEqual(before);
    expect(reopened.keys('s').reserve('k1', 'addFundsToContactAccount', 'h')).toEqual({
      method: 'addFundsToContactAccount',
      paramsHash: 'h',
    });
  });

  it('a database the store made the state in opens with its rows, from every version it may have stopped at, and ends as a new one', async () => {
    const fresh = pg.keep(new PgConnection(await pg.server().database()));
    migratePg(fresh);
    migratePgState(fresh);
    const made = described(fresh);
    for (const version of [1, 2, 3, 4, 5, 6]) {
      const url = await pg.server().database();
      const c = pg.keep(new PgConnection(url));
      migratePg(c, OLD_PG_MIGRATIONS.slice(0, version));
      // Version 1 had none of the state's tables: they are made new.
      if (version >= 2)
        c.exec(
          `INSERT INTO mcp_idempotency_keys (scope, key, method, params_hash, status, body, created_at)
         VALUES ('s', 'k1', 'addFundsToContactAccount', 'h', 200, '{"data":{"amount":5}}', '2026-01-01T00:00:00.000Z');
         INSERT INTO mcp_money_moves (scope, account_id, amount, at_ms) VALUES ('s', 501, 40, ${Date.now()})`,
        );
      const store = pg.keep(PgStore.open(url));
      const state = new PgMcpState(store.conn);
      expect(stateVersion(store.conn), `from version ${version}`).toBe(PG_STATE_MIGRATIONS.length);
      expect(described(store.conn), `from version ${version}`).toEqual(made);
      const kept = state.keys('s').reserve('k1', 'addFundsToContactAccount', 'h');
      const window = state.moves('s').reserve(501, 20, { daily: 50 }, false);
      if (version >= 2) {
        expect(kept).toEqual({
          method: 'addFundsToContactAccount',
          paramsHash: 'h',
          answer: { status: 200, body: { data: { amount: 5 } } },
        });
        expect(window).toEqual({ ok: false, over: 'daily', used: 40 });
      } else {
        expect(kept).toBeUndefined();
        expect(window).toMatchObject({ ok: true });
      }
      expect(state.plans('s').get('none')).toBeUndefined();
      expect(state.oauth().grants()).toEqual([]);
    }
  });

  it('a state of a newer version is refused, and left as it was', async () => {
    const store = pg.keep(PgStore.open(await pg.server().database()));
    new PgMcpState(store.conn);
    store.conn.query('UPDATE mcp_state_schema SET version = version + 1');
    expect(() => new PgMcpState(store.conn)).toThrow(PgSchemaProblem);
    expect(() => migratePgState(store.conn)).toThrow(/newer version/);
    expect(stateVersion(store.conn)).toBe(PG_STATE_MIGRATIONS.length + 1);
  });

  it('mcp refuses to start on a database whose state is newer, in one line', async () => {
    const url = await pg.server().database();
    const store = PgStore.open(url);
    new PgMcpState(store.conn);
    store.conn.query('UPDATE mcp_state_schema SET version = version + 1');
    store.close();
    const home = tempDir();
    const r = await runCliAsync(
      ['mcp', '--http', '--port', '0', '--auth', 'key', '--db', url],
      cliEnv({ HOME: home, WORKSPACE_DATA_DIR: home, WORKSPACE_SECRET: 'ab'.repeat(32) }),
    );
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toBe(
      `workspace-mcp: the MCP server's state in the PostgreSQL database cannot be opened: made by a newer version (state schema ${PG_STATE_MIGRATIONS.length + 1}, this one knows ${PG_STATE_MIGRATIONS.length})\n`,
    );
  });
});
