/**
 * What one API method is: name, verbs, success status, docs for people and models, parameter
 * rules, result schema, MCP annotations, aliases, and the policy the adapters follow for it
 * (money, the read that checks a lost write, list-changing, paging hints). Everything else
 * (HTTP validation, MCP tools, the remote client, docs) reads these objects, never a table of
 * method names of its own.
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
  /**
   * Moves money: a retry must never move it twice. The MCP tool takes an `idempotency_key`;
   * `checkWith` says how to learn the balance.
   */
  readonly money?: boolean;
  /** For a write: the read that tells whether it was carried out when its answer was lost. */
  readonly checkWith?: string;
  /** A success adds or removes a list schema (the MCP server's resources change). */
  readonly changesLists?: boolean;
  /** For a method that answers pages: what asks for a smaller page, and what reads the whole set. */
  readonly paging?: Paging;
}

export interface Paging {
  /**
   * The parameter that sets the page size in page paging (`count`, `limit`); absent when the
   * size is fixed. A page cut to the result budget continues at a smaller size through it.
   */
  readonly size?: string;
  /**
   * The method also pages by `offset` and `limit` (getContacts): a page cut to the result
   * budget continues by offset, from the first item not shown.
   */
  readonly byOffset?: boolean;
  /** The tool that gets every item in one call (getContacts: `exportContacts`). */
  readonly whole?: string;
}

/** Define a method; keeps the literal name and shape types for the handler table. */
export function defineMethod<const N extends string, S extends Shape>(def: MethodDef<N, S>): MethodDef<N, S> {
  return def;
}

/**
 * The verb a client sends a method with: GET for a read that allows it (parameters in the
 * query), else POST with a JSON body. Both backends send it.
 */
export function verbFor(def: MethodDef): Verb {
  return def.annotations.readOnlyHint && def.verbs.includes('GET') ? 'GET' : 'POST';
}

export const READ: Annotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
