/** The handler of every method, checked at compile time to miss none and to answer what its definition says. */
import type { z } from 'zod';
import type { AnyMethod } from '../api/catalog.js';
import type { ErrorBag, Infer } from '../api/rules.js';
import { contactAccountHandlers } from './contact-accounts.js';
import { contactHandlers } from './contacts.js';
import type { Ctx, Reply } from './context.js';
import { listHandlers, listPrechecks } from './lists.js';
import { messageHandlers } from './messages.js';
import { ownerHandlers } from './owner.js';
import { recordHandlers } from './records.js';
import { referralHandlers } from './referrals.js';
import { shortLinkHandlers } from './short-links.js';
import { tagHandlers } from './tags.js';
import { variableHandlers } from './variables.js';

/** The success body a method's definition gives (`result`); nothing for a 204. */
type Answer<M extends AnyMethod> = M['result'] extends z.ZodType ? z.infer<M['result']> : void;

/**
 * A handler per method, taking its parameters as the rules read them and answering its
 * definition's result (or a Reply with it, for another status): a handler that drifts from
 * the definition fails to compile.
 */
export type Handlers = {
  [M in AnyMethod as M['name']]: (ctx: Ctx, params: Infer<M['params']>) => Answer<M> | Reply<Answer<M>>;
};

export const HANDLERS = {
  ...ownerHandlers,
  ...listHandlers,
  ...recordHandlers,
  ...contactAccountHandlers,
  ...contactHandlers,
  ...variableHandlers,
  ...tagHandlers,
  ...messageHandlers,
  ...referralHandlers,
  ...shortLinkHandlers,
} satisfies Handlers;

/**
 * Checks that need the database (a bot that exists, a slug not taken), run also when the
 * parameter rules failed, on the values that passed, so one 422 lists every failing field.
 */
export type Precheck = (ctx: Ctx, partial: Record<string, unknown>, bag: ErrorBag) => void;

export const PRECHECKS: Partial<Record<AnyMethod['name'], Precheck>> = {
  ...listPrechecks,
};
