/**
 * Contacts (getContacts, getNumberOfContacts, createOrUpdateContact): the contact shape every
 * method that returns contacts uses, and the three methods' rules.
 */
import { z } from 'zod';
import { defineMethod, READ } from './define.js';
import { r } from './rules.js';
import { PageLinksSchema, PageMetaSchema } from './shapes.js';

/** A contact variable as contacts carry it. */
export const ContactVariableSchema = z.object({
  id: z.number().int().describe('Variable ID within the contact'),
  name: z.string(),
  value: z.string().nullable().describe('Value; for media types (1-4) a link to the file, resolved by decodeShortLink'),
  type: z.number().int().min(0).max(4).describe('0 text, 1 image, 2 document, 3 audio, 4 video'),
  schema_id: z.string().nullable().describe('Internal'),
  deletable: z.boolean().describe('Internal'),
  payload: z.unknown().describe('Internal'),
});
export type ContactVariable = z.infer<typeof ContactVariableSchema>;

/**
 * The contact. Messenger fields appear only for their messenger (`telegram_*` for telegram,
 * `max_*` for max, `viber_id` for viber); `vk_user_id` is on every contact, null unless VK.
 */
export const ContactSchema = z.object({
  id: z.number().int(),
  bot_id: z.number().int(),
  phone: z.string().nullable().describe('Digits only, no +'),
  email: z.string().nullable(),
  name: z.string(),
  address: z.string().nullable(),
  messenger: z.enum(['telegram', 'max', 'viber', 'vk', 'web']),
  utm: z
    .union([z.record(z.string(), z.string().nullable()), z.array(z.never())])
    .describe('Variables named utm_*, name to value; an empty array [] when there are none'),
  avatar: z.string().nullable(),
  telegram_id: z.string().optional().describe('Telegram contacts only'),
  telegram_username: z.string().nullable().optional().describe('Without @; Telegram contacts only'),
  max_user_id: z.number().int().optional().describe('MAX contacts only'),
  max_username: z.string().nullable().optional().describe('MAX contacts only'),
  vk_user_id: z.number().int().nullable().describe('On every contact; null unless VK'),
  viber_id: z.string().optional().describe('Viber contacts only'),
  created_at: z.string().describe('ISO 8601, UTC'),
  unsubscribed_at: z.string().nullable().describe('null means subscribed'),
  tags: z.array(z.string()),
  variables: z.array(ContactVariableSchema),
});
export type Contact = z.infer<typeof ContactSchema>;

/** Messengers createOrUpdateContact can create a contact in (not `web`). */
export const API_MESSENGERS = ['telegram', 'max', 'viber', 'vk'] as const;
export type ApiMessenger = (typeof API_MESSENGERS)[number];

/** `+` then digits, 9 to 16 characters including the plus. */
export const PHONE_PATTERN = /^\+[0-9]{8,15}$/;

/** getContacts `count`, `limit` bounds (spec Limits). */
export const CONTACTS_PER_PAGE = { min: 1, max: 500, default: 20 } as const;
export const CONTACTS_LIMIT = { min: 1, max: 1000, default: 100 } as const;

const filterParams = {
  bot_id: r.integer().describe("Only this bot's contacts; without it, all the key holder's bots. A bot that does not exist or is not the holder's gives an empty result, not an error"),
  date_from: r.integer().describe('Only contacts created at or after this Unix time, in seconds (inclusive)'),
  date_to: r.integer().describe('Only contacts created at or before this Unix time, in seconds (inclusive); caps a growing export'),
};

export const getContacts = defineMethod({
  name: 'getContacts',
  verbs: ['GET', 'POST'],
  status: 200,
  title: 'List contacts',
  description:
    "Lists contacts (people who wrote to a bot) of the key holder's bots, sorted by ascending id, each with phone, email, messenger ids, utm, tags and variables. " +
    'Two paging modes. Page paging (default): count 1-500 per page (default 20) and page from 1; the answer has data, links and meta (total, last_page). ' +
    'Offset paging, used as soon as offset or limit is passed: offset from 0, limit 1-1000 (default 100); the answer is {data, meta: {offset, limit, total}}. ' +
    'For large exports use offset paging with limit 1000 (or the exportContacts tool): the export is complete when data has fewer than limit items or offset + limit reaches meta.total. ' +
    'New contacts land at the end; pass date_to to cap a growing export. Contacts created in bot preview and deleted contacts are never included. ' +
    'Use getNumberOfContacts when only the number is needed.',
  params: {
    ...filterParams,
    count: r
      .integer()
      .between(CONTACTS_PER_PAGE.min, CONTACTS_PER_PAGE.max)
      .excludeWith('offset', 'limit')
      .describe('Page paging: contacts per page, 1-500, default 20'),
    page: r.any().advertise('integer').excludeWith('offset', 'limit').describe('Page paging: page number from 1 (default 1); anything but a positive integer reads page 1'),
    offset: r.integer().min(0).describe('Offset paging: contacts to skip, from 0; passing it switches to offset paging (page and count are then ignored)'),
    limit: r.integer().between(CONTACTS_LIMIT.min, CONTACTS_LIMIT.max).describe('Offset paging: contacts to return, 1-1000, default 100; passing it switches to offset paging'),
    with: r.any().advertise('string').ignored().describe('Accepted for compatibility and ignored: tags and variables are always returned'),
  },
  result: z.union([
    z.object({ data: z.array(ContactSchema), links: PageLinksSchema, meta: PageMetaSchema }),
    z.object({
      data: z.array(ContactSchema),
      meta: z.object({ offset: z.number().int(), limit: z.number().int(), total: z.number().int() }),
    }),
  ]),
  annotations: READ,
  paging: { smaller: 'count, or limit with offset', whole: 'exportContacts' },
});

export const getNumberOfContacts = defineMethod({
  name: 'getNumberOfContacts',
  verbs: ['GET', 'POST'],
  status: 200,
  title: 'Count contacts',
  description:
    "Counts the key holder's contacts with the same filters as getContacts (bot_id, date_from, date_to; preview and deleted contacts are not counted). " +
    'Answers {count} with no data wrapper. Cheap: use it before an export to plan offset paging.',
  params: { ...filterParams },
  result: z.object({ count: z.number().int() }),
  annotations: READ,
});

export const createOrUpdateContact = defineMethod({
  name: 'createOrUpdateContact',
  verbs: ['GET', 'POST'],
  status: 200,
  title: 'Create or update a contact',
  description:
    "Finds a contact in one of the holder's bots by its messenger id (telegram_id, max_id, vk_id or viber_id, as messenger says) and updates it (200), or creates it (201). " +
    'name always replaces the old name. email, address, phone, telegram_username and max_username change only when passed non-empty; this method cannot clear them. ' +
    'tags, when passed, replace all the contact\'s tags ([] removes them all). Contact variables are never touched. ' +
    'A new contact gets the first message "Created from API" and counts as a subscriber of the bot; no scenario starts and nothing is sent to the person. ' +
    'phone is + and digits (9-16 characters), stored and returned without +. Calling it twice with the same messenger id is safe: it never makes a second contact.',
  params: {
    bot_id: r.integer().required().describe("The key holder's bot; another account's or an unknown bot gives 404"),
    messenger: r.oneOf(API_MESSENGERS).required().describe('telegram, max, viber or vk'),
    name: r.string().required().describe("The contact's name; replaces the previous name on every call"),
    telegram_id: r.integer().requiredIf('messenger', 'telegram').describe('Telegram user id; required when messenger is telegram'),
    telegram_username: r.string().max(255).describe('Telegram username, without @ (a leading @ is dropped); up to 255 characters'),
    max_id: r.integer().requiredIf('messenger', 'max').describe('MAX user id; required when messenger is max (alias max_user_id)'),
    max_username: r.string().max(255).describe('MAX username, up to 255 characters'),
    vk_id: r.integer().requiredIf('messenger', 'vk').describe('VK user id; required when messenger is vk (alias vk_user_id)'),
    viber_id: r.string().max(255).requiredIf('messenger', 'viber').describe('Viber user id; required when messenger is viber; up to 255 characters'),
    phone: r.string().regex(PHONE_PATTERN).describe('+ followed by digits, 9-16 characters including the +, e.g. +447700900123; stored without +'),
    email: r.email().describe('Email address'),
    address: r.string().max(255).describe('Postal address, up to 255 characters'),
    tags: r.array(r.string().max(255)).max(100).describe('Up to 100 tags of up to 255 characters; replaces all the contact\'s tags; [] removes them all'),
  },
  paramAliases: { max_user_id: 'max_id', vk_user_id: 'vk_id' },
  result: z.object({ data: ContactSchema }),
  // Destructive: name is overwritten and `tags` replaces the whole set. Idempotent: the same call twice leaves one contact in the same state.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  checkWith: 'getContacts',
});

export const contactMethods = [getContacts, getNumberOfContacts, createOrUpdateContact] as const;
