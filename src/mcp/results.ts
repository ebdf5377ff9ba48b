/**
 * The one way an API answer becomes a tool result, for both backends and every tool:
 * success → `structuredContent` is the body (`{}` for a 204) with the server's own keys
 * (`replayed`, `warnings`) after the body's, and a text content carries the same JSON, cut to
 * the output budget; failure → `isError` and a first text content `{status, ...body}` (`error`,
 * `code`, `message`, `errors`). The body stays data through the MCP layer and is rendered here,
 * once: its key order is its own (`orderedObject`), so every transport writes the API's order.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { headerOf, isSuccess, type ApiResponse } from '../api/backend.js';
import type { ApiError } from '../api/errors.js';
import { orderedObject } from '../api/ordered.js';
import { retryAfterSeconds } from '../api/retry.js';

/** The most characters of JSON a tool result's text carries. */
export const OUTPUT_BUDGET = 20_000;

export interface BudgetHint {
  /** What to say after the cut: how to get the rest. */
  (kept: number, total: number, body: Record<string, unknown>): string;
}

/** What a tool result needs beside the answer. */
export interface ResultOptions {
  /** The method the answer is of, named in its warnings (deprecation, rate limit). */
  method?: string;
  /** What to say when a page is cut to the output budget. */
  hint?: BudgetHint;
  /** The answer is an earlier call's, kept under its idempotency key. */
  replayed?: boolean;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * What the caller should know beside the body: the backend's own notes (a remote write whose
 * outcome is unknown), when a rate-limited (429) call may be retried, and, from the
 * `Deprecation` and `Sunset` headers, that the method is deprecated and when it is switched
 * off. The same for both backends.
 */
export function responseWarnings(method: string | undefined, res: ApiResponse): string[] {
  const out = [...(res.warnings ?? [])];
  const name = method ?? 'the call';
  if (res.status === 429) {
    const limit = headerOf(res.headers, 'x-ratelimit-limit');
    out.push(
      `Rate limited: ${name} was not carried out; retry in ${retryAfterSeconds(res.headers)} s` +
        `${limit ? ` (the limit is ${limit} requests a minute per owner, every method counted)` : ''}.`,
    );
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

/** The body with the server's keys after its own (the body itself when there are none). */
function withExtras(body: Record<string, unknown>, extras: Record<string, unknown>): Record<string, unknown> {
  const add = Object.entries(extras);
  return add.length === 0 ? body : orderedObject([...Object.entries(body), ...add]);
}

/**
 * Fit a body into the budget: when its JSON is too long and `data` is an array, keep as many
 * leading items as fit and say so in a warning. Returns the (maybe shorter) body and warnings.
 */
export function fitBudget(body: unknown, hint?: BudgetHint, budget = OUTPUT_BUDGET): { body: unknown; warnings: string[] } {
  const length = JSON.stringify(body).length;
  if (length <= budget) return { body, warnings: [] };
  const data = isObject(body) ? body.data : undefined;
  if (!isObject(body) || !Array.isArray(data)) {
    return { body, warnings: [`This result is ${length} characters, over the output budget of about ${budget}.`] };
  }
  const withData = (items: unknown[]) => orderedObject(Object.entries(body).map(([k, v]) => [k, k === 'data' ? items : v] as const));
  // Room for the rest of the body and the warning itself.
  let used = JSON.stringify(withData([])).length + 600;
  let kept = 0;
  for (const item of data) {
    const n = JSON.stringify(item).length + 1;
    if (used + n > budget) break;
    used += n;
    kept++;
  }
  const warning =
    `Output budget: only the first ${kept} of the ${data.length} items on this page are shown, ` +
    `to stay under about ${budget} characters.${hint ? ` ${hint(kept, data.length, body)}` : ''}`;
  return { body: withData(data.slice(0, kept)), warnings: [warning] };
}

/** The tool result of an API answer (or of a refusal the MCP server made in the same shape). */
export function toolResult(res: ApiResponse, o: ResultOptions = {}): CallToolResult {
  const notes = responseWarnings(o.method, res);
  if (!isSuccess(res.status)) {
    const fields = isObject(res.body) ? res.body : {};
    const error = { status: res.status, ...fields, ...(notes.length ? { warnings: notes } : {}) };
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(error) }] };
  }
  const body = res.body === undefined ? {} : res.body;
  const fit = fitBudget(body, o.hint);
  const warnings = [...notes, ...fit.warnings];
  const extras = { ...(o.replayed ? { replayed: true } : {}), ...(warnings.length ? { warnings } : {}) };
  // structuredContent is the API's whole body even when the text was cut to the output budget:
  // scripts read it as the API's answer (and `warnings` says what the text left out).
  const structuredContent = isObject(body) ? withExtras(body, extras) : { result: body };
  const text = JSON.stringify(isObject(fit.body) ? withExtras(fit.body, extras) : fit.body);
  return { content: [{ type: 'text', text }], structuredContent };
}

/** The tool result of a refusal from the error table. */
export function refusal(e: ApiError, method?: string): CallToolResult {
  return toolResult(e.response(), { method });
}
