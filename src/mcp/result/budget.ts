/**
 * The result budget: a whole tool result (its text and its structuredContent, as JSON) stays
 * under `--max-result-chars` (100 000 by default), because hosts refuse or cut longer ones and a
 * model drowns in them. Past it the body's `data` is cut to what fits, in both renderings alike,
 * and a `truncated` key beside the body's says `{kept, of, next}`: how many items of this answer
 * are shown, of how many, and the exact arguments that continue (null when none can). Hosts
 * differ in what they show the model (Claude Code: structuredContent alone; others: the text
 * alone), so each rendering is complete on its own.
 *
 * The text is exactly structuredContent as compact JSON: every key of the API's body (the
 * paginator's URLs included) and the server's own (`warnings`, `truncated`, `replayed`).
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { Paging } from '../../api/define.js';
import { orderedObject } from '../../common/ordered.js';

/** The default budget of a whole result, in characters of its JSON. */
export const RESULT_BUDGET = 100_000;
/** The smallest budget `--max-result-chars` takes: room for a page's envelope, the notes and an item. */
export const MIN_RESULT_BUDGET = 5_000;
/**
 * Room left in the budget for what the protocol layer adds around our result: a 2026-07-28
 * result's `_meta` names the server (about 90 characters), a 2025 one nothing. The budget counts
 * the result as the client receives it.
 */
export const PROTOCOL_ROOM = 256;

type Obj = Record<string, unknown>;

/** What `truncated` says. */
interface Truncated {
  kept: number;
  of: number;
  /** The arguments that continue where this answer stops; null when none can. */
  next: Obj | null;
  /** Set when text values had to be shortened too (one item alone was over budget): their new length. */
  cut_strings_at?: number;
}

/** What the cut needs to know to say how to continue: the call's arguments and the method's paging. */
export interface Continuation {
  tool: string;
  args: Obj;
  paging?: Paging;
}

function isObject(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** `obj` with some keys replaced or left out (`undefined`), the rest in their order. */
function patched(obj: Obj, patch: Obj): Obj {
  const entries: Array<[string, unknown]> = [];
  for (const [k, v] of Object.entries(obj)) {
    if (!Object.hasOwn(patch, k)) entries.push([k, v]);
    else if (patch[k] !== undefined) entries.push([k, patch[k]]);
  }
  return entries.length === 0 ? {} : orderedObject(entries);
}

/** The body with the server's keys after its own. */
function withExtras(body: Obj, extras: Obj): Obj {
  const add = Object.entries(extras).filter(([, v]) => v !== undefined);
  return add.length === 0 ? body : orderedObject([...Object.entries(body), ...add]);
}

/** The result of a success body (an object) with the server's keys beside it. */
function render(body: Obj, extras: Obj): CallToolResult {
  const whole = withExtras(body, extras);
  return { content: [{ type: 'text', text: JSON.stringify(whole) }], structuredContent: whole };
}

/** The size the budget counts: the result as JSON. */
export function resultSize(result: unknown): number {
  return JSON.stringify(result).length;
}

/** What a render()'s result adds to its text and the text's JSON string: the keys and brackets. */
const RENDER_FRAME = resultSize(render({}, {})) - '"{}"'.length - '{}'.length;

/**
 * Whether a render()'s result is at most `limit` by resultSize, worked out from its text: its
 * structuredContent is the object the text is the JSON of, so the body is not serialized a
 * second time; and a text short enough fits without being escaped again either, since a
 * character of it is at most 6 in its JSON string (`\u001f`).
 */
function renderedWithin(result: CallToolResult, limit: number): boolean {
  const text = (result.content[0] as { text: string }).text;
  if (RENDER_FRAME + 2 + 7 * text.length <= limit) return true;
  return RENDER_FRAME + JSON.stringify(text).length + text.length <= limit;
}

/** Page sizes that keep later pages lined up: 2^a·5^b (…, 100, 125, 128, 160, 200, 250, 256, …). */
function roundAtMost(most: number): number {
  let best = 1;
  for (let five = 1; five <= most; five *= 5) for (let n = five; n <= most; n *= 2) best = Math.max(best, n);
  return best;
}

/**
 * The page size the items kept from a page starting at `start` can be shown as: a divisor of
 * `start` at most `fit`, so that they are one whole page at that size; from the first item, a
 * round size, whose multiples have many divisors for later cuts.
 */
function pageSizeAtMost(start: number, fit: number): number {
  if (start === 0) return roundAtMost(fit);
  for (let d = fit; d > 1; d--) if (start % d === 0) return d;
  return 1;
}

/**
 * Where a cut page continues. Offset paging (`meta.offset`): the same arguments from the first
 * item not shown; a page of a method that also pages by offset, the same by offset. Page paging
 * with a size parameter: the shown items become one smaller page that starts where this page
 * starts (so `kept` may shrink to a size that lines up), and `next` is the page after it at that
 * size; page and size then page on as usual. A fixed page size: the next page (what it skips is
 * named in a warning). No paging: nothing continues.
 */
function continueAfter(body: Obj, fit: number, c: Continuation): { kept: number; next: Obj | null; skipped: boolean } {
  const meta = isObject(body.meta) ? body.meta : {};
  if (typeof meta.offset === 'number') return { kept: fit, next: { ...c.args, offset: meta.offset + fit }, skipped: false };
  if (typeof meta.current_page === 'number' && typeof meta.per_page === 'number') {
    const start = (meta.current_page - 1) * meta.per_page;
    const size = c.paging?.size;
    if (c.paging?.byOffset) {
      const rest = { ...c.args };
      delete rest.page;
      if (size) delete rest[size];
      return { kept: fit, next: { ...rest, offset: start + fit, limit: meta.per_page }, skipped: false };
    }
    if (size) {
      const kept = pageSizeAtMost(start, fit);
      return { kept, next: { ...c.args, page: start / kept + 2, [size]: kept }, skipped: false };
    }
    return { kept: fit, next: { ...c.args, page: meta.current_page + 1 }, skipped: true };
  }
  return { kept: fit, next: null, skipped: false };
}

/** A copy of `v` with every string longer than `most` cut to `most` characters and "…". */
export function shortenStrings(v: unknown, most: number): unknown {
  if (typeof v === 'string') return v.length > most ? `${v.slice(0, most)}…` : v;
  if (Array.isArray(v)) return v.map((x) => shortenStrings(x, most));
  if (!isObject(v)) return v;
  const entries = Object.entries(v);
  return entries.length === 0 ? v : orderedObject(entries.map(([k, x]) => [k, shortenStrings(x, most)] as const));
}

function longestString(v: unknown): number {
  if (typeof v === 'string') return v.length;
  if (Array.isArray(v)) return v.reduce((n: number, x) => Math.max(n, longestString(x)), 0);
  return isObject(v) ? Object.values(v).reduce((n: number, x) => Math.max(n, longestString(x)), 0) : 0;
}

/** The longest cut of long strings (binary search) for which `fits` holds; -1 when none does. */
export function fitStrings(value: unknown, fits: (shortened: unknown, most: number) => boolean): number {
  let lo = 0;
  let hi = longestString(value);
  if (!fits(shortenStrings(value, 0), 0)) return -1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(shortenStrings(value, mid), mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The most leading items (binary search) for which `fits` holds: 0 when not even one. */
export function longestPrefix<T>(items: readonly T[], fits: (prefix: T[]) => boolean): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(items.slice(0, mid))) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function cutNote(budget: number, t: Truncated, c: Continuation | undefined, skipped: unknown[]): string {
  const parts = [`Cut to the result budget of ${budget} characters: ${t.kept} of the ${t.of} items of this answer are shown.`];
  if (t.cut_strings_at !== undefined) parts.push(`Text values longer than ${t.cut_strings_at} characters end in "…" here.`);
  if (t.next && c) parts.push(`For the rest call ${c.tool} with the arguments in truncated.next.`);
  if (skipped.length) {
    const ids = skipped.map((x) => (isObject(x) && (typeof x.id === 'string' || typeof x.id === 'number') ? x.id : undefined));
    const known = ids.every((id) => id !== undefined);
    parts.push(
      `truncated.next is the next page: the ${skipped.length} items after these on this page are skipped${known ? ` (their ids: ${ids.join(', ')})` : ''}.`,
    );
  }
  if (c?.paging?.whole) parts.push(`Every one at once: ${c.paging.whole}.`);
  return parts.join(' ');
}

/**
 * The result of a success body, within `budget`: the body whole when it fits; else `data` cut
 * to the items that fit, and strings shortened only when one item alone is over the budget.
 */
export function fitResult(body: Obj, extras: Obj, budget: number, c?: Continuation): CallToolResult {
  const whole = render(body, extras);
  // The notes name the budget as set; the sizes are checked against what is left of it for us.
  const limit = budget - PROTOCOL_ROOM;
  if (renderedWithin(whole, limit)) return whole;
  const warnings = Array.isArray(extras.warnings) ? (extras.warnings as string[]) : [];
  const build = (b: Obj, t: Truncated, skipped: unknown[]) =>
    render(b, { ...extras, warnings: [...warnings, cutNote(budget, t, c, skipped)], truncated: t });
  const data = body.data;
  if (Array.isArray(data) && data.length > 0) {
    const at = (items: unknown[]) => patched(body, { data: items });
    // Each item costs its JSON in structuredContent and its escaped JSON in the text, a comma each.
    const cost = data.map((item) => {
      const json = JSON.stringify(item);
      return json.length + JSON.stringify(json).length;
    });
    const probe = (kept: number) => {
      const k = continueAfter(body, kept, c ?? { tool: '', args: {} });
      const t: Truncated = { kept: k.kept, of: data.length, next: c ? k.next : null };
      return { t, skipped: k.skipped ? data.slice(k.kept) : [] };
    };
    // The envelope with no item (and the longest notes it may carry), then as many items as fit.
    const empty = probe(Math.max(1, data.length - 1));
    let room = limit - resultSize(build(at([]), empty.t, empty.skipped));
    let fit = 0;
    while (fit < data.length && cost[fit]! <= room) room -= cost[fit++]!;
    for (; fit > 0; fit--) {
      const { t, skipped } = probe(fit);
      const result = build(at(data.slice(0, t.kept)), t, skipped);
      if (resultSize(result) <= limit) return result;
    }
    // Not even the first item fits: it alone, its long strings shortened.
    const { t, skipped } = probe(1);
    const most = fitStrings(data[0], (short, m) => resultSize(build(at([short]), { ...t, cut_strings_at: m }, skipped)) <= limit);
    if (most >= 0) return build(at([shortenStrings(data[0], most)]), { ...t, cut_strings_at: most }, skipped);
  }
  // No list to cut (or nothing fits): the body itself, its long strings shortened.
  const t: Truncated = { kept: 1, of: 1, next: null };
  const most = fitStrings(body, (short, m) => resultSize(build(short as Obj, { ...t, cut_strings_at: m }, [])) <= limit);
  if (most >= 0) return build(shortenStrings(body, most) as Obj, { ...t, cut_strings_at: most }, []);
  // Only a budget smaller than any answer gets here (the CLI refuses those): the note alone.
  return build({}, { ...t, kept: 0 }, []);
}

/**
 * An error result within `budget`: its `errors` cut to the fields that fit (a validation error
 * names every bad item of a long array), with `truncated` saying how many were kept.
 */
export function fitError(error: Obj, budget: number): CallToolResult {
  const renderError = (e: Obj): CallToolResult => ({ isError: true, content: [{ type: 'text', text: JSON.stringify(e) }] });
  const limit = budget - PROTOCOL_ROOM;
  const whole = renderError(error);
  if (resultSize(whole) <= limit) return whole;
  const errors = isObject(error.errors) ? Object.entries(error.errors) : [];
  for (let kept = errors.length - 1; kept >= 1; kept = Math.min(kept - 1, Math.floor(kept * 0.9))) {
    const cut = renderError({
      ...patched(error, { errors: orderedObject(errors.slice(0, kept)) }),
      truncated: { kept, of: errors.length, next: null },
    });
    if (resultSize(cut) <= limit) return cut;
  }
  const most = fitStrings(error, (short) => resultSize(renderError(short as Obj)) <= limit);
  return renderError(
    most >= 0 ? (shortenStrings(error, most) as Obj) : { status: error.status, message: 'The error was longer than the result budget.' },
  );
}
