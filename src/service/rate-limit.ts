/**
 * The per-owner fixed-window rate limit: the window starts at an owner's first request and
 * lasts a minute; a refused request is not counted.
 */
export interface RateDecision {
  allowed: boolean;
  headers: Record<string, string>;
}

const WINDOW_MS = 60_000;

/** The answer when there is no limit: allowed, no headers. */
const UNLIMITED: RateDecision = Object.freeze({ allowed: true, headers: Object.freeze({}) });

export class RateLimiter {
  private readonly windows = new Map<number, { start: number; count: number }>();
  constructor(readonly limit: number) {}

  /** Count a request of `owner` at `now` (ms) if the limit allows it. */
  take(owner: number, now: number): RateDecision {
    if (this.limit <= 0) return UNLIMITED;
    let w = this.windows.get(owner);
    if (!w || now - w.start >= WINDOW_MS) {
      w = { start: now, count: 0 };
      this.windows.set(owner, w);
    }
    const headers: Record<string, string> = { 'X-RateLimit-Limit': String(this.limit) };
    if (w.count >= this.limit) {
      const resetMs = w.start + WINDOW_MS;
      headers['X-RateLimit-Remaining'] = '0';
      headers['Retry-After'] = String(Math.max(1, Math.ceil((resetMs - now) / 1000)));
      headers['X-RateLimit-Reset'] = String(Math.ceil(resetMs / 1000));
      return { allowed: false, headers };
    }
    w.count++;
    headers['X-RateLimit-Remaining'] = String(this.limit - w.count);
    return { allowed: true, headers };
  }
}
