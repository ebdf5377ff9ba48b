/**
 * Handlers: Contacts: export, count, create or update; and the contact view every method that
 * returns contacts uses (`viewContacts` loads a whole page's tags and variables in two queries).
 */
import type { Contact, ContactVariable, createOrUpdateContact, getContacts, getNumberOfContacts } from '../api/contacts.js';
import { CONTACTS_LIMIT, CONTACTS_PER_PAGE } from '../api/contacts.js';
import { fail } from '../api/errors.js';
import { orderedObject } from '../common/ordered.js';
import type { Infer } from '../api/rules.js';
import type { ContactRow, DateWindow, VariableRow } from '../store/contacts.js';
import { isoTime } from '../store/time.js';
import { Reply, type Ctx } from './context.js';
import { pageNumber, paginate } from './paginate.js';
import { isMediaVariable, shortLinkFor } from './short-links.js';

/** The first message of a contact made by createOrUpdateContact. */
const CREATED_FROM_API = 'Created from API';

/** A variable's `value` as the API shows it: a media variable's (types 1-4) as its short link. */
function variableValue(v: VariableRow, linkKey: Buffer): string | null {
  return isMediaVariable(v) ? shortLinkFor(linkKey, v.id) : v.value;
}

function payloadOf(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** One variable in the contact shape. */
export function viewVariable(v: VariableRow, linkKey: Buffer): ContactVariable {
  return {
    id: v.id,
    name: v.name,
    value: variableValue(v, linkKey),
    type: v.type,
    schema_id: v.schema_id,
    deletable: v.deletable !== 0,
    payload: payloadOf(v.payload),
  };
}

/**
 * A contact in the spec's shape and field order. Messenger fields only for their messenger;
 * `vk_user_id` always (null unless VK); `utm` the `utm_*` variables as an ordered map (`[]` if none).
 */
function viewContact(row: ContactRow, tags: readonly string[], variables: readonly VariableRow[], linkKey: Buffer): Contact {
  const utm = orderedObject<string | null>(
    variables.filter((v) => v.name.startsWith('utm_')).map((v) => [v.name, variableValue(v, linkKey)] as const),
  );
  const out: Record<string, unknown> = {
    id: row.id,
    bot_id: row.bot_id,
    phone: row.phone === null ? null : row.phone.replace(/^\+/, ''),
    email: row.email,
    name: row.name,
    address: row.address,
    messenger: row.messenger,
    utm,
    avatar: row.avatar,
  };
  if (row.messenger === 'telegram') {
    out.telegram_id = row.telegram_id ?? '';
    out.telegram_username = row.telegram_username;
  }
  if (row.messenger === 'max') {
    out.max_user_id = row.max_user_id;
    out.max_username = row.max_username;
  }
  out.vk_user_id = row.messenger === 'vk' ? row.vk_user_id : null;
  if (row.messenger === 'viber') out.viber_id = row.viber_id ?? '';
  out.created_at = row.created_at;
  out.unsubscribed_at = row.unsubscribed_at;
  out.tags = [...tags];
  out.variables = variables.map((v) => viewVariable(v, linkKey));
  // `utm` keeps the variables' order and is `[]` when empty: the Contact shape.
  return out as unknown as Contact;
}

/** Contacts by id in the API shape, ascending by id; three queries for the whole list. */
function viewContacts(ctx: Ctx, ids: readonly number[]): Contact[] {
  const store = ctx.store.contacts;
  const rows = store.rowsByIds(ids);
  const tags = store.tagsByContact(ids);
  const vars = store.variablesByContact(ids);
  return rows.map((r) => viewContact(r, tags.get(r.id) ?? [], vars.get(r.id) ?? [], ctx.secrets.signingKey));
}

/** The bots a filter covers: the one given if it is the holder's live bot, else all of them. */
function botScope(ctx: Ctx, botId: number | undefined): number[] {
  if (botId === undefined) return ctx.store.projects.ownerBotIds(ctx.owner.id);
  const bot = ctx.store.projects.bot(botId);
  return bot && !bot.deleted_at && bot.owner_id === ctx.owner.id ? [bot.id] : [];
}

function windowOf(p: { date_from?: number; date_to?: number }): DateWindow {
  return { from: p.date_from, to: p.date_to };
}

/** A page of getContacts: offset/limit with `meta`, or the page/count paginator. */
function contactsPage(ctx: Ctx, p: Infer<(typeof getContacts)['params']>) {
  const bots = botScope(ctx, p.bot_id);
  const window = windowOf(p);
  const store = ctx.store.contacts;
  const total = store.count(bots, window);
  if (p.offset !== undefined || p.limit !== undefined) {
    const offset = p.offset ?? 0;
    const limit = p.limit ?? CONTACTS_LIMIT.default;
    const ids = offset < total ? store.pageIds(bots, offset, limit, window) : [];
    return { data: viewContacts(ctx, ids), meta: { offset, limit, total } };
  }
  const perPage = p.count ?? CONTACTS_PER_PAGE.default;
  const page = pageNumber(p.page);
  const offset = (page - 1) * perPage;
  const ids = offset < total ? store.pageIds(bots, offset, perPage, window) : [];
  return paginate({ items: viewContacts(ctx, ids), total, page, perPage, path: ctx.url, metaLinks: true });
}

export const contactHandlers = {
  getContacts(ctx: Ctx, p: Infer<(typeof getContacts)['params']>) {
    // The total and the page from one snapshot, in one read transaction.
    return ctx.store.read(() => contactsPage(ctx, p));
  },

  getNumberOfContacts(ctx: Ctx, p: Infer<(typeof getNumberOfContacts)['params']>) {
    return ctx.store.read(() => ({ count: ctx.store.contacts.count(botScope(ctx, p.bot_id), windowOf(p)) }));
  },

  createOrUpdateContact(ctx: Ctx, p: Infer<(typeof createOrUpdateContact)['params']>) {
    const bot = ctx.store.projects.bot(p.bot_id);
    if (!bot || bot.deleted_at || bot.owner_id !== ctx.owner.id) throw fail.notFoundOn('bot_id', 'Bot not found.');
    const m = p.messenger;
    // Validation made the chosen messenger's id present (required_if).
    const externalId = m === 'telegram' ? String(p.telegram_id) : m === 'max' ? p.max_id! : m === 'vk' ? p.vk_id! : p.viber_id!;
    const username = m === 'telegram' ? p.telegram_username?.replace(/^@/, '') || null : m === 'max' ? (p.max_username ?? null) : null;
    const { id, created } = ctx.store.contacts.createOrUpdate({
      botId: bot.id,
      messenger: m,
      externalId,
      name: p.name,
      phone: p.phone === undefined ? null : p.phone.slice(1),
      email: p.email ?? null,
      address: p.address ?? null,
      username,
      tags: p.tags,
      firstMessage: CREATED_FROM_API,
      now: isoTime(ctx.now),
    });
    const body = { data: viewContacts(ctx, [id])[0]! };
    return created ? new Reply(201, body) : body;
  },
};
