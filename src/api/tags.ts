/**
 * Tags (shape from the service's public docs): getBotTags, getContactTags,
 * attachTagToContact, detachTagFromContact. A tag is a name; a contact's tags keep their order.
 */
import { z } from 'zod';
import { defineMethod, DESTROY, IDEMPOTENT_WRITE, READ } from './define.js';
import { contactId } from './params.js';
import { r } from './rules.js';

const MAX_TAG = 255;

const TagList = z.array(z.string()).describe('Tag names');
const tagName = r.string().required().max(MAX_TAG);

export const getBotTags = defineMethod({
  name: 'getBotTags',
  title: "List a bot's tags",
  description:
    "Every tag name ever used in a bot, in order of first use; a tag's position from 1 is its tag id (getReferrals' filters[tag_id]).",
  params: { bot_id: r.integer().required() },
  result: z.object({ data: TagList }),
  annotations: READ,
});

export const getContactTags = defineMethod({
  name: 'getContactTags',
  title: "Get a contact's tags",
  description: "A contact's tag names, in order.",
  params: { contact_id: contactId },
  result: z.object({ data: TagList }),
  annotations: READ,
});

export const attachTagToContact = defineMethod({
  name: 'attachTagToContact',
  title: 'Tag a contact',
  description: "Adds a tag (made if new) at the end of a contact's tags, unless it has it.",
  params: { contact_id: contactId, name: tagName },
  result: z.object({ data: TagList }),
  annotations: IDEMPOTENT_WRITE,
  checkWith: { method: getContactTags },
});

export const detachTagFromContact = defineMethod({
  name: 'detachTagFromContact',
  title: 'Untag a contact',
  description: 'Removes a tag from a contact (not having it is no error). The name stays in getBotTags.',
  params: { contact_id: contactId, name: tagName },
  result: z.object({ data: TagList }),
  annotations: DESTROY,
  checkWith: { method: getContactTags },
});

export const tagMethods = [getBotTags, getContactTags, attachTagToContact, detachTagFromContact] as const;
