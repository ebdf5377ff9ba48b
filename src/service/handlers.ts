/** The handler of every method, checked at compile time to miss none. */
import type { AnyMethod } from '../api/catalog.js';
import type { Infer } from '../api/rules.js';
import { accountHandlers } from './account.js';
import { contactAccountHandlers } from './contact-accounts.js';
import { contactHandlers } from './contacts.js';
import type { Ctx } from './context.js';
import { listHandlers } from './lists.js';
import { messageHandlers } from './messages.js';
import { recordHandlers } from './records.js';
import { referralHandlers } from './referrals.js';
import { shortLinkHandlers } from './short-links.js';
import { tagHandlers } from './tags.js';
import { variableHandlers } from './variables.js';

export type Handlers = {
  [M in AnyMethod as M['name']]: (ctx: Ctx, params: Infer<M['params']>) => unknown;
};

export const HANDLERS = {
  ...accountHandlers,
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
