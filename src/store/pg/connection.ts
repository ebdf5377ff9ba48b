/**
 * A synchronous PostgreSQL connection. The service is synchronous over its store (better-sqlite3
 * is); rather than make every handler async, a PostgreSQL store runs each query on an I/O thread
 * of its own (io-thread.ts, one `pg` client) and sleeps in `Atomics.wait` until the answer is
 * posted back. That blocks the thread that holds the connection for one round trip, as PHP's
 * PDO blocks a PHP-FPM worker: a server on PostgreSQL runs its service on several worker
 * threads, each with its own connection, so the process's event loop never waits on the
 * database. `begin` sends a statement without waiting, for a caller that has a statement of
 * its own to run on another connection meanwhile (the search's, while the owner is checked).
 *
 * `tx` runs a closure in one SERIALIZABLE transaction (nested calls are savepoints), so a
 * read-check-write of the service sees what SQLite's IMMEDIATE transaction sees; a
 * serialisation failure or deadlock rolls back and runs the closure again. A lost connection,
 * a refused one or a statement timeout is a `StoreUnavailable` (the API answers 503 with
 * Retry-After); PostgreSQL rolls back whatever the transaction had done.
 *
 * Except when the connection is lost while COMMIT is under way: the server may have committed
 * and the answer alone been lost. So a writing transaction knows its id before COMMIT (a write
 * that returns `txid_current()` hands it over with `knowTxid`, else one `SELECT
 * txid_current_if_assigned()`), and when COMMIT gets no answer, `txid_status` asked on a new
 * connection decides: committed, the transaction's result stands; aborted, the 503 as for any
 * lost connection; anything else, a `StoreOutcomeUnknown` (503, read back before retrying).
 */
import { createRequire } from 'node:module';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { StoreBadText, StoreConflict, StoreOutcomeUnknown, StoreUnavailable } from '../store-api.js';
import { IO_THREAD_SOURCE } from './io-thread.js';
import { log } from '../../common/log.js';

export { StoreUnavailable };

/** An error PostgreSQL answered with: its SQLSTATE in `code` (23505 unique violation, ...). */
export class PgError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

export interface PgOptions {
  /** A statement running longer is cancelled (the request answers 503). */
  statementTimeoutMs?: number;
  /** How long a transaction that keeps hitting serialisation failures is tried again before the request answers 503. */
  retryMs?: number;
  /**
   * Prepared statements keep one generic plan from their first run (PostgreSQL's
   * plan_cache_mode), never planned again for new values. For a connection whose statements
   * are all of that kind (the contact search's): the setting holds for every statement on it.
   */
  genericPlans?: boolean;
}

type Answer =
  | { rows: unknown[]; rowCount: number; generation: number }
  | { error: { message: string; code?: string; lost: boolean } }
  | { closed: true };

/** A statement sent ahead (`begin`): its message id, then its answer or why none came. */
interface Pending {
  id: number;
  answer?: Answer;
  failure?: unknown;
}

/** SQLSTATEs after which the whole transaction is run again: serialisation failure, deadlock. */
const RETRY = new Set(['40001', '40P01']);
/** Query cancelled by statement_timeout. */
const TIMED_OUT = '57014';
/** How long a transaction whose COMMIT answer was lost may stay 'in progress' (its server session still finishing it) before its outcome is called unknown. */
const SETTLE_MS = 2_000;

const pgPath = createRequire(import.meta.url).resolve('pg');

export class PgConnection {
  private worker!: Worker;
  private port!: MessagePort;
  private readonly flag = new Int32Array(new SharedArrayBuffer(4));
  /** Never signalled: a short sleep. */
  private readonly nap = new Int32Array(new SharedArrayBuffer(4));
  private sent = 0;
  private readonly waitMs: number;
  private readonly statementTimeoutMs: number;
  private readonly retryMs: number;
  private readonly genericPlans: boolean;
  private depth = 0;
  /** Outermost transactions begun on this connection (tells one transaction's work from another's). */
  transactions = 0;
  /** The connection the open transaction began on (see io-thread.ts). */
  private generation: number | undefined;
  private lastGeneration: number | undefined;
  /** A serialisation failure was caught inside the open transaction (in a savepoint): it must run again whole. */
  private doomed = false;
  /** The open transaction's id, once known (`knowTxid`, or asked before COMMIT); null: it has written nothing. */
  private txid: number | null | undefined;
  private closed = false;
  /** The statement `begin` sent whose answer is still to be read (at most one). */
  private pending: Pending | undefined;
  /** Statements already logged as holding the serving thread (`watchServing`), by their first words. */
  private watched: Set<string> | undefined;

  constructor(
    readonly url: string,
    opts: PgOptions = {},
  ) {
    this.statementTimeoutMs = opts.statementTimeoutMs ?? 15_000;
    this.retryMs = opts.retryMs ?? 5_000;
    this.genericPlans = opts.genericPlans === true;
    // The caller gives up a little after the server would have cancelled the statement.
    this.waitMs = this.statementTimeoutMs + 10_000;
    this.spawn();
  }

  private spawn(): void {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(IO_THREAD_SOURCE, {
      eval: true,
      workerData: {
        port: port2,
        flag: this.flag,
        url: this.url,
        statementTimeoutMs: this.statementTimeoutMs,
        genericPlans: this.genericPlans,
        pgPath,
      },
      transferList: [port2],
    });
    // Neither the thread nor its port keeps the process alive: `close` ends them.
    this.worker.unref();
    this.port.unref();
  }

  private roundTrip(msg: object): Answer {
    this.settle();
    return this.answerTo(this.post(msg));
  }

  /**
   * This is the connection of the thread that serves every session (the MCP server's), and its
   * start-up is done: from now on a statement on it holds every session while the database
   * answers, which the request path never should (its reads and writes are on the service
   * threads and the async pool). Each kind of statement that still does is logged, once, at
   * warn: a regression an operator sees, and a test asserts never happens.
   */
  watchServing(): void {
    this.watched ??= new Set();
  }

  /** Logs a statement sent on a watched connection (`watchServing`), once per kind. */
  private noteServing(msg: object): void {
    const sql = (msg as { sql?: unknown }).sql;
    if (typeof sql !== 'string') return;
    const kind = sql.replace(/\s+/g, ' ').trim().slice(0, 60);
    if (this.watched!.has(kind) || this.watched!.size >= 100) return;
    this.watched!.add(kind);
    log.warn(
      { statement: kind, stack: new Error().stack?.split('\n').slice(2, 14).join(' | ') },
      'a PostgreSQL statement held the serving thread',
    );
  }

  /** Send a message to the I/O thread; its id. */
  private post(msg: object): number {
    if (this.closed) throw new Error('the PostgreSQL connection is closed');
    if (this.watched) this.noteServing(msg);
    const id = ++this.sent;
    Atomics.store(this.flag, 0, 0);
    this.port.postMessage({ ...msg, id });
    return id;
  }

  /** Sleep until the answer to message `id` comes (the only one under way: see `settle`). */
  private answerTo(id: number): Answer {
    const deadline = Date.now() + this.waitMs;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) {
        // A late answer must not pass for the next query's: start over with a new thread.
        this.port.close();
        void this.worker.terminate();
        this.spawn();
        throw new StoreUnavailable(`PostgreSQL did not answer within ${this.waitMs} ms`);
      }
      Atomics.wait(this.flag, 0, 0, left);
      const got = receiveMessageOnPort(this.port);
      if (got) {
        const answer = got.message as Answer & { id: number };
        if (answer.id === id) return answer;
        continue;
      }
      // Woken (or the flag already set) before the answer can be read from the port: a
      // moment's wait, then look again.
      Atomics.wait(this.nap, 0, 0, 1);
    }
  }

  /**
   * Read the answer of the statement `begin` sent, if it is still to come, and keep it for its
   * reader: one message at a time is under way, so the next one's answer is never taken for it.
   */
  private settle(): void {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    try {
      p.answer = this.answerTo(p.id);
    } catch (e) {
      p.failure = e;
    }
  }

  /**
   * Run one statement; its rows (objects by column, or arrays with `array`). With `prepared` it
   * is prepared once per connection (named by its text), for a statement run again and again
   * with other values.
   */
  query<R = Record<string, unknown>>(
    sql: string,
    params: readonly unknown[] = [],
    opts: { array?: boolean; prepared?: boolean } = {},
  ): { rows: R[]; rowCount: number } {
    return this.rowsOf(this.roundTrip(this.statement(sql, params, opts)));
  }

  /**
   * Send one statement (outside a transaction) and go on: its rows are read by calling the
   * function returned, when the caller has done its other work meanwhile (a statement on
   * another connection), so that the two round trips overlap. The next use of this connection
   * reads the answer first and keeps it for that call.
   */
  begin<R = Record<string, unknown>>(
    sql: string,
    params: readonly unknown[] = [],
    opts: { array?: boolean; prepared?: boolean } = {},
  ): () => { rows: R[]; rowCount: number } {
    if (this.depth > 0) throw new Error('begin: a statement sent ahead runs outside a transaction');
    const msg = this.statement(sql, params, opts);
    this.settle();
    const p: Pending = { id: this.post(msg) };
    this.pending = p;
    return () => {
      if (this.pending === p) this.settle();
      if (p.failure !== undefined) throw p.failure;
      return this.rowsOf<R>(p.answer!);
    };
  }

  /** The message of one statement to the I/O thread. */
  private statement(sql: string, params: readonly unknown[], opts: { array?: boolean; prepared?: boolean }): object {
    if (params.some(holdsNul)) throw new StoreBadText('a text holds the NUL character, which PostgreSQL cannot store');
    return { sql, params, array: opts.array === true, prepared: opts.prepared === true, generation: this.generation };
  }

  /** A statement's rows, or the error it answered as ours. */
  private rowsOf<R>(a: Answer): { rows: R[]; rowCount: number } {
    if ('error' in a) {
      if (a.error.lost || a.error.code === TIMED_OUT) throw new StoreUnavailable(`PostgreSQL unavailable: ${a.error.message}`);
      throw new PgError(a.error.message, a.error.code);
    }
    if ('closed' in a) throw new Error('the PostgreSQL connection is closed');
    // Read by `tx` right after its BEGIN's answer, so an earlier statement's read later changes nothing.
    this.lastGeneration = a.generation;
    return a as { rows: R[]; rowCount: number };
  }

  /** Another connection to the same database with the same options, but these. */
  sibling(opts: Pick<PgOptions, 'genericPlans'>): PgConnection {
    return new PgConnection(this.url, { statementTimeoutMs: this.statementTimeoutMs, retryMs: this.retryMs, ...opts });
  }

  /** The first row, or undefined. */
  one<R = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): R | undefined {
    return this.query<R>(sql, params).rows[0];
  }

  /** Several statements separated by `;`, no parameters (migrations). */
  exec(sql: string): void {
    this.query(sql);
  }

  get inTransaction(): boolean {
    return this.depth > 0;
  }

  /**
   * Run `fn` in one transaction: all of it is written, or none. Nested calls are savepoints.
   * A serialisation failure or deadlock of the outermost transaction runs `fn` again, so `fn`
   * must do nothing but database work it can repeat. `readCommitted`: each statement sees what
   * was committed before it, for a transaction that serialises itself with a lock (a lock taken
   * in a SERIALIZABLE one would not let it see what the holder committed), or whose writes check
   * themselves (the ledger's conditional UPDATE: concurrent writers of one row wait for its lock
   * rather than fail and start over). `snapshot`: reads only, all from one snapshot
   * (REPEATABLE READ READ ONLY: no SERIALIZABLE predicate locks, never fails to commit).
   */
  tx<T>(fn: () => T, opts: { readCommitted?: boolean; snapshot?: boolean } = {}): T {
    if (this.depth > 0) return this.savepoint(fn);
    const giveUp = Date.now() + this.retryMs;
    const isolation = opts.readCommitted ? 'READ COMMITTED' : opts.snapshot ? 'REPEATABLE READ READ ONLY' : 'SERIALIZABLE';
    for (let attempt = 0; ; attempt++) {
      this.query(`BEGIN ISOLATION LEVEL ${isolation}`);
      this.transactions++;
      this.generation = this.lastGeneration;
      this.depth = 1;
      this.doomed = false;
      this.txid = undefined;
      try {
        const out = fn();
        // A caller inside may have answered a conflict of its savepoint (the service answers
        // every error): the transaction as a whole lost, so it runs again rather than commit.
        if (this.doomed) throw new StoreConflict('a statement of this transaction could not be serialised');
        this.commit(opts.snapshot === true);
        return out;
      } catch (e) {
        this.rollback();
        if (!(this.doomed || (e instanceof PgError && e.code !== undefined && RETRY.has(e.code)))) throw e;
        if (Date.now() >= giveUp)
          throw new StoreUnavailable(`PostgreSQL: still conflicting after ${attempt + 1} attempts: ${(e as Error).message}`);
        // Back off, longer each time (up to 50 ms), with jitter, so racing transactions spread out.
        Atomics.wait(this.nap, 0, 0, Math.random() * Math.min(50, 2 ** attempt));
      } finally {
        this.depth = 0;
        this.generation = undefined;
        this.txid = undefined;
      }
    }
  }

  /**
   * The open transaction's id, as one of its writes returned it (`txid_current()` folded into
   * the statement): COMMIT then needs no extra round trip to learn what to ask about should
   * its answer be lost. Outside a transaction, nothing.
   */
  knowTxid(txid: number): void {
    if (this.depth > 0) this.txid = txid;
  }

  /**
   * COMMIT the open transaction. When its answer never comes (connection lost, or no answer in
   * time), whether it committed is asked on a new connection: committed, it returns as if
   * COMMIT had answered; aborted, the StoreUnavailable stands; not known, StoreOutcomeUnknown.
   */
  private commit(readOnly: boolean): void {
    if (!readOnly && this.txid === undefined) this.txid = this.one<{ t: number | null }>('SELECT txid_current_if_assigned() AS t')!.t;
    try {
      this.query('COMMIT');
    } catch (e) {
      // Nothing written (a read-only transaction): nothing to lose either.
      if (!(e instanceof StoreUnavailable) || this.txid === null || this.txid === undefined) throw e;
      const txid = this.txid;
      // The old connection is done with (a lost one answers at once); the question goes on a new one.
      this.rollback();
      this.generation = undefined;
      const status = this.status(txid);
      if (status === 'committed') return;
      if (status === 'aborted') throw e;
      throw new StoreOutcomeUnknown(
        `PostgreSQL: the answer to COMMIT was lost and the transaction's outcome is ${status ?? 'unknown'}: ${e.message}`,
      );
    }
  }

  /** `txid_status` of a transaction, waiting out 'in progress' for a moment (its session may still be finishing the COMMIT); undefined when it cannot be asked. */
  private status(txid: number): string | undefined {
    const until = Date.now() + SETTLE_MS;
    for (let nap = 5; ; nap = Math.min(2 * nap, 200)) {
      let status: string | null | undefined;
      try {
        status = this.one<{ s: string | null }>('SELECT txid_status($1) AS s', [txid])?.s;
      } catch (e) {
        if (e instanceof StoreUnavailable || e instanceof PgError) return undefined;
        throw e;
      }
      if (status !== 'in progress' || Date.now() + nap > until) return status ?? undefined;
      Atomics.wait(this.nap, 0, 0, nap);
    }
  }

  private savepoint<T>(fn: () => T): T {
    const name = `sp${this.depth}`;
    this.query(`SAVEPOINT ${name}`);
    this.depth++;
    try {
      const out = fn();
      this.query(`RELEASE SAVEPOINT ${name}`);
      return out;
    } catch (e) {
      if (!(e instanceof StoreUnavailable)) this.query(`ROLLBACK TO SAVEPOINT ${name}`);
      if (e instanceof PgError && e.code !== undefined && RETRY.has(e.code)) {
        this.doomed = true;
        throw new StoreConflict(e.message);
      }
      throw e;
    } finally {
      this.depth--;
    }
  }

  /** Roll back after a failure; a lost connection has rolled back already. */
  private rollback(): void {
    try {
      this.query('ROLLBACK');
    } catch (e) {
      if (!(e instanceof StoreUnavailable)) throw e;
    }
  }

  /** Close the connection and end its thread. */
  close(): void {
    if (this.closed) return;
    try {
      this.roundTrip({ close: true });
    } catch {
      // Closing anyway.
    }
    this.closed = true;
    this.port.close();
    void this.worker.terminate();
  }
}

function holdsNul(p: unknown): boolean {
  if (typeof p === 'string') return p.includes('\0');
  return Array.isArray(p) && p.some(holdsNul);
}

/** A NUL escaped in JSON text (`\u0000`, not itself escaped), which `::jsonb` refuses. */
const ESCAPED_NUL = /(?:^|[^\\])(?:\\\\)*\\u0000/;

/**
 * JSON text of a value kept as text and read as jsonb (list records): one holding a NUL is
 * refused before it is stored, or every later jsonb read of its list would fail.
 */
export function jsonbText(value: unknown): string {
  const text = JSON.stringify(value);
  if (text.includes('\\u0000') && ESCAPED_NUL.test(text))
    throw new StoreBadText('a text holds the NUL character, which PostgreSQL cannot store');
  return text;
}
