/**
 * Messages (shape from the service's public docs): sendMessage, to a contact chosen by id or
 * by bot + messenger + the messenger's user id or phone. It reaches a person.
 */
import { z } from 'zod';
import { defineMethod } from './define.js';
import { r } from './rules.js';

export const MAX_MESSAGE_TEXT = 4096;
export const MESSAGE_MESSENGERS = ['telegram', 'max', 'viber', 'vk', 'web'] as const;
/** An http(s) URL with no spaces. */
export const HTTP_URL = /^https?:\/\/[^\s/?#]+[^\s]*$/i;

export const sendMessage = defineMethod({
  name: 'sendMessage',
  verbs: ['POST'],
  status: 200,
  title: 'Send a message to a contact',
  description:
    'Sends a message from the bot to a person: text (up to 4096 characters), an image and/or a file (http(s) URLs); at least one of them. ' +
    'Choose the contact by contact_id, or by bot_id + messenger + contact_external_id (the messenger user id, or the phone). ' +
    'The person receives it: it cannot be taken back, and calling twice sends twice. A contact who unsubscribed cannot be messaged (422). ' +
    'Answers {success: true}.',
  params: {
    contact_id: r.integer().requiredWithout('bot_id').describe("The key holder's contact; or give bot_id, messenger and contact_external_id instead"),
    bot_id: r.integer().requiredWithout('contact_id').describe("The key holder's bot, when the contact is chosen by messenger id"),
    messenger: r.oneOf(MESSAGE_MESSENGERS).describe('With bot_id: telegram, max, viber, vk or web'),
    contact_external_id: r.string().max(255).describe("With bot_id: the person's user id in that messenger, or their phone, as a string (e.g. \"5001\" or \"+447700900123\")"),
    text: r.string().max(MAX_MESSAGE_TEXT).describe('Message text, up to 4096 characters'),
    image: r.string().max(2048).regex(HTTP_URL).describe('http(s) URL of an image to send'),
    file: r.string().max(2048).regex(HTTP_URL).describe('http(s) URL of a file to send'),
  },
  result: z.object({ success: z.literal(true) }),
  // Reaches a person outside the workspace; each call sends another message.
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
});

export const messageMethods = [sendMessage] as const;
