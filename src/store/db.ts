/**
 * Opening a SQLite file: pragmas, the SQL functions of the search index, then any migrations it
 * has not had yet. A file we create is
 * readable by its owner only (SQLite gives its -wal and -shm files the same mode). Start-up
 * opens through `openChecked`, which refuses what is not ours and rolls back on a failed check.
 */
import Database from 'better-sqlite3';
import { closeSync, openSync, rmSync } from 'node:fs';
import { MIGRATIONS } from './migrations.js';
import { phoneKey, searchWords, taggedWords } from './search-text.js';

export type Db = Database.Database;

/** The busy timeout of every connection: a writer waits this long for another's transaction. */
const BUSY_MS = 10_000;

/** Why a file cannot be opened as our database. */
export type DbProblemKind = 'not-a-database' | 'foreign' | 'newer' | 'locked' | 'read-only';

export class DbProblem extends Error {
  constructor(
    readonly kind: DbProblemKind,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Create `file` empty with mode 0600 unless it exists (another process may win the race).
 * Returns whether this call created it.
 */
function createPrivate(file: string): boolean {
  try {
    closeSync(openSync(file, 'wx', 0o600));
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    return false;
  }
}

/** journal_mode and foreign_keys are no-ops inside a transaction: set before one starts. */
function pragmas(db: Db, busyMs = BUSY_MS): void {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma(`busy_timeout = ${busyMs}`);
}

/**
 * Open (creating if needed) the database at `file` and bring its schema up to date with
 * `migrations` (the service's, unless another file of ours is opened).
 */
export function openDb(file: string, migrations: readonly string[] = MIGRATIONS): Db {
  if (file !== ':memory:') createPrivate(file);
  const db = new Database(file);
  pragmas(db);
  registerFunctions(db);
  migrate(db, migrations);
  return db;
}

/**
 * SQL functions the search index's triggers call (migrations 6 and 9): registered on every
 * connection before anything writes a contact.
 */
function registerFunctions(db: Db): void {
  const text = (v: unknown) => (typeof v === 'string' ? v : v === null || v === undefined ? null : String(v));
  db.function('search_words', { deterministic: true }, (v: unknown) => searchWords(text(v)));
  db.function('search_phone', { deterministic: true }, (v: unknown) => phoneKey(text(v)));
  db.function('search_tagged', { deterministic: true }, (bot: unknown, v: unknown) => taggedWords(Number(bot), text(v)));
}

function migrate(db: Db, migrations: readonly string[] = MIGRATIONS): void {
  const apply = db.transaction(() => {
    const current = db.pragma('user_version', { simple: true }) as number;
    for (let v = current; v < migrations.length; v++) {
      db.exec(migrations[v]!);
      db.pragma(`user_version = ${v + 1}`);
    }
  });
  apply.immediate();
}

const code = (e: unknown): string => String((e as { code?: unknown }).code ?? '');

/** Refuse a file that is not SQLite, a SQLite file of another program, or one of a newer schema. */
function inspect(db: Db): void {
  let version: number;
  let tables: number;
  try {
    version = db.pragma('user_version', { simple: true }) as number;
    tables = (db.prepare('SELECT count(*) AS n FROM sqlite_master').get() as { n: number }).n;
  } catch (e) {
    if (code(e) === 'SQLITE_NOTADB' || code(e) === 'SQLITE_CORRUPT') throw new DbProblem('not-a-database', 'not a SQLite database');
    throw e;
  }
  if (version === 0 && tables > 0) throw new DbProblem('foreign', 'a SQLite database of another program');
  if (version > MIGRATIONS.length)
    throw new DbProblem('newer', `made by a newer version (schema ${version}, this one knows ${MIGRATIONS.length})`);
}

export interface CheckedOpen {
  /** Create the file when it does not exist (else it must exist). */
  create: boolean;
  /** How long to wait for another writer before calling the file locked. */
  lockWaitMs: number;
}

/**
 * Open `file` for a server's start: refuse what is not our database, take the write lock (a
 * file another program holds locked is refused), migrate, and run `check` in the same
 * transaction, so a check that throws leaves the file as it was. A file this call created is
 * removed again on failure.
 */
export function openChecked<T>(file: string, opts: CheckedOpen, check: (db: Db) => T): { db: Db; result: T } {
  const created = opts.create && createPrivate(file);
  let db: Db | undefined;
  try {
    db = new Database(file, { fileMustExist: true });
    inspect(db);
    registerFunctions(db);
    try {
      pragmas(db, opts.lockWaitMs);
      db.exec('BEGIN IMMEDIATE');
    } catch (e) {
      if (code(e) === 'SQLITE_BUSY')
        throw new DbProblem('locked', `locked by another program (waited ${Math.round(opts.lockWaitMs / 1000)} s)`);
      if (code(e).startsWith('SQLITE_READONLY') || code(e).startsWith('SQLITE_CANTOPEN')) throw new DbProblem('read-only', 'read-only');
      throw e;
    }
    let result: T;
    try {
      migrate(db);
      result = check(db);
      db.exec('COMMIT');
    } catch (e) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw e;
    }
    db.pragma(`busy_timeout = ${BUSY_MS}`);
    return { db, result };
  } catch (e) {
    db?.close();
    if (created) for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
    throw e;
  }
}
