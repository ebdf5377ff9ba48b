/**
 * The one interface the MCP server talks to: `call(method, params)` answers the API's response
 * (status, headers, body). The built-in service is one implementation (here); the remote
 * client in `src/remote/` is the other.
 */
import { findMethod } from '../api/catalog.js';
import type { ApiResponse, Service } from './pipeline.js';

export interface CallOptions {
  signal?: AbortSignal;
  /** Told about waits (rate limit) so a tool can report progress. */
  onProgress?: (message: string) => void;
}

/**
 * A backend answers every call with an ApiResponse and never throws for API or network
 * failures: the remote client turns a failure it could not resolve into a response too
 * (status 502/504, body `{message, error, code}` with code `outcome_unknown` when a write may
 * have reached the server, `upstream_unreachable` or `bad_upstream_response` otherwise) and
 * explains in `warnings`. Deprecation/Sunset headers are left for the MCP layer to turn into
 * warnings, the same for both backends.
 */
export interface Backend {
  call(method: string, params: Record<string, unknown>, opts?: CallOptions): Promise<ApiResponse>;
  close(): Promise<void>;
}

/** Base URL the in-process service puts in paging links. */
export const LOCAL_BASE_URL = 'http://localhost/api/v1';

/** The built-in service, called in-process through the same pipeline as HTTP. */
export class LocalBackend implements Backend {
  constructor(
    readonly service: Service,
    private readonly identity: { apiKey: string } | { ownerId: number },
  ) {}

  async call(method: string, params: Record<string, unknown>): Promise<ApiResponse> {
    const def = findMethod(method);
    const verb = def && !def.verbs.includes('POST') ? 'GET' : 'POST';
    return this.service.call({
      method,
      verb,
      input: params,
      wantsJson: true,
      baseUrl: LOCAL_BASE_URL,
      ...('apiKey' in this.identity ? { bearer: this.identity.apiKey } : { asOwner: this.identity.ownerId }),
    });
  }

  async close(): Promise<void> {
    this.service.store.close();
  }
}
