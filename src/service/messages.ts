/**
 * Handler: sendMessage. The built-in service delivers nowhere: the message is appended to the
 * contact's conversation as outgoing, where `admin conversation` and tests read it.
 */
import { fail } from '../api/errors.js';
import type { sendMessage } from '../api/messages.js';
import type { Infer } from '../api/rules.js';
import { isoTime } from '../store/time.js';
import { requireBot, requireContact } from './access.js';
import type { Ctx } from './context.js';

function findContact(ctx: Ctx, p: Infer<(typeof sendMessage)['params']>): number {
  if (p.contact_id !== undefined) return requireContact(ctx, p.contact_id).id;
  const missing = new Map<string, string[]>();
  if (p.messenger === undefined) missing.set('messenger', ['The messenger field is required when bot id is present.']);
  if (p.contact_external_id === undefined)
    missing.set('contact_external_id', ['The contact external id field is required when bot id is present.']);
  if (missing.size > 0) throw fail.validation(missing);
  const bot = requireBot(ctx, p.bot_id!);
  const id = ctx.store.messages.findContact(bot.id, p.messenger!, p.contact_external_id!);
  if (id === undefined) throw fail.notFoundOn('contact_external_id', 'Contact not found.');
  return id;
}

export const messageHandlers = {
  sendMessage(ctx: Ctx, p: Infer<(typeof sendMessage)['params']>) {
    if (p.text === undefined && p.image === undefined && p.file === undefined)
      throw fail.invalid('text', 'The text field is required when none of image / file are present.');
    const contactId = findContact(ctx, p);
    const row = ctx.store.contacts.rowsByIds([contactId])[0]!;
    if (row.unsubscribed_at !== null) throw fail.invalid('contact_id', 'The contact has unsubscribed from the bot.');
    ctx.store.messages.send({
      contactId,
      text: p.text ?? null,
      image: p.image ?? null,
      file: p.file ?? null,
      now: isoTime(ctx.now),
    });
    return { success: true as const };
  },
};
