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
import type { ApiResponse, AuditEntry } from '../api/backend.js';
import { findMethod } from '../api/catalog.js';
import { ApiError, outcomeUnknown } from '../api/errors.js';
import { fromCloneable, toCloneable } from '../common/ordered.js';
import type { Logger } from '../common/log.js';
import type { Secrets } from './context.js';
import type { ApiRequest } from './pipeline.js';

export interface PoolSetup {
  url: string;
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

interface Thread {
  worker: Worker;
  /** The requests posted and not answered, in the order posted (the thread answers them in that order). */
  pending: Map<number, { method: string; answer: (res: ApiResponse) => void }>;
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
    opts: { url: string; rateLimit: number; secrets: Secrets; statementTimeoutMs?: number },
    readonly size: number,
    private readonly logger?: Logger,
  ) {
    this.setup = {
      url: opts.url,
      rateLimit: opts.rateLimit,
      statementTimeoutMs: opts.statementTimeoutMs,
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
    worker.on('message', (m: Partial<PoolAnswer> & { ready?: true }) => {
      if (m.ready) t.ready = true;
      if (m.id === undefined) return;
      const p = t.pending.get(m.id);
      t.pending.delete(m.id);
      p?.answer(m.ordered ? (fromCloneable(m.res) as ApiResponse) : m.res!);
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
        p.answer(unanswered(p.method, first && t.ready));
        first = false;
      }
      t.pending.clear();
    });
    this.threads[i] = t;
    return t;
  }

  /** Answer one request on the thread with the fewest in hand (with its audit record, when given). */
  call(req: ApiRequest, audit?: AuditEntry): Promise<ApiResponse> {
    if (this.closed) return Promise.resolve(notCarriedOut());
    let best = this.next;
    for (let k = 0; k < this.size; k++) {
      const i = (this.next + k) % this.size;
      if ((this.threads[i]?.pending.size ?? 0) < (this.threads[best]?.pending.size ?? 0)) best = i;
    }
    this.next = (best + 1) % this.size;
    const t = this.thread(best);
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
