/**
 * The parameter rules of the contract as zod, for the MCP tools' JSON Schemas: the same limits,
 * enums and string formats (email, uuid, alpha_dash) the API's validator applies. Argument
 * values are still judged by the API; these schemas tell a client what it will accept.
 *
 * Every client sends the input schemas to its model with every conversation, so they are
 * written compact: no `$schema`, no bounds that only restate a safe integer, nullable types as
 * `type: [t, "null"]`. Output schemas are read by programs, not models: compact too, and
 * without prose.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { deepFreeze } from '../../common/frozen.js';
import { FORMAT_PATTERNS, type Advertised, type Rule, type Shape } from '../../api/rules.js';

import type { JsonSchema } from '../tool-spec.js';
export type { JsonSchema };
type Node = Record<string, unknown>;

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

/** What a leniently read parameter's schema says it takes (a union: an `anyOf` of typed schemas). */
const ADVERTISED: Record<Advertised, () => z.ZodType> = {
  integer: () => z.number().int(),
  string: () => z.string(),
  object: () => z.record(z.string(), z.unknown()),
  'string or array of strings': () => z.union([z.string(), z.array(z.string())]),
  'integer or array of integers': () => z.union([z.number().int(), z.array(z.number().int())]),
};

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
      t = s.advertise ? ADVERTISED[s.advertise]() : z.unknown();
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

/** A tool's JSON Schemas as tools/list lists them (no output schema: none listed). */
type Listed = { input: JsonSchema; output?: JsonSchema };

/** The file `npm run build` writes beside the command's bundle (tools/build-schemas.mjs). */
export const BUILT_SCHEMAS_FILE = 'tool-schemas.json';

let built: Record<string, Listed> | undefined;

/**
 * Every tool's JSON Schemas as the build made them, by tool name: made from the zod schemas by
 * the same code (below) when the product was built, since making them costs a stdio server's
 * first tools/list some 40 ms (docs/BENCHMARKS.md) and they depend on nothing but the code: no
 * flag, backend or owner changes a tool's schemas. Read from beside the command's bundle; empty
 * where there is no such file (running from the sources, tsc's own output), and then each
 * schema is made from zod on first read.
 */
function builtSchemas(): Record<string, Listed> {
  if (built) return built;
  built = {};
  try {
    const read: unknown = JSON.parse(readFileSync(new URL(`./${BUILT_SCHEMAS_FILE}`, import.meta.url), 'utf8'));
    // Frozen: the same objects are listed to every client and every owner's context.
    if (isNode(read)) built = deepFreeze(read) as Record<string, Listed>;
  } catch {
    // No file (or not one of ours): every schema is made from zod.
  }
  return built;
}

/** The build's schema `which` of `tool`, when it has one. */
function builtOf(tool: string, which: keyof Listed): JsonSchema | undefined {
  const all = builtSchemas();
  const entry = Object.hasOwn(all, tool) ? all[tool] : undefined;
  const schema = isNode(entry) ? entry[which] : undefined;
  return isNode(schema) && schema.type === 'object' ? schema : undefined;
}

/** A tool's input schema: the build's, else `make`'s now. */
export function inputSchemaOf(tool: string, make: () => JsonSchema): JsonSchema {
  return builtOf(tool, 'input') ?? make();
}

/** A tool's output schema: the build's, else made from its zod schema now. */
export function outputSchemaOf(tool: string, make: () => z.ZodType): JsonSchema {
  return builtOf(tool, 'output') ?? toJsonSchema(make(), { output: true });
}

const SAFE = Number.MAX_SAFE_INTEGER;

function isNode(v: unknown): v is Node {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** What an output schema leaves out: prose and the rules on values (it gives the shape). */
const OUTPUT_RULES = new Set(['description', 'enum', 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern', 'format']);

/**
 * One node made compact, children first: zod's ±(2^53 − 1) bounds of every integer dropped
 * (they say "a JSON integer"), `{anyOf: [{type: t}, {type: "null"}]}` as `type: [t, "null"]`,
 * `propertyNames: {type: "string"}` dropped (JSON keys are strings), and in an input schema
 * `additionalProperties: {}` too (any value, as with none: a tool's text is paid for); for an output schema,
 * descriptions, the rules on values (enums, bounds, patterns) and the `required` lists below the
 * top dropped too (the shape, not every rule), and a part marked `brief` given as its bare type.
 */
function compactNode(node: Node, output: boolean, top = true): Node {
  // A part marked `brief` (src/api/shapes.ts): its bare type in an output schema.
  if (node.brief === true) return output ? { type: node.type } : compactNode(withoutBrief(node), output, top);
  const out: Node = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === '$schema' || (output && (OUTPUT_RULES.has(k) || (k === 'required' && !top)))) continue;
    if ((k === 'minimum' && v === -SAFE) || (k === 'maximum' && v === SAFE)) continue;
    if (k === 'propertyNames' && isNode(v) && v.type === 'string' && Object.keys(v).length === 1) continue;
    if (!output && k === 'additionalProperties' && isNode(v) && Object.keys(v).length === 0) continue;
    if (k === 'properties' && isNode(v)) {
      out[k] = Object.fromEntries(Object.entries(v).map(([p, s]) => [p, isNode(s) ? compactNode(s, output, false) : s]));
    } else if (Array.isArray(v)) out[k] = v.map((x) => (isNode(x) ? compactNode(x, output, top && k === 'anyOf') : x));
    else out[k] = isNode(v) ? compactNode(v, output, false) : v;
  }
  const any = out.anyOf;
  if (Array.isArray(any) && any.length === 2) {
    const [a, b] = any as Node[];
    const plain = [a, b].find((x) => x!.type !== 'null');
    const isNull = [a, b].some((x) => x!.type === 'null' && Object.keys(x!).length === 1);
    if (isNull && plain && typeof plain.type === 'string') {
      delete out.anyOf;
      // The outer node's description (a field's own) wins over the type's.
      return { ...plain, ...out, type: [plain.type, 'null'] };
    }
  }
  return out;
}

function withoutBrief(node: Node): Node {
  const rest = { ...node };
  delete rest.brief;
  return rest;
}

/**
 * A union of objects (getContacts' two paging modes) as one object: each key once, its
 * schemas in an `anyOf` only where the alternatives differ, required where all require it.
 */
function mergeObjectUnion(node: Node): Node {
  const alts = node.anyOf;
  if (!Array.isArray(alts) || !alts.every((a) => isNode(a) && a.type === 'object' && isNode(a.properties))) return node;
  const properties: Record<string, unknown[]> = {};
  for (const a of alts as Node[]) {
    for (const [k, s] of Object.entries(a.properties as Node)) {
      const seen = (properties[k] ??= []);
      if (!seen.some((x) => JSON.stringify(x) === JSON.stringify(s))) seen.push(s);
    }
  }
  const required = Object.keys(properties).filter((k) => (alts as Node[]).every((a) => (a.required as string[] | undefined)?.includes(k)));
  const rest = { ...node };
  delete rest.anyOf;
  return {
    ...rest,
    type: 'object',
    properties: Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, s.length === 1 ? s[0] : { anyOf: s }])),
    ...(required.length ? { required } : {}),
  };
}

/** The JSON Schema of a zod schema, as tools/list advertises it (draft 7, like the SDK's own), compact. */
export function toJsonSchema(schema: z.ZodType, o: { output?: boolean } = {}): JsonSchema {
  // Always in zod's input mode, output schemas too: there a plain object allows extra keys, so
  // keys beside the documented ones (a list field's own keys, `replayed`, `warnings`) do not
  // fail the client's check of structuredContent. Strict objects (tool inputs) stay closed.
  const raw = z.toJSONSchema(schema, { target: 'draft-7', io: 'input', unrepresentable: 'any' }) as Node;
  return mergeObjectUnion(compactNode(raw, o.output === true)) as JsonSchema;
}
