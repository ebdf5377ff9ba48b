/**
 * Tags (shape from the service's public docs): getBotTags, getContactTags,
 * attachTagToContact, detachTagFromContact. A tag is a name; a contact's tags keep their order.
 */
import { z } from 'zod';
import { defineMethod, READ } from './define.js';
import { r } from './rules.js';

export const MAX_TAG = 255;

const TagList = z.array(z.string()).describe('Tag names');
const contactId = r.integer().required().describe("The key holder's contact (id from getContacts)");
const tagName = r.string().required().max(MAX_TAG).describe('Tag name, up to 255 characters');

export const getBotTags = defineMethod({
  name: 'getBotTags',
  verbs: ['GET', 'POST'],
  status: 200,
  title: "List a bot's tags",
  description:
    "Returns every tag name used in one of the holder's bots, in order of first use. A tag's position in this list, from 1, is its tag id " +
    '(the filters[tag_id] of getReferrals); names stay listed once used, so ids are stable. Changes nothing.',
  params: { bot_id: r.integer().required().describe("The key holder's bot") },
  result: z.object({ data: TagList }),
  annotations: READ,
});

export const getContactTags = defineMethod({
  name: 'getContactTags',
  verbs: ['GET', 'POST'],
  status: 200,
  title: "Get a contact's tags",
  description: "Returns a contact's tag names in their order. Changes nothing.",
  params: { contact_id: contactId },
  result: z.object({ data: TagList }),
  annotations: READ,
});

export const attachTagToContact = defineMethod({
  name: 'attachTagToContact',
  verbs: ['POST'],
  status: 200,
  title: 'Tag a contact',
  description:
    "Adds a tag to a contact (at the end of its tags) and returns the contact's tags after the change. A new name creates the tag; " +
    'a tag the contact already has is left as it is, so repeating the call is safe.',
  params: { contact_id: contactId, name: tagName },
  result: z.object({ data: TagList }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  checkWith: 'getContactTags',
});

export const detachTagFromContact = defineMethod({
  name: 'detachTagFromContact',
  verbs: ['POST'],
  status: 200,
  title: 'Untag a contact',
  description:
    "Removes a tag from a contact and returns the contact's tags after the change. Removing a tag the contact does not have is not an error. " +
    "The name stays in the bot's tag list (getBotTags).",
  params: { contact_id: contactId, name: tagName },
  result: z.object({ data: TagList }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  checkWith: 'getContactTags',
});

export const tagMethods = [getBotTags, getContactTags, attachTagToContact, detachTagFromContact] as const;
