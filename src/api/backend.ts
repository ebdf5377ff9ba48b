/**
 * The one interface every adapter talks to: `call(method, params)` answers the API's response
 * (status, headers, body). The built-in service (`service/backend.ts`) and the remote client
 * (`remote/client.ts`) implement it; the MCP server is written against it alone.
 */
import type { MethodName } from './catalog.js';

/** What a caller may pass beside the parameters. */
export interface CallOptions {
  signal?: AbortSignal;
  /** Told about waits (pacing, a rate limit) so a tool can report progress. */
  onProgress?: (message: string) => void;
  /**
   * The audit record of this call, its outcome still to be filled in. A backend that can keep
   * it with the change itself (the built-in service: in the same transaction) does so and says
   * so in `ApiResponse.audited`; otherwise the caller keeps it.
   */
  audit?: AuditEntry;
}

/** One entry of the audit trail of data-changing tool calls. */
export interface AuditEntry {
  /** ISO 8601 time of the call. */
  at: string;
  owner_id: number | null;
  /** The MCP client as it named itself at initialize, and its session. */
  client: { name: string; version: string } | null;
  session: string | null;
  /** `--auth oauth`: the OAuth client the person signed in through (its client_id and name). */
  oauth_client?: { id: string; name: string };
  /** `--auth oauth`: the scopes the person's grant holds at the address the call came to. */
  grant_scopes?: string[];
  tool: string;
  /** The arguments, keys and secrets redacted, idempotency_key kept apart. */
  arguments: Record<string, unknown>;
  /** The contact the call was about, when known (contact_id, or the holder of account_id). */
  contact_id: number | null;
  /** The outcome: the HTTP status and the error code of a failure. */
  status: number;
  code: string | null;
  idempotency_key: string | null;
  replayed: boolean;
  /** How the call was confirmed, and by whom; null when it needed none. */
  confirmation: { how: string; by: string } | null;
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
  /** The backend kept `CallOptions.audit` with the change. */
  audited?: boolean;
}

/**
 * A backend answers every call with an ApiResponse and never throws for API or network
 * failures: the remote client turns a failure it could not resolve into a response too (its
 * own entries of the error table: `outcome_unknown` when a write may have reached the server,
 * `upstream_unreachable`, `bad_upstream_response`, `cancelled`) and explains in `warnings`.
 * Deprecation/Sunset headers are left for the adapter to turn into warnings, the same for both.
 */
export interface Backend {
  call(method: MethodName, params: Record<string, unknown>, opts?: CallOptions): Promise<ApiResponse>;
  close(): Promise<void>;
  /**
   * The owner check every method makes (key, plan, block; the rate limit too unless `counted:
   * false`): undefined, or the refusal. Only a backend that can make it without a request has
   * it (the built-in service).
   */
  admit?(o?: AdmitOptions): Promise<ApiResponse | undefined>;
}

/** `counted: false`: the owner checked (key, plan, block) without a request counted against their rate limit. */
export interface AdmitOptions {
  counted?: boolean;
}

/** What to read of the audit trail: filters, and the page (`before`: where the last page stopped). */
export interface AuditQuery {
  tool?: string;
  contact?: number;
  /** ISO 8601: entries at or after it. */
  since?: string;
  before?: number;
  limit: number;
  /** Only this owner's entries (null: those that name none). */
  owner?: number | null;
}

/** A page of the audit trail, newest first; `next` (a `before`) continues it. */
export interface AuditPage {
  entries: Array<AuditEntry & { seq: number }>;
  next?: number;
}

/** Whether a status is a success (2xx). */
export function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/** The error code of a failed answer (`code`, else `error`), null for a success. */
export function errorCodeOf(res: ApiResponse): string | null {
  if (isSuccess(res.status)) return null;
  const body = (res.body ?? {}) as { code?: unknown; error?: unknown };
  return typeof body.code === 'string' ? body.code : typeof body.error === 'string' ? body.error : null;
}
