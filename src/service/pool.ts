/**
 * The service on several threads, for a shared database (PostgreSQL): each thread holds its
 * own connection and Service and answers one request at a time, waiting on its queries; the
 * HTTP thread hands each request to the thread with the fewest in hand and never waits on the
 * database itself. The SQLite service needs none of this: its queries take microseconds on
 * the thread that asks.
 *
 * A thread that dies (its database gone at start, a crash) answers what it held with 503 and
 * Retry-After, and is started again for the next request.
 */
import { Worker } from 'node:worker_threads';
import type { ApiResponse, AuditEntry } from '../api/backend.js';
import { ApiError } from '../api/errors.js';
import type { Logger } from '../log.js';
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
}

interface Thread {
  worker: Worker;
  pending: Map<number, (res: ApiResponse) => void>;
}

export const unavailable = (): ApiResponse => new ApiError('service_unavailable', 'Service Unavailable', undefined, { 'Retry-After': '1' }).response();

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
    const worker = new Worker(new URL('./pool-worker.js', import.meta.url), { workerData: this.setup });
    const t: Thread = { worker, pending: new Map() };
    worker.on('message', (m: { id?: number; res?: ApiResponse }) => {
      if (m.id === undefined) return;
      const answer = t.pending.get(m.id);
      t.pending.delete(m.id);
      answer?.(m.res!);
    });
    const gone = (why: unknown) => {
      if (this.threads[i] === t) this.threads[i] = undefined;
      if (!this.closed && t.pending.size > 0) this.logger?.error({ err: why }, 'a service thread ended with requests in hand');
      for (const answer of t.pending.values()) answer(unavailable());
      t.pending.clear();
    };
    worker.on('error', gone);
    worker.on('exit', gone);
    this.threads[i] = t;
    return t;
  }

  /** Answer one request on the thread with the fewest in hand (with its audit record, when given). */
  call(req: ApiRequest, audit?: AuditEntry): Promise<ApiResponse> {
    if (this.closed) return Promise.resolve(unavailable());
    let best = this.next;
    for (let k = 0; k < this.size; k++) {
      const i = (this.next + k) % this.size;
      if ((this.threads[i]?.pending.size ?? 0) < (this.threads[best]?.pending.size ?? 0)) best = i;
    }
    this.next = (best + 1) % this.size;
    const t = this.thread(best);
    const id = ++this.seq;
    return new Promise((resolve) => {
      t.pending.set(id, resolve);
      t.worker.postMessage({ id, req, ...(audit ? { audit } : {}) } satisfies PoolRequest);
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
