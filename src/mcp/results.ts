/**
 * Turning API answers into tool results, the one shape both backends share:
 * success → `structuredContent` is the body (`{}` for a 204) and a text content carries the same
 * JSON; failure → `isError` and a first text content `{status, error?, code?, message?, errors?}`.
 * Also the output budget: a result past about 20 000 characters is cut to fit, with a warning.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ApiError, fail } from '../api/errors.js';
import { parseOrderedJson } from '../api/ordered.js';
import { headerOf, type ApiResponse } from '../api/backend.js';

/** The most characters of JSON a tool result carries. */
export const OUTPUT_BUDGET = 20_000;

/** Keys the MCP server may add beside the body's own. */
export interface Extras {
  replayed?: boolean;
  warnings?: string[];
}

/** Seconds until a refused (429) call may be sent again: Retry-After, else the window's reset. */
export function retryAfterSeconds(headers: Record<string, string>, now = Date.now()): number {
  const header = (name: string) => headerOf({ status: 429, headers, body: undefined }, name);
  const after = header('retry-after');
  if (after !== undefined) {
    // Delay-seconds or an HTTP date (RFC 9110).
    const seconds = /^\d+$/.test(after.trim()) ? Number(after) : (Date.parse(after) - now) / 1000;
    if (Number.isFinite(seconds)) return Math.max(1, Math.ceil(seconds));
  }
  const reset = Number(header('x-ratelimit-reset'));
  if (Number.isFinite(reset) && reset > 0) return Math.max(1, Math.ceil(reset - now / 1000));
  // The spec's window is a minute.
  return 60;
}

/**
 * What the caller should know beside the body: the backend's own notes (a remote write whose
 * outcome is unknown), when a rate-limited (429) call may be retried, and, from the
 * `Deprecation` and `Sunset` headers, that the method is deprecated and when it is switched
 * off. The same for both backends.
 */
export function responseWarnings(method: string, res: ApiResponse): string[] {
  const out = [...(res.warnings ?? [])];
  if (res.status === 429) {
    const limit = headerOf(res, 'x-ratelimit-limit');
    out.push(
      `Rate limited: ${method} was not carried out; retry in ${retryAfterSeconds(res.headers)} s` +
        `${limit ? ` (the limit is ${limit} requests a minute per owner, every method counted)` : ''}.`,
    );
  }
  if (headerOf(res, 'deprecation') === 'true') {
    const sunset = headerOf(res, 'sunset');
    out.push(
      `${method} is deprecated${sunset ? ` and will be switched off on ${new Date(sunset).toISOString()} (Sunset)` : ''}; ` +
        'after that it answers 410 method_removed.',
    );
  }
  return out;
}

/** An error result: `{status, ...body}` as the first text content, the body's keys in order. */
export function errorResult(status: number, body: unknown, warnings: string[] = []): CallToolResult {
  const fields = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const text = JSON.stringify(warnings.length ? { status, ...fields, warnings } : { status, ...fields });
  return { isError: true, content: [{ type: 'text', text }] };
}

/** An error result from one of the error table's entries. */
export function apiErrorResult(e: ApiError): CallToolResult {
  return errorResult(e.status, e.body());
}

/** 422 listing arguments the tool does not take (strict input, Laravel's shape). */
export function unknownArgumentsResult(errors: Map<string, string[]>): CallToolResult {
  return apiErrorResult(fail.validation(errors));
}

/**
 * A success result from the body's JSON text. `extras` are written after the body's own keys in
 * the text, so the body's key order (list fields, record slugs) survives in the text content.
 */
export function successResult(bodyText: string, extras: Extras = {}, fullBodyText?: string): CallToolResult {
  const add = Object.entries(extras).filter(([, v]) => v !== undefined);
  const withExtras = (t: string) => {
    if (add.length === 0 || !t.startsWith('{') || !t.endsWith('}')) return t;
    const tail = add.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',');
    return t === '{}' ? `{${tail}}` : `${t.slice(0, -1)},${tail}}`;
  };
  const text = withExtras(bodyText);
  // structuredContent is the API's whole body even when the text was cut to the output budget:
  // scripts read it as the API's answer (and `warnings` says what the text left out).
  const structuredText = fullBodyText === undefined ? text : withExtras(fullBodyText);
  const structured = parseOrderedJson(structuredText);
  const structuredContent =
    structured && typeof structured === 'object' && !Array.isArray(structured)
      ? (structured as Record<string, unknown>)
      : { result: structured };
  return { content: [{ type: 'text', text }], structuredContent };
}

/** The body's JSON text; `{}` for an answer with no body (204). */
export function bodyText(res: ApiResponse): string {
  return res.body === undefined ? '{}' : JSON.stringify(res.body);
}

export interface BudgetHint {
  /** What to say after the cut: how to get the rest. */
  (kept: number, total: number, body: Record<string, unknown>): string;
}

/**
 * Fit a body into the budget: when its JSON is too long and `data` is an array, keep as many
 * leading items as fit and say so in a warning. Returns the (maybe shorter) text and warnings.
 */
export function fitBudget(
  body: unknown,
  text: string,
  hint: BudgetHint,
  budget = OUTPUT_BUDGET,
): { text: string; warnings: string[] } {
  if (text.length <= budget) return { text, warnings: [] };
  const obj = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  const data = obj?.data;
  if (!obj || !Array.isArray(data)) {
    return { text, warnings: [`This result is ${text.length} characters, over the output budget of about ${budget}.`] };
  }
  // Room for the rest of the body and the warning itself.
  const rest = JSON.stringify({ ...obj, data: [] }).length + 600;
  let used = rest;
  let kept = 0;
  for (const item of data) {
    const n = JSON.stringify(item).length + 1;
    if (used + n > budget) break;
    used += n;
    kept++;
  }
  const cut = JSON.stringify({ ...obj, data: data.slice(0, kept) });
  const warning =
    `Output budget: only the first ${kept} of the ${data.length} items on this page are shown, ` +
    `to stay under about ${budget} characters. ${hint(kept, data.length, obj)}`;
  return { text: cut, warnings: [warning] };
}

const UNREACHABLE = new WeakSet<CallToolResult>();

/** The error result for a backend that threw (a network failure of the remote backend). */
export function unreachableResult(e: unknown): CallToolResult {
  const why = e instanceof Error ? e.message : String(e);
  const result = errorResult(502, { message: `The Workspace API could not be reached: ${why}` });
  UNREACHABLE.add(result);
  return result;
}

/** Whether the result says the API could not be reached (so a call's outcome is unknown). */
export function isUnreachable(result: CallToolResult): boolean {
  return UNREACHABLE.has(result);
}
