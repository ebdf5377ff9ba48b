/**
 * What one API method is: name, verbs, success status, docs for people and models, parameter
 * rules, result schema, MCP annotations, aliases. Everything else (HTTP validation, MCP tools,
 * the remote client, docs) reads these objects.
 */
import type { z } from 'zod';
import type { Shape } from './rules.js';

export type Verb = 'GET' | 'POST';

export interface Annotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface MethodDef<N extends string = string, S extends Shape = Shape> {
  /** The spec's method name, the last path segment. */
  readonly name: N;
  readonly verbs: readonly Verb[];
  /** Status of a success: 200, 201, or 204 with no body. */
  readonly status: 200 | 201 | 204;
  readonly title: string;
  /** Written for a model: what it does, limits, units, what to call first. */
  readonly description: string;
  readonly params: S;
  /** Other names the parameters go by (`vk_user_id` for `vk_id`): alias to name. */
  readonly paramAliases?: Readonly<Record<string, string>>;
  /** Zod schema of the success body; null for a 204. */
  readonly result: z.ZodType | null;
  readonly annotations: Annotations;
  /** Other names the method answers to (`createContactAccount`). */
  readonly aliases?: readonly string[];
  /** Where the shape comes from, when the spec only names the method. */
  readonly source?: 'spec' | 'extended';
}

/** Define a method; keeps the literal name and shape types for the handler table. */
export function defineMethod<const N extends string, S extends Shape>(def: MethodDef<N, S>): MethodDef<N, S> {
  return def;
}

export const READ: Annotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
