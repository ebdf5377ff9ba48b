/**
 * The MCP server's own state on PostgreSQL (state/pg/mcp-state.ts), shared by every instance
 * on the database: claims of one idempotency key and reservations in the money window, made at
 * once from several threads, each with its own connection (as instances are), stay atomic:
 * one claim wins a key; a daily cap of 50 lets exactly 50 units through, never more.
 */
import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PgStore } from '../../src/store/pg/index.js';
import { PgMcpState } from '../../src/state/pg/mcp-state.js';
import { usePostgres } from '../helpers/postgres.js';
import { ROOT } from '../helpers/world.js';

const pg = usePostgres();
const dist = (p: string) => pathToFileURL(join(ROOT, 'dist', p)).href;

/** `n` threads, each with its own connection, each running `body` (JavaScript, given `keys` and `moves` of scope "race"); their results. */
function race<T>(url: string, n: number, body: string): Promise<T[]> {
  const code = `
    (async () => {
      const { workerData, parentPort } = await import('node:worker_threads');
      const { PgConnection } = await import(workerData.conn);
      const { PgMcpState } = await import(workerData.state);
      const c = new PgConnection(workerData.url);
      const state = new PgMcpState(c);
      const keys = state.keys('race');
      const moves = state.moves('race');
      try {
        parentPort.postMessage(await (async () => { ${body} })());
      } finally {
        c.close();
      }
    })();`;
  return Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<T>((resolve, reject) => {
          const w = new Worker(code, {
            eval: true,
            workerData: { url, conn: dist('store/pg/connection.js'), state: dist('state/pg/mcp-state.js') },
          });
          w.once('message', resolve);
          w.once('error', reject);
        }),
    ),
  );
}

describe('the MCP state on PostgreSQL, from several connections at once', () => {
  it('one claim of an idempotency key wins; the others see it, then its answer', async () => {
    const url = await pg.server().database();
    const store = pg.keep(PgStore.open(url));
    const claims = await race<boolean>(url, 4, `return keys.reserve('k1', 'addFundsToContactAccount', 'h') === undefined;`);
    expect(claims.filter(Boolean)).toHaveLength(1);
    const keys = new PgMcpState(store.conn).keys('race');
    expect(keys.reserve('k1', 'addFundsToContactAccount', 'h')).toEqual({ method: 'addFundsToContactAccount', paramsHash: 'h' });
    keys.complete('k1', { status: 200, body: { data: { amount: 5 } } });
    expect(keys.reserve('k1', 'addFundsToContactAccount', 'h')).toEqual({
      method: 'addFundsToContactAccount',
      paramsHash: 'h',
      answer: { status: 200, body: { data: { amount: 5 } } },
    });
    // Another scope (another owner) does not see it.
    expect(new PgMcpState(store.conn).keys('other').reserve('k1', 'addFundsToContactAccount', 'h')).toBeUndefined();
  });

  it('reservations against a daily cap never pass it together; a released one frees its room', async () => {
    const url = await pg.server().database();
    const store = pg.keep(PgStore.open(url));
    // 4 threads try 25 reservations of 1 each against a cap of 50.
    const granted = await race<number>(
      url,
      4,
      `let ok = 0; for (let i = 0; i < 25; i++) if (moves.reserve(7, 1, { daily: 50 }, false).ok) ok++; return ok;`,
    );
    expect(granted.reduce((a, b) => a + b, 0)).toBe(50);
    const moves = new PgMcpState(store.conn).moves('race');
    expect(moves.reserve(7, 1, { daily: 50 }, false)).toEqual({ ok: false, over: 'daily', used: 50 });
    expect(moves.reserve(7, 9, { perCall: 5 }, false)).toEqual({ ok: false, over: 'amount', used: 50 });
    // Forced (a confirmed move): counted whatever the caps say; given back, its room is free again.
    const forced = moves.reserve(7, 10, { daily: 50 }, true);
    expect(forced.ok).toBe(true);
    moves.release((forced as { id: number }).id);
    expect(store.conn.one('SELECT sum(amount)::bigint AS s FROM mcp_money_moves')).toEqual({ s: 50 });
    // Another account's window is its own.
    expect(moves.reserve(8, 50, { daily: 50 }, false).ok).toBe(true);
  });
});
