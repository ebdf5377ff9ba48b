/**
 * The one scaffold of a composite tool: its name, title and annotations (identities.ts), its
 * description, its JSON Schemas, and a handler that gets its arguments checked against its
 * parameters first (a 422 result otherwise). The schemas are the build's, or made from zod on first
 * read (the first tools/list or call) rather than when the tool is built at start-up: making them
 * is a fair part of a cold start, and a server that is only asked server/discover never needs them.
 */
import type { Scope } from '../../api/scopes.js';
import type { ToolAnnotations } from '@modelcontextprotocol/server';
import type { z } from 'zod';
import type { Infer, Shape } from '../../api/rules.js';
import { checkArguments } from '../tools/arguments.js';
import { inputSchemaOf, outputSchemaOf, shapeToZod, toJsonSchema } from '../tools/schemas.js';
import type { JsonSchema, ToolExtra, ToolOutcome, ToolSpec } from '../tool-spec.js';

/** A composite tool's name, title and annotations, as identities.ts gives them. */
interface ToolInfo {
  readonly name: string;
  readonly title: string;
  readonly annotations: ToolAnnotations;
}

/** What a composite tool is beyond the scaffold. */
export type CompositeToolDef<S extends Shape> = {
  info: ToolInfo;
  description: string;
  /** Its parameters: the arguments are checked against them before `run`. */
  params: S;
  /** Its input schema when it is not the parameters' own (made on first read). */
  input?: () => JsonSchema;
  /** The scopes that let a person's assistant have it; default: `workspace:read` for a tool that changes nothing (readOnlyHint). */
  scopes?: readonly Scope[];
  /** The call, with the checked parameters (and the arguments as given). */
  run(params: Infer<S>, extra: ToolExtra, args: Record<string, unknown>): Promise<ToolOutcome>;
  task?: ToolSpec['task'];
} & (
  | {
      /** The zod schema of its answer, made into the output schema on first read. */
      output: () => z.ZodType;
    }
  | {
      /** Its output schema written as JSON. */
      outputSchema: JsonSchema;
    }
);

/** The ToolSpec of a composite tool. */
export function compositeTool<S extends Shape>(def: CompositeToolDef<S>): ToolSpec {
  const { info, params } = def;
  const makeInput = def.input ?? (() => toJsonSchema(shapeToZod(params)));
  let input: JsonSchema | undefined;
  const outputSchema = outputOf(def);
  return {
    name: info.name,
    title: info.title,
    description: def.description,
    get inputSchema() {
      return (input ??= inputSchemaOf(info.name, makeInput));
    },
    get outputSchema() {
      return outputSchema();
    },
    annotations: { ...info.annotations },
    scopes: def.scopes ?? readScope(info),
    async run(args, extra) {
      const checked = checkArguments(params, args);
      if ('error' in checked) return checked.error;
      return def.run(checked.params, extra, args);
    },
    ...(def.task ? { task: def.task } : {}),
  };
}

/** A composite tool that changes nothing needs `workspace:read`; one that changes something names its scopes. */
function readScope(info: ToolInfo): readonly Scope[] {
  if (info.annotations.readOnlyHint !== true) throw new Error(`${info.name} changes something: give its scopes`);
  return ['workspace:read'];
}

/** The output schema, as written or made from zod on first read (the build's when it has one). */
function outputOf<S extends Shape>(def: CompositeToolDef<S>): () => JsonSchema {
  if ('outputSchema' in def) {
    const written = def.outputSchema;
    return () => written;
  }
  const make = def.output;
  let made: JsonSchema | undefined;
  return () => (made ??= outputSchemaOf(def.info.name, make));
}
