/** Handlers of the key holder (the owner) itself: getMe, getBalance. */
import type { Balance, Me } from '../api/owner.js';
import type { Ctx } from './context.js';
import { keptAnswerOf } from './rendered.js';

export const ownerHandlers = {
  getMe(ctx: Ctx): { data: Me } {
    const o = ctx.owner;
    // Kept with the owner's cached row: made again once the row is.
    return keptAnswerOf(o, () => ({ data: { id: o.id, name: o.name, email: o.email, phone: o.phone, created_at: o.created_at } }));
  },

  getBalance(ctx: Ctx): { data: Balance } {
    return { data: ctx.store.balance.get(ctx.owner.id)! };
  },
};
