/**
 * The bounds of sign-in per address: who sent a request (the socket, or the TLS proxy's word on
 * this machine), and counts of what each address did in a window (refused keys, registrations).
 */
import type { IncomingMessage } from 'node:http';

/** Counts per address in a window (key tries, registrations); bounded, the oldest address forgotten first. */
export class Counts {
  private readonly seen = new Map<string, { n: number; since: number }>();
  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Counts one for `who`: false (and nothing counted) when the window already holds the limit. */
  take(who: string, now: number): boolean {
    let t = this.seen.get(who);
    if (!t || now - t.since > this.windowMs) {
      this.seen.delete(who);
      t = { n: 0, since: now };
      this.seen.set(who, t);
      if (this.seen.size > 50_000) this.seen.delete(this.seen.keys().next().value!);
    }
    if (t.n >= this.limit) return false;
    t.n++;
    return true;
  }

  /** Takes back one count of `who`'s (a try that turned out right, or was never made). */
  giveBack(who: string): void {
    const t = this.seen.get(who);
    if (t && t.n > 0) t.n--;
  }
}

/**
 * Who sent a request, for the counts per address: the socket's address; behind a proxy on this
 * machine (the TLS proxy), the last X-Forwarded-For entry, which that proxy itself wrote (any
 * earlier one is the client's own word).
 */
export function addressOf(req: IncomingMessage): string {
  const socket = req.socket.remoteAddress ?? '';
  const forwarded = req.headers['x-forwarded-for'];
  const list = Array.isArray(forwarded) ? forwarded.join(',') : forwarded;
  if (list && /^(127\.|::1$|::ffff:127\.)/.test(socket)) {
    const last = list.split(',').pop()!.trim();
    if (last) return last;
  }
  return socket;
}
