/**
 * The synchronous PostgreSQL connection under the PostgreSQL store, on a real throwaway
 * server: answers, all-or-nothing transactions, a serialisation failure run again, and a lost
 * connection or a timed-out statement reported as unavailable (never half-applied), after which
 * the connection comes back by itself.
 */
import { describe, expect, it } from 'vitest';
import { PgConnection, PgError, StoreUnavailable } from '../../src/store/pg/connection.js';
import { usePostgres } from '../helpers/postgres.js';

const pg = usePostgres();

async function connect(opts?: ConstructorParameters<typeof PgConnection>[1]): Promise<PgConnection> {
  const c = pg.keep(new PgConnection(await pg.server().database(), opts));
  c.exec('CREATE TABLE t (id integer PRIMARY KEY, n bigint NOT NULL)');
  return c;
}

const pid = (c: PgConnection) => c.one<{ pid: number }>('SELECT pg_backend_pid() AS pid')!.pid;

describe('PgConnection', () => {
  it('answers synchronously, 64-bit integers as numbers, SQL errors with their SQLSTATE', async () => {
    const c = await connect();
    expect(c.query('INSERT INTO t VALUES ($1, $2), ($3, $4)', [1, 10, 2, 20]).rowCount).toBe(2);
    expect(c.one('SELECT count(*) AS n, sum(n)::bigint AS s FROM t')).toEqual({ n: 2, s: 30 });
    expect(c.query('SELECT id, n FROM t ORDER BY id', [], { array: true }).rows).toEqual([
      [1, 10],
      [2, 20],
    ]);
    let err: unknown;
    try {
      c.query('INSERT INTO t VALUES (1, 0)');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PgError);
    expect((err as PgError).code).toBe('23505');
  });

  it('a transaction is written whole or not at all; a nested one is a savepoint', async () => {
    const c = await connect();
    expect(() =>
      c.tx(() => {
        c.query('INSERT INTO t VALUES (1, 1)');
        throw new Error('handler failed');
      }),
    ).toThrow('handler failed');
    expect(c.one('SELECT count(*) AS n FROM t')).toEqual({ n: 0 });
    c.tx(() => {
      c.query('INSERT INTO t VALUES (1, 1)');
      expect(() =>
        c.tx(() => {
          c.query('INSERT INTO t VALUES (2, 2)');
          throw new Error('inner failed');
        }),
      ).toThrow('inner failed');
    });
    expect(c.query('SELECT id FROM t', [], { array: true }).rows).toEqual([[1]]);
    expect(c.inTransaction).toBe(false);
  });

  it('a serialisation failure runs the transaction again, so no update is lost', async () => {
    const a = await connect();
    a.query('INSERT INTO t VALUES (1, 100)');
    const b = pg.keep(new PgConnection(a.url));
    let runs = 0;
    a.tx(() => {
      runs++;
      const n = a.one<{ n: number }>('SELECT n FROM t WHERE id = 1')!.n;
      // Another instance debits the same row between this read and this write, once.
      if (runs === 1) b.tx(() => b.query('UPDATE t SET n = n - 30 WHERE id = 1'));
      a.query('UPDATE t SET n = $1 WHERE id = 1', [n - 50]);
    });
    expect(runs).toBe(2);
    expect(a.one('SELECT n FROM t WHERE id = 1')).toEqual({ n: 20 });
  });

  it('a serialisation failure in a savepoint whose caller answers it (as the service answers every error) still runs the whole transaction again', async () => {
    const a = await connect();
    a.query('INSERT INTO t VALUES (1, 100)');
    const b = pg.keep(new PgConnection(a.url));
    let runs = 0;
    const caught: unknown[] = [];
    // The outer transaction is the MCP server's audit row around the service's own.
    a.tx(() => {
      runs++;
      try {
        a.tx(() => {
          const n = a.one<{ n: number }>('SELECT n FROM t WHERE id = 1')!.n;
          if (runs === 1) b.tx(() => b.query('UPDATE t SET n = n - 30 WHERE id = 1'));
          a.query('UPDATE t SET n = $1 WHERE id = 1', [n - 50]);
        });
      } catch (e) {
        caught.push(e);
      }
      a.query('INSERT INTO t VALUES ($1, 0)', [1 + runs]);
    });
    expect(runs).toBe(2);
    expect(caught).toHaveLength(1);
    expect(caught[0]).toBeInstanceOf(StoreUnavailable);
    // Run again whole: the debit counted once on top of the other's, the first run's row gone.
    expect(a.query('SELECT id, n FROM t ORDER BY id', [], { array: true }).rows).toEqual([
      [1, 20],
      [3, 0],
    ]);
  });

  it('a connection lost mid-transaction is unavailable, nothing of it stays, and the next query reconnects', async () => {
    const c = await connect();
    const before = pid(c);
    expect(() =>
      c.tx(() => {
        c.query('INSERT INTO t VALUES (1, 1)');
        // The database ends this session (a restart, a failover, a proxy's idle cut).
        const other = new PgConnection(c.url);
        try {
          other.query('SELECT pg_terminate_backend($1, 5000)', [before]);
        } finally {
          other.close();
        }
        c.query('INSERT INTO t VALUES (2, 2)');
      }),
    ).toThrow(StoreUnavailable);
    expect(c.inTransaction).toBe(false);
    expect(c.one('SELECT count(*) AS n FROM t')).toEqual({ n: 0 });
    expect(pid(c)).not.toBe(before);
  });

  it('a statement sent ahead (begin) runs while another connection works, and its answer is never lost or taken for another', async () => {
    const a = await connect();
    const b = pg.keep(new PgConnection(a.url));
    a.query('INSERT INTO t VALUES (1, 10), (2, 20)');
    b.one('SELECT 1');
    // Two waits of 500 ms, one on each connection: overlapped, they take about one (one after the other, 1 s at least).
    const t0 = performance.now();
    const sent = a.begin<{ n: number }>('SELECT n FROM (SELECT pg_sleep(0.5)) s, t WHERE id = $1', [2]);
    b.query('SELECT pg_sleep(0.5)');
    expect(sent().rows).toEqual([{ n: 20 }]);
    expect(performance.now() - t0).toBeLessThan(900);
    // Read again, the same answer; used before its answer is read, the connection keeps it for its reader.
    expect(sent().rows).toEqual([{ n: 20 }]);
    const first = a.begin<{ id: number }>('SELECT id FROM t WHERE n = $1', [10]);
    expect(a.one('SELECT count(*) AS n FROM t')).toEqual({ n: 2 });
    const second = a.begin<{ id: number }>('SELECT id FROM t WHERE n = $1', [20]);
    expect(second().rows).toEqual([{ id: 2 }]);
    expect(first().rows).toEqual([{ id: 1 }]);
    // Sent one after the other, read in the other order.
    const x = a.begin<{ id: number }>('SELECT id FROM t WHERE n = $1', [10]);
    const y = a.begin<{ id: number }>('SELECT id FROM t WHERE n = $1', [20]);
    expect(y().rows).toEqual([{ id: 2 }]);
    expect(x().rows).toEqual([{ id: 1 }]);
    // An error is the reader's, as query's would be; the connection goes on.
    const bad = a.begin('INSERT INTO t VALUES (1, 0)');
    expect(() => bad()).toThrow(expect.objectContaining({ code: '23505' }));
    expect(a.one('SELECT count(*) AS n FROM t')).toEqual({ n: 2 });
    // Not inside a transaction: its statements must all be read in order.
    expect(() => a.tx(() => a.begin('SELECT 1'))).toThrow(/outside a transaction/);
  });

  it('a statement sent ahead past the timeout is unavailable to its reader, also when the connection was used first', async () => {
    const c = await connect({ statementTimeoutMs: 200 });
    const slow = c.begin('SELECT pg_sleep(2)');
    expect(c.one('SELECT 1 AS one')).toEqual({ one: 1 });
    expect(() => slow()).toThrow(StoreUnavailable);
    const late = c.begin('SELECT pg_sleep(2)');
    expect(() => late()).toThrow(StoreUnavailable);
    expect(c.one('SELECT 2 AS two')).toEqual({ two: 2 });
  });

  it('a statement past the timeout is unavailable; a server that refuses connections too', async () => {
    const c = await connect({ statementTimeoutMs: 200 });
    expect(() => c.query('SELECT pg_sleep(2)')).toThrow(StoreUnavailable);
    expect(c.one('SELECT 1 AS one')).toEqual({ one: 1 });
    // A port nothing listens on (this server's, plus one, is free for the test's lifetime).
    const nowhere = pg.keep(new PgConnection(c.url.replace(/:(\d+)\//, (_, p: string) => `:${Number(p) + 1}/`)));
    expect(() => nowhere.query('SELECT 1')).toThrow(StoreUnavailable);
  });
});
