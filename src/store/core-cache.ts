/**
 * What every request reads before its work: the owner of a key (with plan and block) and the
 * deprecations, kept in memory between requests instead of two SQL lookups each time, and the
 * list schemas the list methods look up first (with their project's owner); all dropped the
 * moment they may be stale:
 * - another connection (the `admin` command, another server on the file) committed: SQLite's
 *   `PRAGMA data_version` changes, read once per request (`hold`) or per lookup outside one,
 *   so a rotated key answers 401 and a deprecation applies on the very next request. A
 *   request stamped by `arrived()` (the HTTP layer stamps each one when it has come in whole)
 *   trusts a check made after its stamp: every commit that could have happened before the
 *   request was sent is seen by that check. The HTTP layer answers the requests that came in
 *   during one turn of the event loop together, after they all arrived, so one check serves
 *   all of them;
 * - this connection wrote to one of the `WATCHED` tables by any statement at all: TEMP triggers
 *   (this connection's only, no schema change) call back into JS and drop the cache.
 * Inside a transaction the cache is neither read nor filled: what a transaction sees may be
 * rolled back.
 */
import type { Db } from './db.js';
import type { ListCache, ListRow } from './lists.js';
import type { OwnerCache, OwnerRow } from './owners.js';
import type { DeprecationCache, DeprecationRow } from './settings.js';

/** Past this many owners by key (or lists by ID), the map starts over (keys that are tried, not a leak). */
const MAX_ENTRIES = 10_000;
/** The tables whose rows are cached (a list row carries its project's owner). */
const WATCHED = ['owners', 'deprecations', 'list_schemas', 'projects'] as const;

/** Requests stamped so far in this process (see `arrived`). */
let arrivals = 0;

/**
 * Stamp a request that has come in whole (its bytes are all read): a freshness check made after
 * this call is one made after the request arrived, so the request may trust it (`hold`).
 */
export function arrived(): number {
  return ++arrivals;
}

export class CoreCache implements OwnerCache, DeprecationCache, ListCache {
  private readonly dataVersion;
  private seen: unknown;
  private readonly byHash = new Map<string, OwnerRow>();
  private readonly byId = new Map<number, OwnerRow>();
  private readonly lists = new Map<string, ListRow>();
  private deprecations: Map<string, DeprecationRow> | undefined;
  /** Inside `hold`…`release`: checked once, trusted until released. */
  private held = false;
  /** `arrivals` at the last check: requests stamped up to it arrived before that check. */
  private checkedAfter = 0;
  /** How many times `PRAGMA data_version` was read (what the tests and the bench count). */
  checks = 0;

  constructor(private readonly db: Db) {
    this.dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
    this.seen = this.dataVersion.get();
    // A function name of this connection; a second cache on the same connection takes it over.
    db.function('workspace_core_changed', () => {
      this.clear();
      return null;
    });
    for (const table of WATCHED) {
      for (const op of ['INSERT', 'UPDATE', 'DELETE']) {
        const name = `workspace_core_${table}_${op.toLowerCase()}`;
        db.exec(`DROP TRIGGER IF EXISTS temp.${name}`);
        db.exec(`CREATE TEMP TRIGGER ${name} AFTER ${op} ON main.${table} BEGIN SELECT workspace_core_changed(); END`);
      }
    }
  }

  /** The owner of a key hash: cached, else `load` (a miss is not kept). */
  ownerByHash(hash: string, load: () => OwnerRow | undefined): OwnerRow | undefined {
    return this.cached(this.byHash, hash, load);
  }

  /** An owner by id: cached, else `load` (a miss is not kept). */
  ownerById(id: number, load: () => OwnerRow | undefined): OwnerRow | undefined {
    return this.cached(this.byId, id, load);
  }

  /** A list schema by its ID: cached, else `load` (a miss is not kept). The row is shared: read it, never change it. */
  listById(id: string, load: () => ListRow | undefined): ListRow | undefined {
    return this.cached(this.lists, id, load);
  }

  private cached<K, V>(map: Map<K, V>, key: K, load: () => V | undefined): V | undefined {
    if (!this.usable()) return load();
    let row = map.get(key);
    if (row === undefined) {
      row = load();
      if (row !== undefined) {
        if (map.size >= MAX_ENTRIES) map.clear();
        map.set(key, row);
      }
    }
    return row;
  }

  /** A method's deprecation, from the whole (small) table loaded by `loadAll` once per change. */
  deprecation(
    method: string,
    loadAll: () => Array<[string, DeprecationRow]>,
    loadOne: () => DeprecationRow | undefined,
  ): DeprecationRow | undefined {
    if (!this.usable()) return loadOne();
    this.deprecations ??= new Map(loadAll());
    return this.deprecations.get(method);
  }

  /**
   * Check once for another connection's commit and trust the cache until `release`: one
   * request's lookups cost one `PRAGMA data_version` (each statement outside a transaction
   * takes and drops SQLite's shared locks, a few system calls). This connection's own writes
   * still drop the cache at once (the triggers). A request stamped at `arrival` (`arrived()`)
   * skips the check when the last one was made after it arrived.
   */
  hold(arrival?: number): void {
    if (!this.db.inTransaction && !(arrival !== undefined && arrival <= this.checkedAfter)) this.check();
    this.held = true;
  }

  release(): void {
    this.held = false;
  }

  /** Whether cached rows may be used: outside a transaction, and after dropping them if another connection committed. */
  private usable(): boolean {
    if (this.db.inTransaction) return false;
    if (!this.held) this.check();
    return true;
  }

  private check(): void {
    // The requests stamped by now are served by this check, once it has been made: a read that
    // throws moves nothing.
    const upTo = arrivals;
    const v = this.dataVersion.get();
    this.checkedAfter = upTo;
    this.checks++;
    if (v !== this.seen) {
      this.seen = v;
      this.clear();
    }
  }

  private clear(): void {
    this.byHash.clear();
    this.byId.clear();
    this.lists.clear();
    this.deprecations = undefined;
  }
}
