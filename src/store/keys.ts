/** API keys: generated at random, stored only as a SHA-256 hash, compared in constant time. */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export function generateKey(): string {
  return randomBytes(30).toString('base64url');
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Constant-time equality of two hex hashes. */
export function hashesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}
