/**
 * The parameter rules of the contract as zod, for the MCP tools' JSON Schemas: the same limits,
 * enums and string formats (email, uuid, alpha_dash) the API's validator applies. Argument
 * values are still judged by the API; these schemas tell a client what it will accept.
 */
import { z } from 'zod';
import { FORMAT_PATTERNS, type Rule, type Shape } from '../api/rules.js';

export type JsonSchema = { type: 'object'; [k: string]: unknown };

function stringOf(rule: Rule<unknown, boolean>): z.ZodType {
  const s = rule.state;
  if (s.oneOf) return z.enum(s.oneOf as [string, ...string[]]);
  let str =
    s.format === 'email'
      ? z.email({ pattern: FORMAT_PATTERNS.email })
      : s.format === 'uuid'
        ? z.guid()
        : s.format === 'alpha_dash'
          ? z.string().regex(FORMAT_PATTERNS.alpha_dash)
          : z.string();
  if (s.pattern) str = str.regex(s.pattern);
  if (s.min !== undefined) str = str.min(s.min);
  if (s.max !== undefined) str = str.max(s.max);
  return str;
}

function ruleToZod(rule: Rule<unknown, boolean>): z.ZodType {
  const s = rule.state;
  let t: z.ZodType;
  switch (s.kind) {
    case 'string':
      t = stringOf(rule);
      break;
    case 'integer':
    case 'number': {
      let n = s.kind === 'integer' ? z.number().int() : z.number();
      if (s.min !== undefined) n = n.min(s.min);
      if (s.max !== undefined) n = n.max(s.max);
      t = n;
      break;
    }
    case 'boolean':
      t = z.boolean();
      break;
    case 'array': {
      let a = z.array(s.items ? ruleToZod(s.items) : z.unknown());
      if (s.min !== undefined) a = a.min(s.min);
      if (s.max !== undefined) a = a.max(s.max);
      t = a;
      break;
    }
    case 'object':
      t = shapeToZod(s.shape ?? {});
      break;
    case 'map':
      t = z.record(z.string(), z.unknown());
      break;
    default:
      t =
        s.advertise === 'integer'
          ? z.number().int()
          : s.advertise === 'string'
            ? z.string()
            : s.advertise === 'object'
              ? z.record(z.string(), z.unknown())
              : z.unknown();
  }
  if (s.description) t = t.describe(s.description);
  return s.required ? t : t.optional();
}

/** The zod object for a shape; strict, so an unknown argument is refused. */
export function shapeToZod(shape: Shape): z.ZodObject {
  const entries: Record<string, z.ZodType> = {};
  for (const [k, rule] of Object.entries(shape)) entries[k] = ruleToZod(rule);
  return z.object(entries).strict();
}

/**
 * A tool's JSON Schemas, each made from its zod schema on first read (the first tools/list or
 * call) rather than when the tool is built at start-up: making them is a fair part of a cold
 * start, and a server that is only asked server/discover never needs them.
 */
export function lazySchemas(input: () => z.ZodType, output: () => z.ZodType): { input(): JsonSchema; output(): JsonSchema } {
  let i: JsonSchema | undefined;
  let o: JsonSchema | undefined;
  return { input: () => (i ??= toJsonSchema(input())), output: () => (o ??= toJsonSchema(output())) };
}

/** The JSON Schema of a zod schema, as tools/list advertises it (draft 7, like the SDK's own). */
export function toJsonSchema(schema: z.ZodType): JsonSchema {
  // Always in zod's input mode, output schemas too: there a plain object allows extra keys, so
  // keys beside the documented ones (a list field's own keys, `replayed`, `warnings`) do not
  // fail the client's check of structuredContent. Strict objects (tool inputs) stay closed.
  return z.toJSONSchema(schema, { target: 'draft-7', io: 'input', unrepresentable: 'any' }) as JsonSchema;
}
