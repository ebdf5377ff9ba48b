/**
 * The one interface every adapter talks to: `call(method, params)` answers the API's response
 * (status, headers, body). The built-in service (`service/backend.ts`) and the remote client
 * (`remote/client.ts`) implement it; the MCP server is written against it alone.
 */

/** What a caller may pass beside the parameters. */
export interface CallOptions {
  signal?: AbortSignal;
  /** Told about waits (pacing, a rate limit) so a tool can report progress. */
  onProgress?: (message: string) => void;
}

/** One answer of the API. */
export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  /** The JSON body; undefined for 204 and redirects. */
  body: unknown;
  /**
   * Notes for the caller beside the body (the MCP layer shows them as `warnings`): e.g. the
   * remote client's "outcome unknown, check with getContactAccounts" after a lost write.
   */
  warnings?: string[];
}

/**
 * A backend answers every call with an ApiResponse and never throws for API or network
 * failures: the remote client turns a failure it could not resolve into a response too (its
 * own entries of the error table: `outcome_unknown` when a write may have reached the server,
 * `upstream_unreachable`, `bad_upstream_response`, `cancelled`) and explains in `warnings`.
 * Deprecation/Sunset headers are left for the adapter to turn into warnings, the same for both.
 */
export interface Backend {
  call(method: string, params: Record<string, unknown>, opts?: CallOptions): Promise<ApiResponse>;
  close(): Promise<void>;
}

/** Whether a status is a success (2xx). */
export function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/** A header, whatever the case of its name. */
export function headerOf(headers: Record<string, string>, name: string): string | undefined {
  const lower = name.toLowerCase();
  const k = Object.keys(headers).find((h) => h.toLowerCase() === lower);
  return k === undefined ? undefined : headers[k];
}
