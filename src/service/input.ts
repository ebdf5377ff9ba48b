/** Input as Laravel's middleware leaves it: strings trimmed, `""` turned into null, everywhere. */

/** Trim every string and turn empty strings into null, recursively. */
export function normalizeInput(value: unknown): unknown {
  if (typeof value === 'string') {
    const t = value.trim();
    return t === '' ? null : t;
  }
  if (Array.isArray(value)) return value.map(normalizeInput);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      // An own `__proto__` key (JSON.parse makes them) would set the prototype here.
      if (k === '__proto__') continue;
      out[k] = normalizeInput(v);
    }
    return out;
  }
  return value;
}

/** PHP's json_decode gives up past 512 levels; so does the service (and it keeps the stack safe). */
export const MAX_DEPTH = 512;

/** Whether `value` nests arrays or objects deeper than `limit`, checked without recursion. */
export function tooDeep(value: unknown, limit = MAX_DEPTH): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= limit) return true;
    for (const x of Object.values(v)) if (x !== null && typeof x === 'object') stack.push([x, depth + 1]);
  }
  return false;
}
