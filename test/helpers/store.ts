/**
 * The store the suites run on: a SQLite file (the default), or, in the `postgres` test project
 * (WORKSPACE_TEST_STORE=postgres), a database of its own on the run's one throwaway PostgreSQL
 * (test/postgres-setup.ts starts it). A suite names a database by a string either way: a file
 * path or a URL, as `--db` does. A test file's PostgreSQL databases are copies of a template
 * migrated once for the run; one a world is done with is emptied back to the template's state
 * and used again (a CREATE DATABASE costs ten times that), and all are dropped when the file ends.
 */
import { dirname, join } from 'node:path';
import { inject } from 'vitest';
import type { StoreApi } from '../../src/store/store-api.js';
import { Store } from '../../src/store/index.js';
import { PgConnection } from '../../src/store/pg/connection.js';
import { PgStore } from '../../src/store/pg/index.js';
import { isPostgresUrl } from '../../src/store/pg/url.js';
import { loadFixture } from '../../src/store/seed.js';
import { removeTempDir, tempDir } from './temp.js';

export type Fixture = Record<string, unknown>;

/** The store this test project runs the suites on. */
export const TEST_STORE: 'sqlite' | 'postgres' = process.env.WORKSPACE_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';

/** What test/postgres-setup.ts hands the test files. */
interface ProvidedPostgres {
  /** The URL of a database on the server, with `{db}` where its name goes. */
  url: string;
  /** The migrated, empty database every new one is copied from. */
  template: string;
  /** SQL that brings a used database back to the template's state. */
  reset: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    postgres: ProvidedPostgres;
  }
}

/** The folder beside each PostgreSQL database in use (for what a file database keeps beside it: state, exports). */
const folders = new Map<string, string>();
/** Databases of this file no world uses now, to be emptied and used again. */
const spare: string[] = [];
/** Stores a seeding left open, for the first `openStore` of their database (a connection costs a thread and a log-in). */
const ready = new Map<string, StoreApi>();
let admin: PgConnection | undefined;
let made = 0;

function server(): ProvidedPostgres {
  const p = inject('postgres');
  if (!p) throw new Error('no test PostgreSQL: run the postgres test project (its global set-up starts one)');
  return p;
}

function adminConnection(): PgConnection {
  admin ??= new PgConnection(server().url.replace('{db}', 'postgres'));
  return admin;
}

/**
 * A new database seeded with `fixture`: a file `name` in a new temp folder, or on PostgreSQL a
 * new database (and a temp folder that stands beside it). Returns its `--db` value.
 */
export function seedStore(fixture: Fixture, name = 'workspace.db'): string {
  let db: string;
  let used = false;
  if (TEST_STORE === 'postgres') {
    const p = server();
    used = spare.length > 0;
    if (used) db = spare.pop()!;
    else {
      const dbName = `w${process.pid}_${++made}`;
      adminConnection().exec(`CREATE DATABASE ${dbName} TEMPLATE ${p.template}`);
      db = p.url.replace('{db}', dbName);
    }
    folders.set(db, tempDir());
  } else {
    db = join(tempDir(), name);
  }
  const store = openStore(db);
  try {
    if (used) (store as PgStore).conn.exec(server().reset);
    loadFixture(store, fixture);
  } catch (e) {
    store.close();
    throw e;
  }
  if (store instanceof PgStore) ready.set(db, store);
  else store.close();
  return db;
}

/** Open the store at `db` (a file path or a PostgreSQL URL). */
export function openStore(db: string): StoreApi {
  const kept = ready.get(db);
  ready.delete(db);
  return kept ?? (isPostgresUrl(db) ? PgStore.open(db) : Store.open(db));
}

/** `store` as SQLite, for a check that is about SQLite itself (its file, its cache): refused on PostgreSQL. */
export function sqliteOf(store: StoreApi): Store {
  if (!(store instanceof Store)) throw new Error('this check is about the SQLite store, and this world runs on PostgreSQL');
  return store;
}

/** The folder that belongs with database `db`: a file's own folder, a PostgreSQL database's temp folder. */
export function folderOf(db: string): string {
  if (!isPostgresUrl(db)) return dirname(db);
  const dir = folders.get(db);
  if (!dir) throw new Error(`not a database made by seedStore: ${db}`);
  return dir;
}

/** Be done with database `db` (its stores closed): a file goes with its folder; a PostgreSQL database is kept for the next world. */
export function removeStore(db: string): void {
  if (isPostgresUrl(db)) {
    const dir = folders.get(db);
    if (!dir) return;
    ready.get(db)?.close();
    ready.delete(db);
    folders.delete(db);
    removeTempDir(dir);
    spare.push(db);
  } else {
    removeTempDir(dirname(db));
  }
}

/** Drop this test file's databases and close its connection (test/setup.ts runs it). */
export function closeStores(): void {
  for (const db of [...folders.keys()]) removeStore(db);
  for (const db of spare.splice(0)) adminConnection().exec(`DROP DATABASE IF EXISTS ${new URL(db).pathname.slice(1)} WITH (FORCE)`);
  admin?.close();
  admin = undefined;
}

/**
 * The rows of a plain SELECT both dialects read alike (parameters as `?`), from either store:
 * for a check of what was stored that no store method shows.
 */
export function queryRows<R = Record<string, unknown>>(store: StoreApi, sql: string, params: unknown[] = []): R[] {
  if (store instanceof PgStore) {
    let n = 0;
    return store.conn.query<R>(
      sql.replace(/\?/g, () => `$${++n}`),
      params,
    ).rows;
  }
  return sqliteOf(store)
    .db.prepare(sql)
    .all(...params) as R[];
}

/**
 * Every row of every table, as text (for "nothing changed"): from either store. Rows are
 * sorted, so the text does not depend on the order a table is read in.
 */
export function dumpStore(store: StoreApi): string {
  const tables: Array<[string, object[]]> = [];
  if (store instanceof PgStore) {
    const names = store.conn.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1",
    ).rows;
    for (const { name } of names) tables.push([name, store.conn.query(`SELECT * FROM "${name}"`).rows]);
  } else {
    const db = (store as Store).db;
    const names = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as {
      name: string;
    }[];
    for (const { name } of names) tables.push([name, db.prepare(`SELECT * FROM "${name}"`).all() as object[]]);
  }
  return tables
    .map(
      ([name, rows]) =>
        `${name}:${rows
          .map((r) => JSON.stringify(r))
          .sort()
          .join('\n')}`,
    )
    .join('\n');
}
