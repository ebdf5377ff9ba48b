/**
 * The built-in service as a Backend (the interface of `api/backend.ts`): each call goes through
 * the same pipeline as an HTTP request, in-process, with the verb a remote client would send.
 */
import { errorCodeOf, type ApiResponse, type Backend, type CallOptions } from '../api/backend.js';
import { findMethod } from '../api/catalog.js';
import { verbFor } from '../api/define.js';
import { hashKey } from '../store/keys.js';
import type { ApiRequest, Service } from './pipeline.js';

/** Base URL the in-process service puts in paging links. */
export const LOCAL_BASE_URL = 'http://localhost/api/v1';

/** The built-in service, called in-process through the same pipeline as HTTP. */
export class LocalBackend implements Backend {
  /** Who every call is made as: the key's hash (worked out once, checked at each call), or the owner. */
  private readonly as: Pick<ApiRequest, 'keyHash' | 'asOwner'>;

  constructor(
    readonly service: Service,
    identity: { apiKey: string } | { ownerId: number },
  ) {
    this.as = 'apiKey' in identity ? { keyHash: hashKey(identity.apiKey) } : { asOwner: identity.ownerId };
  }

  async call(method: string, params: Record<string, unknown>, opts?: CallOptions): Promise<ApiResponse> {
    const audit = opts?.audit;
    if (!audit) return this.answer(method, params);
    // The audit record goes in the same transaction as the change (the handler's own
    // transaction nests as a savepoint): a crash never leaves one without the other.
    const store = this.service.store;
    return store.tx(() => {
      const res = this.answer(method, params);
      store.audit.append({ ...audit, status: res.status, code: errorCodeOf(res) });
      return { ...res, audited: true };
    });
  }

  private answer(method: string, params: Record<string, unknown>): ApiResponse {
    const def = findMethod(method);
    return this.service.call({
      method,
      verb: def ? verbFor(def) : 'POST',
      input: params,
      wantsJson: true,
      baseUrl: LOCAL_BASE_URL,
      ...this.as,
    });
  }

  /** Whether the owner may call the API now (key, plan, block, rate limit): undefined, or the refusal. */
  admit(): ApiResponse | undefined {
    return this.service.admit(this.as);
  }

  async close(): Promise<void> {
    this.service.store.close();
  }
}
