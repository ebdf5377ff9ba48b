/** Handlers: a bot's tags and a contact's tags. */
import type { Infer } from '../api/rules.js';
import type { attachTagToContact, detachTagFromContact, getBotTags, getContactTags } from '../api/tags.js';
import { requireBot, requireContact } from './access.js';
import type { Ctx } from './context.js';

function contactTags(ctx: Ctx, contactId: number): { data: string[] } {
  return { data: ctx.store.contacts.tagsByContact([contactId]).get(contactId) ?? [] };
}

export const tagHandlers = {
  getBotTags(ctx: Ctx, p: Infer<(typeof getBotTags)['params']>) {
    requireBot(ctx, p.bot_id);
    return { data: ctx.store.tags.botTags(p.bot_id) };
  },

  getContactTags(ctx: Ctx, p: Infer<(typeof getContactTags)['params']>) {
    requireContact(ctx, p.contact_id);
    return contactTags(ctx, p.contact_id);
  },

  attachTagToContact(ctx: Ctx, p: Infer<(typeof attachTagToContact)['params']>) {
    requireContact(ctx, p.contact_id);
    ctx.store.tags.attach(p.contact_id, p.name);
    return contactTags(ctx, p.contact_id);
  },

  detachTagFromContact(ctx: Ctx, p: Infer<(typeof detachTagFromContact)['params']>) {
    requireContact(ctx, p.contact_id);
    ctx.store.tags.detach(p.contact_id, p.name);
    return contactTags(ctx, p.contact_id);
  },
};
