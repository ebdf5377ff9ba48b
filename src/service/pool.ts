/**
 * The service on several threads, for a shared database (PostgreSQL): each thread holds its
 * own connection and Service and answers one request at a time, waiting on its queries; the
 * HTTP thread hands each request to the thread with the fewest in hand and never waits on the
 * database itself. The SQLite service needs none of this: its queries take microseconds on
 * the thread that asks.
 *
 * What crosses between threads is a structured clone, which cannot copy an `orderedObject` (a
 * list's fields with a slug "10") and would reorder integer-like keys: requests and answers go
 * through `toCloneable` / `fromCloneable` (src/ordered.ts).
 *
 * A thread that dies (its database gone at start, a crash) logs why, with its stack, and is
 * started again for the next request. What it held is answered with a 503 and Retry-After: the
 * request it had in hand, when that is a change, with `outcome_unknown` (it may have been made);
 * the rest, which it had not begun, as not carried out.
 */
import { Worker } from 'node:worker_threads';
import type { AdmitOptions, ApiResponse, AuditEntry } from '../api/backend.js';
import { findMethod } from '../api/catalog.js';
import { ApiError, outcomeUnknown } from '../api/errors.js';
import { fromCloneable, toCloneable } from '../common/ordered.js';
import type { Logger } from '../common/log.js';
import type { Secrets } from './context.js';
import type { ApiRequest } from './pipeline.js';
import { StoreBadText, StoreConflict, StoreOutcomeUnknown, StoreUnavailable } from '../store/store-api.js';

export interface PoolSetup {
  url: string;
  /**
   * A module whose `jobHandler(store, service)` answers the jobs `run` posts (the MCP server's
   * state and search: cli/mcp-thread-jobs.ts), loaded by each thread before it says it is ready.
   */
  jobs?: string;
  rateLimit: number;
  statementTimeoutMs?: number;
  encryptionKey: Uint8Array;
  signingKey: Uint8Array;
}

export interface PoolRequest {
  id: number;
  req: ApiRequest;
  /** The MCP server's audit record of the call, written in the change's transaction. */
  audit?: AuditEntry;
  /** `req` and `audit` went through `toCloneable` and changed: `fromCloneable` them. */
  ordered?: true;
}

/** A thread's answer to request `id` (`ordered`: `res` went through `toCloneable` and changed). */
export interface PoolAnswer {
  id: number;
  res: ApiResponse;
  ordered?: true;
}

/** A job of `PoolSetup.jobs` for a thread (`ordered`: `job` went through `toCloneable` and changed). */
export interface PoolJob {
  id: number;
  job: unknown;
  ordered?: true;
}

/** What a job answered, or the error it threw: its class's name (the store's errors are made again here) and message. */
export interface JobAnswer {
  id: number;
  value?: unknown;
  error?: { name: string; message: string };
  ordered?: true;
}

/** The job every thread takes, its own (`ServicePool.admit`): `{ [ADMIT]: { as, o } }`. */
export const ADMIT = 'admit';

/** The store's errors a job may throw, by name: the same class again on this side. */
const STORE_ERRORS: Record<string, new (message: string) => Error> = {
  StoreUnavailable,
  StoreConflict,
  StoreOutcomeUnknown,
  StoreBadText,
};

/** The error a job threw, made again from what crossed (`JobAnswer.error`); one not of the store's is an Error with its message. */
export function jobError(e: { name: string; message: string }): Error {
  const Made = STORE_ERRORS[e.name];
  return Made ? new Made(e.message) : new Error(e.message);
}

/** What crosses of an error a job threw (`jobError` makes it again). */
export function crossingError(e: unknown): { name: string; message: string } {
  const name = e instanceof Error ? e.constructor.name : 'Error';
  return { name: name in STORE_ERRORS ? name : 'Error', message: e instanceof Error ? e.message : String(e) };
}

/** A request or job posted to a thread: its answer's way back; a job's `lost` when the thread ended without answering it. */
interface Pending {
  method: string;
  answer: (res: ApiResponse) => void;
  job?: { resolve: (value: unknown) => void; lost: (e: Error) => void };
}

interface Thread {
  worker: Worker;
  /** The requests posted and not answered, in the order posted (the thread answers them in that order). */
  pending: Map<number, Pending>;
  /** It said it was ready: the first pending request may be under way. */
  ready: boolean;
  /** Why it failed, when its 'error' event said. */
  error?: unknown;
}

/** The 503 of a request no service thread carried out: nothing of it was done; retry in a second. */
export const notCarriedOut = (): ApiResponse =>
  new ApiError('service_unavailable', 'Service Unavailable', undefined, { 'Retry-After': '1' }).response();

/** Whether `method` may change something (an unknown method changes nothing). */
function isChange(method: string): boolean {
  const def = findMethod(method);
  return def !== undefined && !def.annotations.readOnlyHint;
}

/**
 * The answer of a change that may have been made, whose own answer was lost (its thread died
 * with it in hand, or could not send it): a 503 that says so, in the shape of every
 * `outcome_unknown`, so that no client sends it again before reading it back.
 */
export function lostAnswer(method: string): ApiResponse {
  const def = findMethod(method);
  return outcomeUnknown(method, def, 'Service Unavailable: its answer was lost', {
    headers: { 'Retry-After': '1' },
    status: 503,
  }).response();
}

/** What a request left unanswered gets: `lostAnswer` when it is a change that may be under way, else not carried out. */
export function unanswered(method: string, mayHaveBegun: boolean): ApiResponse {
  return mayHaveBegun && isChange(method) ? lostAnswer(method) : notCarriedOut();
}

export class ServicePool {
  private readonly threads: Array<Thread | undefined>;
  private readonly setup: PoolSetup;
  private next = 0;
  private seq = 0;
  private closed = false;

  constructor(
    opts: { url: string; rateLimit: number; secrets: Secrets; statementTimeoutMs?: number; jobs?: string },
    readonly size: number,
    private readonly logger?: Logger,
  ) {
    this.setup = {
      url: opts.url,
      rateLimit: opts.rateLimit,
      statementTimeoutMs: opts.statementTimeoutMs,
      ...(opts.jobs ? { jobs: opts.jobs } : {}),
      encryptionKey: new Uint8Array(opts.secrets.encryptionKey),
      signingKey: new Uint8Array(opts.secrets.signingKey),
    };
    this.threads = Array.from({ length: size }, () => undefined);
    for (let i = 0; i < size; i++) this.thread(i);
  }

  /** Resolves once every thread has its connection (or has failed and will be started again). */
  ready(): Promise<void> {
    return Promise.all(
      this.threads.map(
        (t) =>
          new Promise<void>((resolve) => {
            const done = () => resolve();
            t!.worker.once('message', done);
            t!.worker.once('exit', done);
          }),
      ),
    ).then(() => undefined);
  }

  private thread(i: number): Thread {
    const existing = this.threads[i];
    if (existing) return existing;
    // Named from dist/ (this module's folder, or dist/cli for the bundled command: tools/bundle.mjs).
    const worker = new Worker(new URL('../service/pool-worker.js', import.meta.url), { workerData: this.setup });
    const t: Thread = { worker, pending: new Map(), ready: false };
    worker.on('message', (m: Partial<PoolAnswer> & Partial<JobAnswer> & { ready?: true }) => {
      if (m.ready) t.ready = true;
      if (m.id === undefined) return;
      const p = t.pending.get(m.id);
      t.pending.delete(m.id);
      if (p?.job) {
        if (m.error) p.job.lost(jobError(m.error));
        else p.job.resolve(m.ordered ? fromCloneable(m.value) : m.value);
      } else p?.answer(m.ordered ? (fromCloneable(m.res) as ApiResponse) : m.res!);
    });
    // An uncaught error: the thread has logged it with its stack where it could (pool-worker.ts);
    // what came across is logged too. Its requests are answered at 'exit', once every answer it
    // posted before it ended has come in.
    worker.on('error', (why) => {
      if (this.threads[i] === t) this.threads[i] = undefined;
      t.error = why;
      if (!this.closed) this.logger?.error({ err: why }, 'a service thread failed');
    });
    worker.on('exit', (code) => {
      if (this.threads[i] === t) this.threads[i] = undefined;
      if (t.pending.size === 0) return;
      if (!this.closed) {
        const methods = [...t.pending.values()].map((p) => p.method);
        this.logger?.error(
          { exit_code: code, methods, ...(t.error === undefined ? {} : { err: t.error }) },
          'a service thread ended with requests in hand',
        );
      }
      let first = true;
      for (const p of t.pending.values()) {
        // A job's store call may have been made (a write whose answer was lost): the store's own 503 that says so.
        if (p.job)
          p.job.lost(
            first && t.ready
              ? new StoreOutcomeUnknown(`a service thread ended while ${p.method} was under way`)
              : new StoreUnavailable(`a service thread ended before ${p.method} began`),
          );
        else p.answer(unanswered(p.method, first && t.ready));
        first = false;
      }
      t.pending.clear();
    });
    this.threads[i] = t;
    return t;
  }

  /** The thread with the fewest in hand (started again when it had ended). */
  private leastBusy(): Thread {
    let best = this.next;
    for (let k = 0; k < this.size; k++) {
      const i = (this.next + k) % this.size;
      if ((this.threads[i]?.pending.size ?? 0) < (this.threads[best]?.pending.size ?? 0)) best = i;
    }
    this.next = (best + 1) % this.size;
    return this.thread(best);
  }

  /**
   * Run `job` (`what`: its name for logs) on the thread with the fewest in hand, by the
   * handler of `PoolSetup.jobs`: what it answered, or the error it threw (the store's own
   * class; a StoreUnavailable when no thread could take it).
   */
  run(job: unknown, what: string): Promise<unknown> {
    if (this.closed) return Promise.reject(new StoreUnavailable(`the service threads are closed: ${what} was not carried out`));
    const t = this.leastBusy();
    const id = ++this.seq;
    const j = toCloneable(job);
    const message: PoolJob = { id, job: j, ...(j !== job ? { ordered: true } : {}) };
    return new Promise((resolve, reject) => {
      t.pending.set(id, { method: what, answer: () => {}, job: { resolve, lost: reject } });
      try {
        t.worker.postMessage(message);
      } catch (e) {
        t.pending.delete(id);
        reject(e instanceof Error ? e : new Error(String(e)));
      }
    });
  }

  /** The owner check of `Service.admit` (key, plan, block; the rate unless `counted: false`) on a thread: undefined, or the refusal. */
  async admit(as: Pick<ApiRequest, 'keyHash' | 'asOwner'>, o?: AdmitOptions): Promise<ApiResponse | undefined> {
    try {
      return (await this.run({ [ADMIT]: { as: { keyHash: as.keyHash, asOwner: as.asOwner }, o } }, 'admit')) as ApiResponse | undefined;
    } catch (e) {
      this.logger?.warn({ err: e }, 'an owner check could not be made on a service thread');
      return notCarriedOut();
    }
  }

  /** Answer one request on the thread with the fewest in hand (with its audit record, when given). */
  call(req: ApiRequest, audit?: AuditEntry): Promise<ApiResponse> {
    if (this.closed) return Promise.resolve(notCarriedOut());
    const t = this.leastBusy();
    const id = ++this.seq;
    const r = toCloneable(req) as ApiRequest;
    const a = audit && (toCloneable(audit) as AuditEntry);
    const message: PoolRequest = { id, req: r, ...(a ? { audit: a } : {}), ...(r !== req || a !== audit ? { ordered: true } : {}) };
    return new Promise((resolve) => {
      t.pending.set(id, { method: req.method, answer: resolve });
      try {
        t.worker.postMessage(message);
      } catch (e) {
        // Not sent, so not begun: nothing was changed.
        t.pending.delete(id);
        this.logger?.error({ err: e, method: req.method }, 'a request could not be handed to a service thread');
        resolve(notCarriedOut());
      }
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      this.threads.map(async (t) => {
        if (!t) return;
        // Let it close its connection; a thread that does not end by itself is ended.
        const exited = new Promise<void>((resolve) => t.worker.once('exit', () => resolve()));
        t.worker.postMessage({ close: true });
        const timer = setTimeout(() => void t.worker.terminate(), 2000);
        await exited;
        clearTimeout(timer);
      }),
    );
  }
}
