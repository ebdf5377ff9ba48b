/** API keys: generated at random, stored only as a SHA-256 hash, compared in constant time. */
import { hash, randomBytes } from 'node:crypto';

export function generateKey(): string {
  return randomBytes(30).toString('base64url');
}

/** SHA-256 in hex; the one-shot `hash` costs a third of a Hash object's (every request hashes its key). */
export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/**
 * Constant-time equality of two hex hashes: every character is looked at whatever the first
 * difference (no two buffers made a request, as `timingSafeEqual` would need).
 */
export function hashesEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
