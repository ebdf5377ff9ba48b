/**
 * Errors that teach: notes beside the API's own answer where its words lead a model astray.
 * "The amount field must be an integer." for "10.00" invites 10, which moves 0.10; "The
 * selected currency is invalid." for "usd" does not say capitals; "The selected fields.0.type
 * is invalid." does not list the types. And where the API reads a value other than as sent
 * ("1000" as 1000), the caller is told so. The notes depend only on the arguments and the
 * API's answer, so both backends give the same.
 */
import type { ApiResponse } from '../../api/backend.js';
import { isCurrency } from '../../api/currency.js';
import type { Rule, Shape } from '../../api/rules.js';

type AnyRule = Rule<unknown, boolean>;

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The rule and the value at a dot path of the error bag (`fields.0.type`), when both exist. */
function at(shape: Shape, args: Record<string, unknown>, path: string): { rule: AnyRule; value: unknown } | undefined {
  let rule: AnyRule | undefined;
  let sh: Shape | undefined = shape;
  let value: unknown = args;
  for (const part of path.split('.')) {
    if (rule?.state.kind === 'array' && /^\d+$/.test(part)) {
      rule = rule.state.items;
      value = Array.isArray(value) ? value[Number(part)] : undefined;
    } else {
      if (!sh || !Object.hasOwn(sh, part)) return undefined;
      rule = sh[part];
      value = isObject(value) ? value[part] : undefined;
    }
    sh = rule?.state.shape;
    if (rule?.state.kind === 'array') sh = undefined;
    if (!rule) return undefined;
  }
  return rule ? { rule, value } : undefined;
}

const DECIMAL = /^-?\d+\.\d+$/;
const NUMBER_TEXT = /^-?\d+(\.\d+)?$/;

/** What to say about one refused field, beside the API's message. */
function refusedNote(path: string, rule: AnyRule, value: unknown): string | undefined {
  const s = rule.state;
  const leaf = path.split('.').pop()!;
  if (leaf === 'amount' && s.kind === 'integer') {
    // A number with a fraction, or text with a decimal point ("10.00"): major units, most likely.
    const n =
      typeof value === 'number' && !Number.isInteger(value)
        ? value
        : typeof value === 'string' && DECIMAL.test(value.trim())
          ? Number(value)
          : undefined;
    if (n !== undefined) {
      return (
        `${path} is an integer in minor units of the currency (cents): 10.00 USD is 1000. ` +
        `For ${value} in a currency with cents send ${Math.round(n * 100)}, not ${Math.trunc(n)}.`
      );
    }
  }
  if (
    s.kind === 'string' &&
    typeof value === 'string' &&
    leaf === 'currency' &&
    value !== value.toUpperCase() &&
    isCurrency(value.toUpperCase())
  ) {
    return `Currency codes are ISO 4217 in capitals: send "${value.toUpperCase()}", not "${value}".`;
  }
  if (s.oneOf && typeof value === 'string' && !s.oneOf.includes(value)) return `${path} must be one of: ${s.oneOf.join(', ')}.`;
  return undefined;
}

/** Values the API takes in another type than sent (a number as text): each path and value. */
function coerced(shape: Shape, args: Record<string, unknown>, prefix = ''): Array<[string, string, number | boolean]> {
  const out: Array<[string, string, number | boolean]> = [];
  for (const [key, value] of Object.entries(args)) {
    const rule = Object.hasOwn(shape, key) ? shape[key] : undefined;
    if (!rule) continue;
    const s = rule.state;
    const path = prefix + key;
    if ((s.kind === 'integer' || s.kind === 'number') && typeof value === 'string' && NUMBER_TEXT.test(value))
      out.push([path, value, Number(value)]);
    else if (s.kind === 'boolean' && (value === '1' || value === '0')) out.push([path, value, value === '1']);
    else if (s.kind === 'object' && s.shape && isObject(value)) out.push(...coerced(s.shape, value, `${path}.`));
  }
  return out;
}

/** The notes for a call with these arguments that the API answered so. */
export function argumentNotes(shape: Shape, args: Record<string, unknown>, res: ApiResponse): string[] {
  const notes: string[] = [];
  const body = isObject(res.body) ? res.body : {};
  const refused = res.status === 422 && isObject(body.errors) ? Object.keys(body.errors) : [];
  for (const path of refused) {
    const found = at(shape, args, path);
    const note = found && refusedNote(path, found.rule, found.value);
    if (note && !notes.includes(note)) notes.push(note);
  }
  for (const [path, value, read] of coerced(shape, args)) {
    if (refused.includes(path)) continue;
    notes.push(`${path} was sent as the text "${value}" and read as ${JSON.stringify(read)}: send it as a JSON ${typeof read}.`);
  }
  return notes;
}

/** Argument names that ask for a person: on a read they mean a search, which findContacts does. */
const SEARCH_KEYS = new Set([
  'name',
  'query',
  'q',
  'search',
  'phone',
  'email',
  'username',
  'telegram_username',
  'first_name',
  'last_name',
  'full_name',
]);

/** For an unknown argument of a read that looks like a search for a person: where to search instead. */
export function searchHint(key: string): string | undefined {
  return SEARCH_KEYS.has(key) ? `To find contacts by name, phone, email or username call findContacts {"query": "…"}.` : undefined;
}
