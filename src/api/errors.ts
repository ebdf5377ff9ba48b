/**
 * The closed table of errors: each entry fixes the status and the body shape the spec gives it,
 * the API's own and those an adapter answers in the same shape (the remote client's
 * `outcome_unknown` ...). `ApiError` carries one entry; `body()` and `response()` are the one
 * place it becomes the spec's body. Every refusal, wherever it is made, is built from here.
 */
import type { ApiResponse } from './backend.js';
import { readBackOf, type MethodDef } from './define.js';

/** Every error the API can answer, by name. */
export const ERRORS = {
  unauthorized: { status: 401, keys: ['error'] },
  pro_required: { status: 402, keys: ['error', 'code'] },
  forbidden: { status: 403, keys: ['error'] },
  owner_blocked: { status: 403, keys: ['error'] },
  list_limit: { status: 403, keys: ['message', 'error'] },
  not_found: { status: 404, keys: ['error'] },
  /** Missing list: `message`, `error` and `errors.schema_id` all hold the text. */
  schema_not_found: { status: 404, keys: ['message', 'error', 'errors'] },
  /** A 404 pointing at a parameter (`bot_id` of createOrUpdateContact, `item_id` of records). */
  not_found_on: { status: 404, keys: ['message', 'error', 'errors'] },
  route_not_found: { status: 404, keys: ['message'] },
  method_not_allowed: { status: 405, keys: ['message'] },
  method_removed: { status: 410, keys: ['error', 'code'] },
  payload_too_large: { status: 413, keys: ['message'] },
  validation: { status: 422, keys: ['message', 'errors'] },
  currency_exists: { status: 422, keys: ['message', 'code', 'errors'] },
  account_not_empty: { status: 422, keys: ['message', 'code', 'errors'] },
  account_blocked: { status: 422, keys: ['message', 'code', 'errors'] },
  insufficient_funds: { status: 422, keys: ['message', 'code', 'errors'] },
  idempotency_conflict: { status: 422, keys: ['message', 'code', 'errors'] },
  /** The MCP server's money caps: the call is over one and nobody confirmed it; nothing moved. */
  confirmation_required: { status: 422, keys: ['message', 'code', 'errors'] },
  /** The person declined (or cancelled) the confirmation of a money call; nothing moved. */
  confirmation_declined: { status: 422, keys: ['message', 'code', 'errors'] },
  /** The MCP server's money caps: no answer showed which contact holds the account, so its currency (and the caps) cannot be known; nothing moved. */
  account_not_seen: { status: 422, keys: ['message', 'code', 'errors'] },
  too_many_attempts: { status: 429, keys: ['message'] },
  /** Refused by the HTTP server before routing: malformed HTTP. */
  bad_request: { status: 400, keys: ['message'] },
  /** Refused by the HTTP server before routing: headers or URL too large. */
  headers_too_large: { status: 431, keys: ['message'] },
  server_error: { status: 500, keys: ['message'] },
  /** The database cannot be reached for now (a shared database's connection lost): nothing was changed; Retry-After says when to try again. (A connection lost during COMMIT whose outcome could not be learnt answers `outcome_unknown` with status 503 instead.) */
  service_unavailable: { status: 503, keys: ['message'] },
  /** The MCP server: a tool outside what this sign-in, address or deployment allows (its scopes); nothing ran. */
  insufficient_scope: { status: 403, keys: ['message', 'code'] },
  /** A feature this server was started without (an MCP server with no workspace directory). */
  not_available: { status: 501, keys: ['message'] },
  // The remote client's own answers, when the remote API gave none it could pass on. They may
  // carry the status the exchange ended with (504 for a timeout, the remote's for a bad page).
  /** The call was cancelled by the caller before an answer came. */
  cancelled: { status: 499, keys: ['message', 'error', 'code'], upstream: true },
  /** A write may have reached the remote API (or, 503, the database's COMMIT) but its answer was lost: check before retrying. */
  outcome_unknown: { status: 502, keys: ['message', 'error', 'code'], upstream: true },
  /** The remote API could not be reached (the call was not carried out). */
  upstream_unreachable: { status: 502, keys: ['message', 'error', 'code'], upstream: true },
  /** The remote API answered with a body that is not JSON. */
  bad_upstream_response: { status: 502, keys: ['message', 'error', 'code'], upstream: true },
} as const satisfies Record<string, { status: number; keys: readonly ('message' | 'error' | 'code' | 'errors')[]; upstream?: true }>;

export type ErrorName = keyof typeof ERRORS;

export type FieldErrors = Map<string, string[]> | Record<string, string[]>;

/**
 * An API error: a table entry, its text and, for 422s and keyed 404s, the failing fields.
 * `status` overrides the entry's only for the remote client's entries (`upstream`).
 */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly name_: ErrorName,
    message: string,
    readonly fields?: FieldErrors,
    readonly headers: Record<string, string> = {},
    status?: number,
  ) {
    // An answer, not a fault: no stack to capture (a refusal storm would pay for each one).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    const entry: { status: number; upstream?: true } = ERRORS[name_];
    if (status !== undefined && !entry.upstream) throw new Error(`the status of ${name_} is fixed by the error table`);
    this.status = status ?? entry.status;
  }

  /** The body in the spec's shape, keys in the table's order. */
  body(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const k of ERRORS[this.name_].keys) {
      if (k === 'message' || k === 'error') out[k] = this.message;
      else if (k === 'code') out.code = this.name_;
      else out.errors = this.fields instanceof Map ? Object.fromEntries(this.fields) : (this.fields ?? {});
    }
    return out;
  }

  /** The answer that carries this error: its status, headers (after `headers`) and body. */
  response(headers: Record<string, string> = {}): ApiResponse {
    return { status: this.status, headers: { ...headers, ...this.headers }, body: this.body() };
  }
}

/** Laravel's summary line: the first message, then how many more there are. */
export function summarize(fields: Map<string, string[]>): string {
  const all = [...fields.values()].flat();
  const first = all[0] ?? 'The given data was invalid.';
  const more = all.length - 1;
  if (more <= 0) return first;
  return `${first} (and ${more} more ${more === 1 ? 'error' : 'errors'})`;
}

export const fail = {
  validation(fields: Map<string, string[]>, note?: string): ApiError {
    const msg = summarize(fields);
    return new ApiError('validation', note ? `${msg} ${note}` : msg, fields);
  },
  /** A single-field 422 with Laravel's wording. */
  invalid(key: string, message: string): ApiError {
    return fail.validation(new Map([[key, [message]]]));
  },
  /** A coded 422 (`insufficient_funds` ...), the error under `key`. */
  coded(name: ErrorName, key: string, message: string): ApiError {
    return new ApiError(name, message, { [key]: [message] });
  },
  notFound(message: string): ApiError {
    return new ApiError('not_found', message);
  },
  notFoundOn(key: string, message: string): ApiError {
    return new ApiError('not_found_on', message, { [key]: [message] });
  },
  forbidden(message = 'Forbidden.'): ApiError {
    return new ApiError('forbidden', message);
  },
};

/**
 * What a write whose answer was lost says, wherever it was lost (a COMMIT on PostgreSQL, a
 * service thread, the MCP server, the remote client): that it may have been made, and the read
 * its definition names to tell (for money, what in it to compare), before sending it again.
 * `method` as the caller sent it; `def` undefined for a method the catalog does not hold.
 */
export function outcomeUnknownText(method: string, def: MethodDef | undefined, why: string): string {
  const check = def && readBackOf(def);
  const tell = def?.money
    ? `the money may or may not have moved. Check with ${check}`
    : `the change may or may not have been made. Read it back${check ? ` with ${check}` : ''}`;
  return `The outcome of ${method} is unknown (${why}): ${tell} before sending it again.`;
}

/** The `outcome_unknown` error of a write whose answer was lost (see `outcomeUnknownText`). */
export function outcomeUnknown(
  method: string,
  def: MethodDef | undefined,
  why: string,
  o: { status?: number; headers?: Record<string, string> } = {},
): ApiError {
  return new ApiError('outcome_unknown', outcomeUnknownText(method, def, why), undefined, o.headers, o.status);
}
