/**
 * The reads the MCP server's serving thread makes for each request on PostgreSQL, answered
 * without holding that thread: an async `pg.Pool` of its own, beside the synchronous connection
 * (connection.ts), whose every query sleeps in `Atomics.wait` until the database answers. Who a
 * request is (`--auth key`, `--auth oauth`: a key's owner; OAuth's access token with its grant,
 * state/pg/oauth-store.ts) is read here; the API call itself goes on to the service threads.
 * One pool per connection it was made for (`asyncReadsOf`), closed with `closeAsyncReads`.
 */
import pg from 'pg';
import { hashesEqual } from '../keys.js';
import type { OwnerRow } from '../owners.js';
import { StoreUnavailable } from '../store-api.js';
import type { PgConnection } from './connection.js';

/** Connections the pool opens at most: each read is one short statement. */
const MAX_CONNECTIONS = 8;
/** 64-bit integers (count(*), bigint columns) as numbers, as the synchronous connection gives them (io-thread.ts). */
const BIGINT = 20;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === BIGINT ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

export class PgAsyncReads {
  private readonly pool: pg.Pool;

  constructor(url: string, statementTimeoutMs = 15_000) {
    this.pool = new pg.Pool({
      connectionString: url,
      max: MAX_CONNECTIONS,
      statement_timeout: statementTimeoutMs,
      connectionTimeoutMillis: 5_000,
      // An idle pool never keeps the process alive.
      allowExitOnIdle: true,
      types,
    });
    // A connection lost while idle: the pool drops it and opens another when next asked.
    this.pool.on('error', () => {});
  }

  /** One statement's first row, or undefined; any failure is the store's 503 (StoreUnavailable). */
  async one<R>(sql: string, params: readonly unknown[]): Promise<R | undefined> {
    try {
      const r = await this.pool.query<R & pg.QueryResultRow>(sql, params as unknown[]);
      return r.rows[0];
    } catch (e) {
      throw new StoreUnavailable(`PostgreSQL: ${(e as Error).message}`);
    }
  }

  /** One statement run for its effect (a grant's use noted); failures as `one`. */
  async run(sql: string, params: readonly unknown[]): Promise<void> {
    await this.one(sql, params);
  }

  /** The owner whose key has this hash (`hashKey`), as `PgOwnerStore.byHash` reads it: compared in constant time. */
  async ownerByHash(h: string): Promise<OwnerRow | undefined> {
    const row = await this.one<OwnerRow>('SELECT * FROM owners WHERE key_hash = $1', [h]);
    return row && row.key_hash && hashesEqual(row.key_hash, h) ? row : undefined;
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

const pools = new WeakMap<PgConnection, PgAsyncReads>();

/** The async reads on the database of `c` (made at the first call, one per connection). */
export function asyncReadsOf(c: PgConnection): PgAsyncReads {
  let reads = pools.get(c);
  if (!reads) pools.set(c, (reads = new PgAsyncReads(c.url)));
  return reads;
}

/** Closes the async reads made for `c`, if any. */
export async function closeAsyncReads(c: PgConnection): Promise<void> {
  const reads = pools.get(c);
  pools.delete(c);
  await reads?.close();
}
