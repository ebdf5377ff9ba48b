/**
 * How deep a parsed JSON value nests, found without recursion, so that a body built to nest
 * thousands of levels is refused before anything recursive (the SDK's re-serialising of the
 * body, schema checks, our argument walks) overflows the stack on it.
 */

/**
 * The deepest a JSON-RPC body may nest, the message itself being level 1. A real one needs
 * far fewer: the envelope takes 3 (message, params, arguments or `_meta`), and the deepest
 * tool argument of the catalog (a list's rows of fields with their options, a filter's
 * conditions) a handful more. 64 leaves room for any client's own `_meta` and is still far
 * below what overflows the stack (a few thousand levels).
 */
export const MAX_JSON_DEPTH = 64;

/** Whether `value` nests objects and arrays more than `max` levels deep (`{}` is 1 level, `{"a":[]}` 2, a scalar 0). */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [v, depth] = next;
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) return true;
    for (const child of Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}
