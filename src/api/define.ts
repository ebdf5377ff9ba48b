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

/** Which way a money method moves money: onto the account, or off it. */
export type Money = 'credit' | 'debit';

/**
 * The read that tells whether a write was carried out when its answer was lost: the method
 * itself (a reference, so the compiler checks it) and, when reading is not enough, what in its
 * answer to compare (`the balance`: a read alone cannot tell a move made from one not made).
 */
interface CheckWith {
  readonly method: MethodDef;
  readonly compare?: string;
}

/**
 * The money policy: a method that moves money says which way, and names its read-back with
 * what to compare (required); any other method may name its read-back.
 */
type MethodMoney =
  | {
      readonly money?: undefined;
      /** For a write: the read that tells whether it was carried out when its answer was lost. */
      readonly checkWith?: CheckWith;
    }
  | {
      /**
       * Moves money, onto the account or off it: a retry must never move it twice. The MCP tool
       * takes an `idempotency_key` and passes the money caps; a debit is checked against the balance.
       */
      readonly money: Money;
      /** The read that tells whether the money moved, and what in it to compare. */
      readonly checkWith: Required<CheckWith>;
    };

export type MethodDef<N extends string = string, S extends Shape = Shape, R extends z.ZodType | null = z.ZodType | null> = MethodCore<
  N,
  S,
  R
> &
  MethodMoney;

/** A method that moves money. */
export type MoneyMethod = MethodDef & { readonly money: Money };

interface MethodCore<N extends string = string, S extends Shape = Shape, R extends z.ZodType | null = z.ZodType | null> {
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
  readonly result: R;
  readonly annotations: Annotations;
  /** Other names the method answers to (`createContactAccount`). */
  readonly aliases?: readonly string[];
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

/**
 * A definition as written: `verbs` default to GET and POST for a read and POST for a write,
 * `status` to 204 for a method that answers no body and 200 for one that does.
 */
type MethodInput<N extends string, S extends Shape, R extends z.ZodType | null> = Omit<MethodCore<N, S, R>, 'verbs' | 'status'> &
  Partial<Pick<MethodCore<N, S, R>, 'verbs' | 'status'>> &
  MethodMoney;

const GET_OR_POST: readonly Verb[] = ['GET', 'POST'];
const POST: readonly Verb[] = ['POST'];

/**
 * Define a method (unless it says otherwise: a read by GET or POST, a write by POST; status 200,
 * or 204 with no body); keeps the literal name, shape and result types for the handler table.
 */
export function defineMethod<const N extends string, S extends Shape, R extends z.ZodType | null>(
  def: MethodInput<N, S, R>,
): MethodDef<N, S, R> {
  return {
    ...def,
    verbs: def.verbs ?? (def.annotations.readOnlyHint ? GET_OR_POST : POST),
    status: def.status ?? (def.result === null ? 204 : 200),
  };
}

/** Whether a method moves money. */
export function isMoney(def: MethodDef): def is MoneyMethod {
  return def.money !== undefined;
}

/**
 * The read-back of a write, in words: `getListSchemas`, `getContactAccounts (compare the
 * balance)`; undefined when the method names none.
 */
export function readBackOf(def: MethodDef): string | undefined {
  const c = def.checkWith;
  if (c === undefined) return undefined;
  return c.compare === undefined ? c.method.name : `${c.method.name} (compare ${c.compare})`;
}

/**
 * The verb a client sends a method with: GET for a read that allows it (parameters in the
 * query), else POST with a JSON body. Both backends send it.
 */
export function verbFor(def: MethodDef): Verb {
  return def.annotations.readOnlyHint && def.verbs.includes('GET') ? 'GET' : 'POST';
}

/** Changes nothing. */
export const READ: Annotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/** Adds to the data; each call adds again. */
export const WRITE: Annotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };

/** Adds to the data; the same call again changes nothing more. */
export const IDEMPOTENT_WRITE: Annotations = { ...WRITE, idempotentHint: true };

/** Deletes or overwrites data; the same call again changes nothing more. */
export const DESTROY: Annotations = { ...WRITE, destructiveHint: true, idempotentHint: true };
