/** The handler of every method, checked at compile time to miss none. */
import type { AnyMethod } from '../api/catalog.js';
import type { ErrorBag, Infer } from '../api/rules.js';
import { contactAccountHandlers } from './contact-accounts.js';
import { contactHandlers } from './contacts.js';
import type { Ctx } from './context.js';
import { listHandlers, listPrechecks } from './lists.js';
import { messageHandlers } from './messages.js';
import { ownerHandlers } from './owner.js';
import { recordHandlers } from './records.js';
import { referralHandlers } from './referrals.js';
import { shortLinkHandlers } from './short-links.js';
import { tagHandlers } from './tags.js';
import { variableHandlers } from './variables.js';

export type Handlers = {
  [M in AnyMethod as M['name']]: (ctx: Ctx, params: Infer<M['params']>) => unknown;
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
