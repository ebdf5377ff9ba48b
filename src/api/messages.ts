/**
 * Messages (shape from the service's public docs): sendMessage, to a contact chosen by id or
 * by bot + messenger + the messenger's user id or phone. It reaches a person.
 */
import { z } from 'zod';
import { defineMethod, WRITE } from './define.js';
import { r } from './rules.js';

const MAX_MESSAGE_TEXT = 4096;
const MESSAGE_MESSENGERS = ['telegram', 'max', 'viber', 'vk', 'web'] as const;
/** An http(s) URL with no spaces. */
export const HTTP_URL = /^https?:\/\/[^\s/?#]+[^\s]*$/i;

export const sendMessage = defineMethod({
  name: 'sendMessage',
  title: 'Send a message to a contact',
  description:
    'Sends a message from the bot to a person: text, image and/or file, at least one. The person gets it: it cannot be taken back, ' +
    'and each call sends again.',
  params: {
    contact_id: r.integer().requiredWithout('bot_id').describe('Or bot_id + messenger + contact_external_id'),
    bot_id: r.integer().requiredWithout('contact_id').describe('With messenger and contact_external_id'),
    messenger: r.oneOf(MESSAGE_MESSENGERS),
    contact_external_id: r.string().max(255).describe('The messenger user id or the phone, as text'),
    text: r.string().max(MAX_MESSAGE_TEXT),
    image: r.string().max(2048).regex(HTTP_URL),
    file: r.string().max(2048).regex(HTTP_URL),
  },
  result: z.object({ success: z.literal(true) }),
  // Reaches a person outside the workspace; each call sends another message.
  annotations: { ...WRITE, openWorldHint: true },
});

export const messageMethods = [sendMessage] as const;
