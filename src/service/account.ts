/** Handlers of the key holder's own account. */
import type { Me } from '../api/account.js';
import type { Ctx } from './context.js';

export const accountHandlers = {
  getMe(ctx: Ctx): { data: Me } {
    const o = ctx.owner;
    return { data: { id: o.id, name: o.name, email: o.email, phone: o.phone, created_at: o.created_at } };
  },
};
