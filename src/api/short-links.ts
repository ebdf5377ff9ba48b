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
  title: 'Decode a short link',
  description:
    "Turns a media variable's short link into a link to the file valid for an hour (expires_at and sign in its query); decode again when it expires.",
  params: {
    url: r.string().required().max(2048).describe('As the variable shows it'),
  },
  result: z.object({ data: z.object({ url: z.string().describe('Signed link to the file, with expires_at and sign in its query') }) }),
  annotations: READ,
});

export const shortLinkMethods = [decodeShortLink] as const;
