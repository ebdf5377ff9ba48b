/**
 * Contacts (getContacts, getNumberOfContacts, createOrUpdateContact): the contact shape every
 * method that returns contacts uses, and the three methods' rules.
 */
import { z } from 'zod';
import { defineMethod, DESTROY, READ } from './define.js';
import { page } from './params.js';
import { r } from './rules.js';
import { PageLinksSchema, PageMetaSchema } from './shapes.js';

/** A contact variable as contacts carry it. */
const ContactVariableSchema = z.object({
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
const ContactSchema = z.object({
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

/** The contact's fields, in the order the API writes them. */
export const CONTACT_FIELDS = Object.keys(ContactSchema.shape) as ReadonlyArray<keyof Contact>;

/** Messengers createOrUpdateContact can create a contact in (not `web`). */
const API_MESSENGERS = ['telegram', 'max', 'viber', 'vk'] as const;
type ApiMessenger = (typeof API_MESSENGERS)[number];

/** `+` then digits, 9 to 16 characters including the plus. */
const PHONE_PATTERN = /^\+[0-9]{8,15}$/;

/** getContacts `count`, `limit` bounds (spec Limits). */
export const CONTACTS_PER_PAGE = { min: 1, max: 500, default: 20 } as const;
export const CONTACTS_LIMIT = { min: 1, max: 1000, default: 100 } as const;

const filterParams = {
  bot_id: r.integer().describe('Default: all your bots'),
  date_from: r.unixSeconds().describe('Created at or after (Unix seconds)'),
  date_to: r.unixSeconds().describe('Created at or before (Unix seconds)'),
};

export const getContacts = defineMethod({
  name: 'getContacts',
  title: 'List contacts',
  description:
    'Contacts of your bots by ascending id, with their tags and variables (never preview or deleted ones). ' +
    'Paged by page and count, or by offset and limit once either is given (meta {offset, limit, total}). ' +
    'New contacts land at the end: date_to caps a growing read. Only the number: getNumberOfContacts.',
  params: {
    ...filterParams,
    count: r
      .integer()
      .between(CONTACTS_PER_PAGE.min, CONTACTS_PER_PAGE.max)
      .excludeWith('offset', 'limit')
      .describe('Per page; default 20'),
    page: page.excludeWith('offset', 'limit'),
    offset: r.integer().min(0).describe('Contacts to skip'),
    limit: r.integer().between(CONTACTS_LIMIT.min, CONTACTS_LIMIT.max).describe('Default 100'),
    with: r.any().advertise('string').ignored().describe('Ignored'),
  },
  result: z.union([
    z.object({ data: z.array(ContactSchema), links: PageLinksSchema, meta: PageMetaSchema }),
    z.object({
      data: z.array(ContactSchema),
      meta: z.object({ offset: z.number().int(), limit: z.number().int(), total: z.number().int() }),
    }),
  ]),
  annotations: READ,
  paging: { size: 'count', byOffset: true, whole: 'exportContacts' },
});

export const getNumberOfContacts = defineMethod({
  name: 'getNumberOfContacts',
  title: 'Count contacts',
  description: 'Counts contacts as getContacts lists them (same filters).',
  params: { ...filterParams },
  result: z.object({ count: z.number().int() }),
  annotations: READ,
});

export const createOrUpdateContact = defineMethod({
  name: 'createOrUpdateContact',
  verbs: ['GET', 'POST'],
  title: 'Create or update a contact',
  description:
    "Finds a bot's contact by its messenger id (telegram_id, max_id, vk_id or viber_id, as messenger says) and updates it, or creates it (201); " +
    'never a second one. name always replaces; email, address, phone and usernames change only when given non-empty; tags, when given, ' +
    'replace them all. Variables are untouched. A new contact counts as a subscriber; nothing is sent to the person.',
  params: {
    bot_id: r.integer().required(),
    messenger: r.oneOf(API_MESSENGERS).required(),
    name: r.string().required(),
    telegram_id: r.integer().requiredIf('messenger', 'telegram').describe('Required for telegram'),
    telegram_username: r.string().max(255).describe('Without @'),
    max_id: r.integer().requiredIf('messenger', 'max').describe('Required for max'),
    max_username: r.string().max(255),
    vk_id: r.integer().requiredIf('messenger', 'vk').describe('Required for vk'),
    viber_id: r.string().max(255).requiredIf('messenger', 'viber').describe('Required for viber'),
    phone: r.string().regex(PHONE_PATTERN).describe('+ and digits, e.g. +447700900123; stored without +'),
    email: r.email(),
    address: r.string().max(255),
    tags: r.array(r.string().max(255)).max(100).describe('Replace all its tags; [] clears'),
  },
  paramAliases: { max_user_id: 'max_id', vk_user_id: 'vk_id' },
  result: z.object({ data: ContactSchema }),
  // Destructive: name is overwritten and `tags` replaces the whole set. Idempotent: the same call twice leaves one contact in the same state.
  annotations: DESTROY,
  checkWith: { method: getContacts },
});

export const contactMethods = [getContacts, getNumberOfContacts, createOrUpdateContact] as const;
