/** Flag parsing for the commands (node's parseArgs), with usage errors that exit 2. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Flags } from './help.js';

export class UsageError extends Error {}

export interface Parsed {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

/**
 * `--rate-limit -1` as `--rate-limit=-1`: parseArgs reads a value that starts with a dash as
 * the next option and answers with its own advice; a number belongs to the flag before it, so
 * that our range check speaks instead.
 */
function joinNegativeNumbers(args: string[], options: ParseArgsConfig['options']): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const next = args[i + 1];
    const name = a.startsWith('--') && !a.includes('=') ? a.slice(2) : undefined;
    if (name !== undefined && options?.[name]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

/** Edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`: the optimal string alignment distance. */
function edits(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  return d[a.length]![b.length]!;
}

/** The one of `known` that `typed` is most likely a slip of (at most two edits, and fewer than half its letters), if any. */
export function closest(typed: string, known: readonly string[]): string | undefined {
  let best: { name: string; n: number } | undefined;
  for (const name of known) {
    const n = edits(typed.toLowerCase(), name);
    if (n <= 2 && n * 2 < Math.max(name.length, typed.length) && (!best || n < best.n)) best = { name, n };
  }
  return best?.name;
}

/** parseArgs's own message, said as ours: what was wrong and what the command takes. */
function parseMessage(e: Error & { code?: string }, options: ParseArgsConfig['options']): string {
  const flags = Object.keys(options ?? {})
    .map((n) => `--${n}`)
    .join(', ');
  const flag = /'(--?[^' ]+)/.exec(e.message)?.[1];
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const meant = flag?.startsWith('--') ? closest(flag.slice(2).split('=')[0]!, Object.keys(options ?? {})) : undefined;
    return `unknown option ${flag ?? ''}: ${meant ? `did you mean --${meant}? ` : ''}this command takes ${flags || 'no options'} (workspace-mcp --help lists them)`;
  }
  if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') return `${flag ?? 'an option'} needs a value (${flag ?? 'the option'} VALUE)`;
  return e.message;
}

/** The flags of a command's table (help.ts): the table is the parser's, so the help cannot drift from it. */
export function parse(args: string[], flags: Flags, positionals = 0): Parsed {
  const options: ParseArgsConfig['options'] = Object.fromEntries(Object.entries(flags).map(([name, f]) => [name, { type: f.type }]));
  let parsed;
  try {
    parsed = parseArgs({ args: joinNegativeNumbers(args, options), options, allowPositionals: positionals > 0, strict: true });
  } catch (e) {
    throw new UsageError(parseMessage(e as Error & { code?: string }, options));
  }
  if (parsed.positionals.length > positionals) throw new UsageError(`unexpected argument: ${parsed.positionals[positionals]}`);
  return { values: parsed.values as Parsed['values'], positionals: parsed.positionals };
}

/** A whole-number flag; `hint` says what the number means, for the error line. */
export function intFlag(v: unknown, name: string, min = 0, max = Number.MAX_SAFE_INTEGER, hint = ''): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `${min} or more` : `from ${min} to ${max}`;
    const given = typeof v === 'string' && v !== '' ? `, not ${v}` : '';
    throw new UsageError(`--${name} must be a whole number ${range}${given}${hint ? ` (${hint})` : ''}`);
  }
  return Number(v);
}
