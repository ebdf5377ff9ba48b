/**
 * Reachability, the spec's one rule for every method: only the key holder's own projects and
 * bots (not those it was invited to). Missing or deleted → 404; another account's → 403.
 */
import { fail } from '../api/errors.js';
import type { ContactAccessRow } from '../store/contacts.js';
import type { BotRow } from '../store/projects.js';
import type { Ctx } from './context.js';

/** The holder's live bot, or 404 (missing, deleted) / 403 (another account's). */
export function requireBot(ctx: Ctx, botId: number): BotRow {
  const bot = ctx.store.projects.bot(botId);
  if (!bot || bot.deleted_at) throw fail.notFound('Bot not found.');
  if (bot.owner_id !== ctx.owner.id) throw fail.forbidden('You have no access to this bot.');
  return bot;
}

/** The holder's live contact, or 404 (missing, deleted, deleted bot) / 403. */
export function requireContact(ctx: Ctx, contactId: number): ContactAccessRow {
  const c = ctx.store.contacts.access(contactId);
  if (!c || c.deleted_at || c.bot_deleted_at) throw fail.notFound('Contact not found.');
  if (c.owner_id !== ctx.owner.id) throw fail.forbidden('You have no access to this contact.');
  return c;
}
