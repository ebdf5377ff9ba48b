/**
 * The secrets of OAuth sign-in: Workspace API keys sealed at rest (AES-256-GCM under a key
 * derived from `WORKSPACE_SECRET`'s 32 bytes for this use alone, HKDF-SHA-256), opaque tokens made from
 * 32 random bytes and kept only as their SHA-256, and the PKCE S256 check. Every comparison of
 * secrets is in constant time.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/** Keys derived from the server's secret, one per use. */
export interface Sealer {
  /** `plain` sealed, bound to `context` (the grant's id): `v1.<iv>.<ciphertext>.<tag>`, base64url. */
  seal(plain: string, context: string): string;
  /** What `seal` sealed with the same context; undefined when it was changed, or sealed under another secret or context. */
  open(sealed: string, context: string): string | undefined;
  /** An HMAC-SHA-256 of `data` under the page key (the consent form's CSRF and request seals), base64url. */
  mac(data: string): string;
}

export function sealerOf(master: Uint8Array): Sealer {
  const derive = (info: string) => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `workspace-mcp ${info}`, 32));
  const keyKey = derive('oauth api-key sealing v1');
  const pageKey = derive('oauth consent page v1');
  return {
    seal(plain, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', keyKey, iv);
      cipher.setAAD(Buffer.from(context));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v1', iv, body, cipher.getAuthTag()].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
    },
    open(sealed, context) {
      const [v, iv, body, tag] = sealed.split('.');
      if (v !== 'v1' || iv === undefined || body === undefined || tag === undefined) return undefined;
      try {
        const tagBytes = Buffer.from(tag, 'base64url');
        if (tagBytes.length !== 16) return undefined;
        const decipher = createDecipheriv('aes-256-gcm', keyKey, Buffer.from(iv, 'base64url'), { authTagLength: 16 });
        decipher.setAAD(Buffer.from(context));
        decipher.setAuthTag(tagBytes);
        return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        return undefined;
      }
    },
    mac: (data) => createHmac('sha256', pageKey).update(data).digest('base64url'),
  };
}

/** A new opaque token: a prefix saying what it is, then 32 random bytes, base64url. */
export function newToken(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

/** What a token is kept as: its SHA-256, hex. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Two strings equal, compared in constant time (of the longer one's length). */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** RFC 7636: a verifier is 43–128 characters of [A-Za-z0-9-._~]. */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

/** PKCE S256: the verifier's SHA-256, base64url, is the challenge given at authorization. */
export function pkceMatches(verifier: string, challenge: string): boolean {
  if (!VERIFIER.test(verifier)) return false;
  return sameSecret(createHash('sha256').update(verifier).digest('base64url'), challenge);
}
