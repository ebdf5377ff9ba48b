/**
 * Short links for media variables, and the signed links they decode to.
 *
 * A short link is `SHORT_LINK_BASE` + `<variable id>-<tag>`, where the tag is the first 128
 * bits of HMAC-SHA256(signing key, "short-link:<id>") in base64url: the same link every time
 * for a variable, and one nobody can make up for an id. Decoding gives the stored file URL with
 * `expires_at` (Unix seconds) and then `sign` appended: `sign` is the hex HMAC-SHA256 of
 * everything before `&sign=` (or `?sign=`), so neither the URL nor the expiry can be changed.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { fail } from '../api/errors.js';
import type { decodeShortLink } from '../api/short-links.js';
import { SHORT_LINK_BASE, SIGNED_LINK_TTL } from '../api/short-links.js';
import type { Infer } from '../api/rules.js';
import type { VariableRow } from '../store/contacts.js';
import { requireContact } from './access.js';
import type { Ctx } from './context.js';

const TOKEN = /^([1-9][0-9]{0,15})-([A-Za-z0-9_-]{22})$/;

function tagOf(key: Buffer, id: number): string {
  return createHmac('sha256', key).update(`short-link:${id}`).digest().subarray(0, 16).toString('base64url');
}

/** Whether a variable holds a file (image, document, audio, video) that shows as a short link. */
export function isMediaVariable(v: Pick<VariableRow, 'type' | 'value'>): boolean {
  return v.type >= 1 && v.type <= 4 && v.value !== null;
}

/** The short link of a variable: the same every time for the same variable and key. */
export function shortLinkFor(key: Buffer, variableId: number): string {
  return `${SHORT_LINK_BASE}${variableId}-${tagOf(key, variableId)}`;
}

/** The variable id a short link names, if this service issued it (the tag checks out). */
export function parseShortLink(key: Buffer, url: string): number | undefined {
  if (!url.startsWith(SHORT_LINK_BASE)) return undefined;
  const m = TOKEN.exec(url.slice(SHORT_LINK_BASE.length));
  if (!m) return undefined;
  const id = Number(m[1]);
  // Compared as text: base64url decoding ignores the last character's spare bits.
  const given = Buffer.from(m[2]!, 'latin1');
  const want = Buffer.from(tagOf(key, id), 'latin1');
  return given.length === want.length && timingSafeEqual(given, want) ? id : undefined;
}

function signature(key: Buffer, text: string): string {
  return createHmac('sha256', key).update(text).digest('hex');
}

/** `fileUrl` (fragment dropped) with `expires_at` and `sign` appended to its query. */
export function signFileLink(key: Buffer, fileUrl: string, expiresAt: number): string {
  const base = fileUrl.replace(/#.*$/s, '');
  const unsigned = `${base}${base.includes('?') ? '&' : '?'}expires_at=${expiresAt}`;
  return `${unsigned}&sign=${signature(key, unsigned)}`;
}

export type LinkCheck = 'ok' | 'malformed' | 'bad_signature' | 'expired';

/**
 * Check a link made by `signFileLink`: `sign` last, over everything before it, and
 * `expires_at` (the last one before `sign`) not yet passed at `now`.
 */
export function verifyFileLink(key: Buffer, link: string, now: Date): LinkCheck {
  const m = /^(.*[?&]expires_at=([0-9]{1,15}))&sign=([0-9a-f]{64})$/s.exec(link);
  if (!m) return 'malformed';
  const given = Buffer.from(m[3]!, 'hex');
  const want = Buffer.from(signature(key, m[1]!), 'hex');
  if (!timingSafeEqual(given, want)) return 'bad_signature';
  return Number(m[2]) * 1000 > now.getTime() ? 'ok' : 'expired';
}

function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

export const shortLinkHandlers = {
  decodeShortLink(ctx: Ctx, p: Infer<(typeof decodeShortLink)['params']>) {
    if (!isHttpUrl(p.url)) throw fail.invalid('url', 'The url field must be a valid URL.');
    const key = ctx.secrets.signingKey;
    const id = parseShortLink(key, p.url);
    const v = id === undefined ? undefined : ctx.store.variables.byId(id);
    if (!v || !isMediaVariable(v)) throw fail.notFoundOn('url', 'Short link not found.');
    requireContact(ctx, v.contact_id);
    const expiresAt = Math.floor(ctx.now.getTime() / 1000) + SIGNED_LINK_TTL;
    return { data: { url: signFileLink(key, v.value!, expiresAt) } };
  },
};
