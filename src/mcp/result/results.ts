/**
 * The one way an API answer becomes a tool result, for both backends and every tool:
 * success → `structuredContent` is the body (`{}` for a 204) with the server's own keys
 * (`replayed`, `warnings`, `truncated`) after the body's, and a text content carries the same
 * JSON; failure → `isError` and a first text content `{status, ...body}` (`error`, `code`,
 * `message`, `errors`). Both within the result budget (budget.ts). The body stays data through
 * the MCP layer and is rendered once: its key order is its own (`orderedObject`), so every
 * transport writes the API's order.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { isSuccess, type ApiResponse } from '../../api/backend.js';
import type { ApiError } from '../../api/errors.js';
import { headerOf, retryAfterSeconds } from '../../common/retry.js';
import { fitError, fitResult, RESULT_BUDGET, type Continuation } from './budget.js';

/** What a tool result needs beside the answer. */
export interface ResultOptions {
  /** The method the answer is of, named in its warnings (deprecation, rate limit). */
  method?: string;
  /** The result budget in characters (RESULT_BUDGET when not given). */
  budget?: number;
  /** The call's arguments and paging, for `truncated.next` when a list is cut. */
  continuation?: Continuation;
  /** The answer is an earlier call's, kept under its idempotency key. */
  replayed?: boolean;
  /** Notes of the MCP server's own on the arguments (hints.ts), added to `warnings`. */
  notes?: string[];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * What the caller should know beside the body: the backend's own notes (a remote write whose
 * outcome is unknown), when a rate-limited (429) or unavailable (503) call may be retried, and, from the
 * `Deprecation` and `Sunset` headers, that the method is deprecated and when it is switched
 * off. The same for both backends.
 */
function responseWarnings(method: string | undefined, res: ApiResponse): string[] {
  const out = [...(res.warnings ?? [])];
  const name = method ?? 'the call';
  if (res.status === 429) {
    const limit = headerOf(res.headers, 'x-ratelimit-limit');
    out.push(
      `Rate limited: ${name} was not carried out; retry in ${retryAfterSeconds(res.headers)} s` +
        `${limit ? ` (the limit is ${limit} requests a minute per owner, every method counted)` : ''}.`,
    );
  }
  if (
    res.status === 503 &&
    headerOf(res.headers, 'retry-after') !== undefined &&
    !(isObject(res.body) && res.body.code === 'outcome_unknown')
  ) {
    // The database could not be reached and the call was rolled back (an outcome the server
    // could not learn is `outcome_unknown`, whose message says what to read back first).
    out.push(`Service unavailable: ${name} was not carried out; retry in ${retryAfterSeconds(res.headers)} s.`);
  }
  if (headerOf(res.headers, 'deprecation') === 'true') {
    const sunset = headerOf(res.headers, 'sunset');
    out.push(
      `${name} is deprecated${sunset ? ` and will be switched off on ${new Date(sunset).toISOString()} (Sunset)` : ''}; ` +
        'after that it answers 410 method_removed.',
    );
  }
  return out;
}

/** The tool result of an API answer (or of a refusal the MCP server made in the same shape). */
export function toolResult(res: ApiResponse, o: ResultOptions = {}): CallToolResult {
  const notes = [...responseWarnings(o.method, res), ...(o.notes ?? [])];
  const budget = o.budget ?? RESULT_BUDGET;
  if (!isSuccess(res.status)) {
    const fields = isObject(res.body) ? res.body : {};
    return fitError({ status: res.status, ...fields, ...(notes.length ? { warnings: notes } : {}) }, budget);
  }
  const body = res.body === undefined ? {} : res.body;
  const extras = { ...(o.replayed ? { replayed: true } : {}), ...(notes.length ? { warnings: notes } : {}) };
  // structuredContent is an object: a body that is not one (no method answers so) is wrapped.
  return fitResult(isObject(body) ? body : { result: body }, extras, budget, o.continuation);
}

/** The tool result of a refusal from the error table. */
export function refusal(e: ApiError, method?: string, budget?: number): CallToolResult {
  return toolResult(e.response(), { method, budget });
}
