/** The bearer of a request's Authorization header, and the shared token of `--auth token`, compared in constant time. */
import { timingSafeEqual } from 'node:crypto';

/** The bearer of an Authorization header (`Bearer <credential>`), or undefined. */
export function bearerOf(header: string | undefined): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m?.[1];
}

/** Whether an Authorization header carries `token` as its bearer (compared in constant time). */
export function tokenMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? '');
  if (!m) return false;
  const a = Buffer.from(m[1]!.trim());
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
