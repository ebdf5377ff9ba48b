/**
 * A tool's argument NAMES, checked strictly (a misspelt `ammount` is a 422 naming the near
 * name, never dropped), and a composite tool's arguments checked as an API method's are:
 * names the tool does not take, then values, each failure a 422 in Laravel's shape.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { fail } from '../../api/errors.js';
import { validate, type Infer, type Shape } from '../../api/rules.js';
import { refusal } from '../result/results.js';

/** Levenshtein distance, for "did you mean" on a misspelt argument. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}

/** Where a misspelt or misplaced argument belongs: a near name (by edit distance, a third of its length), or `elsewhere`. */
function unknownKeyMessage(key: string, known: string[], elsewhere?: (key: string) => string | undefined): string {
  const name = key.includes('.') ? key : key.replace(/_/g, ' ');
  const leaf = key.split('.').pop()!;
  const most = Math.max(1, Math.floor(leaf.length / 3));
  const near = known.filter((k) => distance(k, leaf) <= most).sort((a, b) => distance(a, leaf) - distance(b, leaf))[0];
  const other = key.includes('.') ? undefined : elsewhere?.(leaf);
  const hint = other ? ` ${other}` : near ? ` Did you mean ${near}?` : '';
  return `The ${name} field is not a parameter of this tool.${hint} Known parameters: ${known.join(', ') || 'none'}.`;
}

/**
 * Names the schema does not know, at any depth, as Laravel-style errors (`fields.0.colour`).
 * Only unknown names are reported here; wrong values are the API's to judge.
 */
export function unknownArguments(
  shape: Shape,
  args: Record<string, unknown>,
  elsewhere?: (key: string) => string | undefined,
): Map<string, string[]> {
  const errors = new Map<string, string[]>();
  // A walk over the rule shape, not a zod parse: this runs on every tool call.
  const walk = (sh: Shape, value: unknown, prefix: string) => {
    if (!value || typeof value !== 'object' || Array.isArray(value)) return;
    const known = Object.keys(sh);
    for (const [key, v] of Object.entries(value)) {
      const path = prefix + key;
      const rule = Object.hasOwn(sh, key) ? sh[key] : undefined;
      if (!rule) {
        errors.set(path, [unknownKeyMessage(path, known, elsewhere)]);
        continue;
      }
      const st = rule.state;
      if (st.kind === 'object' && st.shape) walk(st.shape, v, `${path}.`);
      else if (st.kind === 'array' && st.items?.state.kind === 'object' && st.items.state.shape && Array.isArray(v))
        v.forEach((item, i) => walk(st.items!.state.shape!, item, `${path}.${i}.`));
    }
  };
  walk(shape, args, '');
  return errors;
}

/** The typed arguments, or the 422 result to answer with. */
export function checkArguments<S extends Shape>(shape: S, args: Record<string, unknown>): { params: Infer<S> } | { error: CallToolResult } {
  const unknown = unknownArguments(shape, args);
  if (unknown.size > 0) return { error: refusal(fail.validation(unknown)) };
  const checked = validate(shape, args);
  if (!checked.ok) return { error: refusal(fail.validation(checked.errors)) };
  return { params: checked.params };
}
