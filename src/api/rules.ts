/**
 * Parameter rules: the one place a method's parameters are described, and the Laravel-style
 * validation they drive (type coercion the way Laravel does it, English messages, dot-path
 * error keys). The MCP layer reads the same rules for its tool schemas (`mcp/tools/schemas.ts`), so
 * a limit is written once. Rules are immutable: every builder call returns a copy.
 */

type Kind = 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object' | 'map' | 'any';

/**
 * The JSON type an MCP schema advertises for a leniently read parameter, said as the API docs
 * say it: one of them alone, or one value or a list of them (getReferrals' tag filters).
 */
export type Advertised = 'integer' | 'string' | 'object' | 'string or array of strings' | 'integer or array of integers';

export interface RuleState {
  kind: Kind;
  required: boolean;
  requiredWithout?: string;
  /** Laravel `required_if:other,value,...`. */
  requiredIf?: { other: string; values: readonly string[] };
  description?: string;
  min?: number;
  max?: number;
  oneOf?: readonly string[];
  pattern?: RegExp;
  format?: 'email' | 'alpha_dash' | 'uuid';
  items?: Rule<unknown, boolean>;
  shape?: Shape;
  /** A kept-for-compatibility parameter: accepted, never acted on. */
  ignored?: boolean;
  /** For a leniently read parameter (`page`): the type its MCP schema advertises. */
  advertise?: Advertised;
  /** Laravel `exclude_with`: when any of these is present, this parameter is dropped unchecked. */
  excludeWith?: readonly string[];
  /** A predicate on the value (after the type checks), with its message; `:attribute` is replaced. */
  check?: { fn: (v: never) => boolean; message: string };
  /** An integer of Unix seconds: a date string given instead is told the seconds it means. */
  unixSeconds?: boolean;
}

/** A parameter rule; `T` is the value after validation, `R` whether it is always present. */
export class Rule<T, R extends boolean = false> {
  declare readonly _type: T;
  declare readonly _required: R;
  constructor(readonly state: RuleState) {}

  private with<T2 = T, R2 extends boolean = R>(patch: Partial<RuleState>): Rule<T2, R2> {
    return new Rule<T2, R2>({ ...this.state, ...patch });
  }
  required(): Rule<T, true> {
    return this.with<T, true>({ required: true });
  }
  /** Laravel `required_without:other`: required when `other` is absent. */
  requiredWithout(other: string): Rule<T, false> {
    return this.with<T, false>({ requiredWithout: other });
  }
  /** Laravel `required_if:other,values...`: required when `other` is one of `values`. */
  requiredIf(other: string, ...values: string[]): Rule<T, false> {
    return this.with<T, false>({ requiredIf: { other, values } });
  }
  describe(text: string): Rule<T, R> {
    return this.with({ description: text });
  }
  min(n: number): Rule<T, R> {
    return this.with({ min: n });
  }
  max(n: number): Rule<T, R> {
    return this.with({ max: n });
  }
  between(lo: number, hi: number): Rule<T, R> {
    return this.with({ min: lo, max: hi });
  }
  regex(pattern: RegExp): Rule<T, R> {
    return this.with({ pattern });
  }
  ignored(): Rule<T, R> {
    return this.with({ ignored: true });
  }
  /** Read leniently here (anything goes), but advertised to MCP clients as this type. */
  advertise(as: Advertised): Rule<T, R> {
    return this.with({ advertise: as });
  }
  /** Laravel `exclude_with:a,b`: ignored (not validated, not passed on) when `a` or `b` is present. */
  excludeWith(...others: string[]): Rule<T, R> {
    return this.with({ excludeWith: others });
  }
  /** A check no built-in rule covers (an ISO 4217 code): `message` may use `:attribute`. */
  check(fn: (v: T) => boolean, message: string): Rule<T, R> {
    return this.with({ check: { fn: fn as (v: never) => boolean, message } });
  }
}

export type Shape = Record<string, Rule<unknown, boolean>>;

/** The validated parameters of a shape, as handlers receive them. */
export type Infer<S extends Shape> = {
  [K in keyof S as S[K] extends Rule<unknown, true> ? K : never]: S[K]['_type'];
} & {
  [K in keyof S as S[K] extends Rule<unknown, true> ? never : K]?: S[K]['_type'];
};

export const r = {
  string: () => new Rule<string>({ kind: 'string', required: false }),
  /** One of a closed set of strings (Laravel `in:`). */
  oneOf: <const V extends readonly string[]>(values: V) => new Rule<V[number]>({ kind: 'string', required: false, oneOf: values }),
  email: () => new Rule<string>({ kind: 'string', required: false, format: 'email' }),
  alphaDash: () => new Rule<string>({ kind: 'string', required: false, format: 'alpha_dash' }),
  uuid: () => new Rule<string>({ kind: 'string', required: false, format: 'uuid' }),
  integer: () => new Rule<number>({ kind: 'integer', required: false }),
  /** An integer of Unix seconds (a time); Laravel's `integer`, with the seconds a date string means. */
  unixSeconds: () => new Rule<number>({ kind: 'integer', required: false, unixSeconds: true }),
  number: () => new Rule<number>({ kind: 'number', required: false }),
  boolean: () => new Rule<boolean>({ kind: 'boolean', required: false }),
  array: <I extends Rule<unknown, boolean>>(items: I) => new Rule<Array<I['_type']>>({ kind: 'array', required: false, items }),
  object: <S extends Shape>(shape: S) => new Rule<Infer<S>>({ kind: 'object', required: false, shape }),
  /** An object with free keys (a record's `data`, list `filters`). */
  map: () => new Rule<Record<string, unknown>>({ kind: 'map', required: false }),
  any: () => new Rule<unknown>({ kind: 'any', required: false }),
};

// ---------------------------------------------------------------------------------------
// Validation, the Laravel way.

export type ErrorBag = Map<string, string[]>;

/** What each string format accepts, here and in the tool schemas. */
export const FORMAT_PATTERNS = {
  email: /^[^\s@]+@[^\s@]+$/u,
  alpha_dash: /^[\p{L}\p{M}\p{N}_-]+$/u,
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/iu,
} as const;
const INTEGER_TEXT = /^-?(0|[1-9][0-9]*)$/;
const NUMBER_TEXT = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$/;

/**
 * Laravel's attribute name: `_` as spaces (`field.is_required` → `field.is required`), except
 * for keys expanded from a wildcard over an array (`fields.0.is_required`), shown raw.
 */
export function attributeName(key: string): string {
  return /(^|\.)\d+(\.|$)/.test(key) ? key : key.replace(/_/g, ' ');
}

function isPresent(v: unknown): boolean {
  return v !== undefined && v !== null;
}

/** Laravel's `required` also refuses an empty array (a JSON `[]` or `{}`). */
function isFilled(v: unknown): boolean {
  if (!isPresent(v)) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v as object).length > 0;
  return true;
}

/** What Laravel's type rule says of a null item in an array (`tags.1`). */
function nullItemMessage(rule: RuleState, key: string): string {
  switch (rule.kind) {
    case 'string':
      return `The ${key} field must be a string.`;
    case 'integer':
      return `The ${key} field must be an integer.`;
    case 'number':
      return `The ${key} field must be a number.`;
    case 'boolean':
      return `The ${key} field must be true or false.`;
    default:
      return `The ${key} field must be an array.`;
  }
}

/** An ISO 8601 date, or date and time (UTC unless it names an offset): what a person may send for a time. */
const ISO_DATE = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * Laravel's "must be an integer", and for a date string the Unix seconds it means:
 * `The date from field must be an integer: Unix seconds, e.g. 1704067200 for 2024-01-01T00:00:00Z.`
 */
function unixSecondsMessage(attr: string, v: unknown): string {
  const base = `The ${attr} field must be an integer`;
  const m = typeof v === 'string' ? ISO_DATE.exec(v.trim()) : null;
  if (!m) return `${base}.`;
  const zone = m[3] ? (m[3].length === 5 ? `${m[3].slice(0, 3)}:${m[3].slice(3)}` : m[3].toUpperCase()) : 'Z';
  const ms = Date.parse(`${m[1]}T${m[2] ?? '00:00'}${zone}`);
  // A date that does not exist (2024-02-30 reads as March) is not named.
  if (!Number.isFinite(ms) || new Date(ms + offsetMs(zone)).toISOString().slice(0, 10) !== m[1]) return `${base}.`;
  const seconds = Math.floor(ms / 1000);
  return `${base}: Unix seconds, e.g. ${seconds} for ${new Date(seconds * 1000).toISOString().replace('.000Z', 'Z')}.`;
}

/** Milliseconds east of UTC of an offset (`Z`, `+03:00`, `-0530`). */
function offsetMs(zone: string): number {
  if (zone === 'Z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  return sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(-2))) * 60_000;
}

/** String length in characters (code points), as PHP's mb_strlen counts. */
export function charLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function rangeMessage(attr: string, rule: RuleState, unit: 'numeric' | 'string' | 'array'): string {
  const { min, max } = rule;
  const suffix = unit === 'string' ? ' characters' : unit === 'array' ? ' items' : '';
  if (min !== undefined && max !== undefined && unit !== 'array') return `The ${attr} field must be between ${min} and ${max}${suffix}.`;
  if (unit === 'array') {
    return min !== undefined && max === undefined
      ? `The ${attr} field must have at least ${min} items.`
      : `The ${attr} field must not have more than ${max} items.`;
  }
  if (min !== undefined && max === undefined) return `The ${attr} field must be at least ${min}${suffix}.`;
  return `The ${attr} field must not be greater than ${max}${suffix}.`;
}

/**
 * Check one value against a rule, coercing it as Laravel's validator accepts it.
 * Returns the coerced value, or undefined after recording an error.
 */
function checkValue(rule: RuleState, key: string, v: unknown, bag: ErrorBag): unknown {
  const attr = attributeName(key);
  // Laravel runs every rule of a field (no `bail`), so one field may collect several messages.
  let failed = false;
  const fail = (msg: string) => {
    bag.set(key, [...(bag.get(key) ?? []), msg]);
    failed = true;
    return undefined;
  };
  const range = (size: number, unit: 'numeric' | 'string' | 'array') => {
    if ((rule.min !== undefined && size < rule.min) || (rule.max !== undefined && size > rule.max)) fail(rangeMessage(attr, rule, unit));
  };
  const sized = rule.min !== undefined || rule.max !== undefined;
  let out: unknown = v;
  switch (rule.kind) {
    case 'string': {
      if (typeof v !== 'string') {
        // Laravel's `string` rule refuses numbers and booleans from JSON.
        return fail(`The ${attr} field must be a string.`);
      }
      if (rule.oneOf && !rule.oneOf.includes(v)) fail(`The selected ${attr} is invalid.`);
      if (sized) range(charLength(v), 'string');
      if (rule.format === 'email' && !FORMAT_PATTERNS.email.test(v)) fail(`The ${attr} field must be a valid email address.`);
      if (rule.format === 'alpha_dash' && !FORMAT_PATTERNS.alpha_dash.test(v))
        fail(`The ${attr} field must only contain letters, numbers, dashes, and underscores.`);
      if (rule.format === 'uuid' && !FORMAT_PATTERNS.uuid.test(v)) fail(`The ${attr} field must be a valid UUID.`);
      if (rule.pattern && !rule.pattern.test(v)) fail(`The ${attr} field format is invalid.`);
      break;
    }
    case 'integer':
    case 'number': {
      const numeric =
        typeof v === 'number' ? (Number.isFinite(v) ? v : undefined) : typeof v === 'string' && NUMBER_TEXT.test(v) ? Number(v) : undefined;
      if (rule.kind === 'integer') {
        const ok =
          (typeof v === 'number' && Number.isSafeInteger(v)) ||
          (typeof v === 'string' && INTEGER_TEXT.test(v) && Number.isSafeInteger(Number(v)));
        if (!ok) fail(rule.unixSeconds ? unixSecondsMessage(attr, v) : `The ${attr} field must be an integer.`);
      } else if (numeric === undefined) {
        fail(`The ${attr} field must be a number.`);
      }
      // A numeric value is also measured as a number when it failed `integer` (-1.5).
      if (sized && numeric !== undefined) range(numeric, 'numeric');
      out = numeric;
      break;
    }
    case 'boolean': {
      if (v === true || v === 1 || v === '1') out = true;
      else if (v === false || v === 0 || v === '0') out = false;
      else return fail(`The ${attr} field must be true or false.`);
      break;
    }
    case 'array': {
      if (!Array.isArray(v)) return fail(`The ${attr} field must be an array.`);
      if (sized) range(v.length, 'array');
      break;
    }
    case 'object':
    case 'map': {
      if (typeof v !== 'object' || v === null) return fail(`The ${attr} field must be an array.`);
      // A PHP array is a map: a list given where a map is expected has the keys 0, 1, 2 …
      if (Array.isArray(v)) out = Object.fromEntries(v.map((x, i) => [String(i), x]));
      break;
    }
    case 'any':
      break;
  }
  if (failed) return undefined;
  if (rule.check && !rule.check.fn(out as never)) return fail(rule.check.message.replace(':attribute', attr));
  return out;
}

/**
 * Validate input against a shape. Errors go into `bag` under dot paths; nested errors are
 * collected in `nested` so they can follow the top-level ones, as Laravel lists them.
 */
function validateShape(
  shape: Shape,
  input: Record<string, unknown>,
  prefix: string,
  bag: ErrorBag,
  nested: ErrorBag,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const target = prefix === '' ? bag : nested;
  for (const [name, rule] of Object.entries(shape)) {
    const s = rule.state;
    const key = prefix + name;
    const v = Object.hasOwn(input, name) ? input[name] : undefined;
    if (s.excludeWith?.some((o) => isPresent(input[o]))) continue;
    if (!isPresent(v) || (s.required && !isFilled(v))) {
      if (s.required) target.set(key, [`The ${attributeName(key)} field is required.`]);
      else if (s.requiredWithout && !isPresent(input[s.requiredWithout]))
        target.set(key, [`The ${attributeName(key)} field is required when ${attributeName(prefix + s.requiredWithout)} is not present.`]);
      else if (s.requiredIf) {
        const other = input[s.requiredIf.other];
        if (isPresent(other) && s.requiredIf.values.includes(String(other)))
          target.set(key, [
            `The ${attributeName(key)} field is required when ${attributeName(prefix + s.requiredIf.other)} is ${String(other)}.`,
          ]);
      }
      continue;
    }
    const checked = checkValue(s, key, v, target);
    if (checked === undefined) continue;
    if (s.ignored) continue;
    if (s.kind === 'array' && s.items) {
      const items: unknown[] = [];
      (checked as unknown[]).forEach((item, i) => {
        const itemKey = `${key}.${i}`;
        const is = s.items!.state;
        if (is.kind === 'object' && is.shape) {
          if (typeof item !== 'object' || item === null || Array.isArray(item)) {
            nested.set(itemKey, [`The ${itemKey} field must be an array.`]);
            items.push(undefined);
            return;
          }
          items.push(validateShape(is.shape, item as Record<string, unknown>, itemKey + '.', nested, nested));
        } else if (!isPresent(item)) {
          // Laravel checks a null item (an empty string becomes one) like any other value.
          nested.set(itemKey, [is.required ? `The ${itemKey} field is required.` : nullItemMessage(is, itemKey)]);
          items.push(undefined);
        } else {
          items.push(checkValue(is, itemKey, item, nested));
        }
      });
      out[name] = items;
    } else if (s.kind === 'object' && s.shape) {
      out[name] = validateShape(s.shape, checked as Record<string, unknown>, key + '.', nested, nested);
    } else {
      out[name] = checked;
    }
  }
  return out;
}

/** Validate raw input; returns the typed params or the error bag (top-level keys first). */
export function validate<S extends Shape>(
  shape: S,
  input: Record<string, unknown>,
): { ok: true; params: Infer<S> } | { ok: false; errors: ErrorBag; partial: Record<string, unknown> } {
  const bag: ErrorBag = new Map();
  const nested: ErrorBag = new Map();
  const params = validateShape(shape, input, '', bag, nested);
  for (const [k, v] of nested) bag.set(k, [...(bag.get(k) ?? []), ...v]);
  // On failure the values that did pass come back too (items keep their index), so checks
  // that need the database can still report their errors in the same answer.
  if (bag.size > 0) return { ok: false, errors: bag, partial: params };
  return { ok: true, params: params as Infer<S> };
}
