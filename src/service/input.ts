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
