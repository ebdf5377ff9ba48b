/** Flag parsing for the commands (node's parseArgs), with usage errors that exit 2. */
import { parseArgs, type ParseArgsConfig } from 'node:util';

export class UsageError extends Error {}

export interface Parsed {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

export function parse(args: string[], options: ParseArgsConfig['options'], positionals = 0): Parsed {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: positionals > 0, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (parsed.positionals.length > positionals) throw new UsageError(`unexpected argument: ${parsed.positionals[positionals]}`);
  return { values: parsed.values as Parsed['values'], positionals: parsed.positionals };
}

export function intFlag(v: unknown, name: string, min = 0, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^\d+$/.test(v) || Number(v) < min || Number(v) > max)
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}`);
  return Number(v);
}
