/**
 * Short links (shape from the service's public docs): decodeShortLink. Media variables show a
 * short link the service issued; decoding gives a signed link to the file that expires.
 */
import { z } from 'zod';
import { defineMethod, READ } from './define.js';
import { r } from './rules.js';

/** Where the service's short links live (ours): `http://localhost/s/<token>`. */
export const SHORT_LINK_BASE = 'http://localhost/s/';
/** How long a decoded link stays valid, in seconds (ours). */
export const SIGNED_LINK_TTL = 3600;

export const decodeShortLink = defineMethod({
  name: 'decodeShortLink',
  verbs: ['GET', 'POST'],
  status: 200,
  title: 'Decode a short link',
  description:
    'Turns a short link from a media variable (the value of an image, document, audio or video variable, e.g. http://localhost/s/...) ' +
    'into a link to the stored file that works for one hour: its query carries expires_at (Unix time) and sign. ' +
    'Decode again when it has expired. A link the service did not issue gives 404. Changes nothing.',
  params: {
    url: r.string().required().max(2048).describe('The short link exactly as a variable value shows it'),
  },
  result: z.object({ data: z.object({ url: z.string().describe('Signed link to the file, with expires_at and sign in its query') }) }),
  annotations: READ,
});

export const shortLinkMethods = [decodeShortLink] as const;
