/**
 * The built-in service as a Backend (the interface of `api/backend.ts`): each call goes through
 * the same pipeline as an HTTP request, in-process, with the verb a remote client would send;
 * on a shared database (PostgreSQL), on the service threads of a pool (pool.ts) instead, so
 * that the MCP server's event loop never waits on the database for an API call.
 */
import { errorCodeOf, type AdmitOptions, type ApiResponse, type AuditEntry, type Backend, type CallOptions } from '../api/backend.js';
import { findMethod } from '../api/catalog.js';
import { verbFor } from '../api/define.js';
import { hashKey } from '../store/keys.js';
import { traceBackend } from '../common/telemetry.js';
import type { ApiRequest, Service } from './pipeline.js';

/** Base URL the in-process service puts in paging links. */
const LOCAL_BASE_URL = 'http://localhost/api/v1';

/**
 * Answer `req`, with its audit record (when given) in the same transaction as the change (the
 * handler's own transaction nests as a savepoint): a crash never leaves one without the other.
 * A money move's transaction takes row locks (see contact-accounts.ts), so this one does too.
 */
export function answerAudited(service: Service, req: ApiRequest, audit: AuditEntry | undefined): ApiResponse {
  if (!audit) return service.call(req);
  const store = service.store;
  return store.tx(
    () => {
      const res = service.call(req);
      store.audit.append({ ...audit, status: res.status, code: errorCodeOf(res) });
      return { ...res, audited: true };
    },
    { rowLocks: findMethod(req.method)?.money !== undefined },
  );
}

/** Service threads that answer a request with its audit record (pool.ts). */
export interface ServiceThreads {
  call(req: ApiRequest, audit?: AuditEntry): Promise<ApiResponse>;
  /** The owner check of `Service.admit`, on a thread. */
  admit(as: Pick<ApiRequest, 'keyHash' | 'asOwner'>, o?: AdmitOptions): Promise<ApiResponse | undefined>;
}

/** The built-in service, called in-process through the same pipeline as HTTP. */
export class LocalBackend implements Backend {
  /** Who every call is made as: the key's hash (worked out once, checked at each call), or the owner. */
  private readonly as: Pick<ApiRequest, 'keyHash' | 'asOwner'>;

  /**
   * `threads`: the calls are answered there, each by a thread's own Service and connection;
   * `service` then only answers `admit` (the search's and directory's owner checks).
   * `{ keyHash }`: a key's hash, as `hashKey` makes it; `''` (no key has it) refuses every call,
   * never acting as an owner nor on an api_token of the input.
   */
  constructor(
    readonly service: Service,
    identity: { apiKey: string } | { keyHash: string } | { ownerId: number },
    private readonly threads?: ServiceThreads,
  ) {
    this.as =
      'apiKey' in identity
        ? { keyHash: hashKey(identity.apiKey) }
        : 'keyHash' in identity
          ? { keyHash: identity.keyHash }
          : { asOwner: identity.ownerId };
  }

  /** Who every call is made as, for a search on a service thread acting the same (cli/mcp-thread-jobs.ts). */
  get identity(): { keyHash: string } | { ownerId: number } {
    return this.as.keyHash !== undefined ? { keyHash: this.as.keyHash } : { ownerId: this.as.asOwner! };
  }

  /**
   * The same service acting by the key whose hash is `keyHash`, checked at each call as a
   * bearer key is (`mcp --http --auth key`, each key's own context): once the key is regenerated
   * its calls are refused, those of work still under way too.
   */
  byKeyHash(keyHash: string): LocalBackend {
    return new LocalBackend(this.service, { keyHash }, this.threads);
  }

  async call(method: string, params: Record<string, unknown>, opts?: CallOptions): Promise<ApiResponse> {
    const def = findMethod(method);
    const req: ApiRequest = {
      method,
      verb: def ? verbFor(def) : 'POST',
      input: params,
      wantsJson: true,
      baseUrl: LOCAL_BASE_URL,
      ...this.as,
    };
    // The owner the request's admission just read for this key (`--auth key`, `--auth oauth`), not read again.
    const owner = this.as.keyHash ? this.service.handed(this.as.keyHash) : undefined;
    if (owner) req.owner = owner;
    // A span under the request's (telemetry on): the call on PostgreSQL's service threads, or in-process on SQLite.
    const threads = this.threads;
    if (threads) return traceBackend(method, 'postgresql', () => threads.call(req, opts?.audit));
    return traceBackend(method, 'sqlite', async () => answerAudited(this.service, req, opts?.audit));
  }

  /** Whether the owner may call the API now (key, plan, block, rate limit unless `counted: false`): undefined, or the refusal. */
  async admit(o?: AdmitOptions): Promise<ApiResponse | undefined> {
    // On the service threads when there are (PostgreSQL): the check reads the owner.
    return this.threads ? this.threads.admit(this.as, o) : this.service.admit(this.as, o);
  }

  /** `admit` on this thread, at once: for a caller on a service thread itself (the search's, cli/mcp-thread-jobs.ts). */
  admitHere(o?: AdmitOptions): ApiResponse | undefined {
    return this.service.admit(this.as, o);
  }

  async close(): Promise<void> {
    this.service.store.close();
  }
}
