/**
 * The per-owner fixed-window rate limit: the window starts at an owner's first request and
 * lasts a minute; a refused request is not counted. The windows are the store's
 * (`RateWindows`): in the process for SQLite, shared by every instance on PostgreSQL.
 */
import type { RateWindows } from '../store/store-api.js';
import { MemoryRateWindows } from '../store/rate-windows.js';

export interface RateDecision {
  allowed: boolean;
  headers: Record<string, string>;
}

const WINDOW_MS = 60_000;

/** The answer when there is no limit: allowed, no headers. */
const UNLIMITED: RateDecision = Object.freeze({ allowed: true, headers: Object.freeze({}) });

export class RateLimiter {
  constructor(
    readonly limit: number,
    private readonly windows: RateWindows = new MemoryRateWindows(),
  ) {}

  /** Count a request of `owner` at `now` (ms) if the limit allows it. */
  take(owner: number, now: number): RateDecision {
    if (this.limit <= 0) return UNLIMITED;
    const w = this.windows.hit(owner, now, WINDOW_MS, this.limit);
    const headers: Record<string, string> = { 'X-RateLimit-Limit': String(this.limit) };
    if (!w.counted) {
      const resetMs = w.start + WINDOW_MS;
      headers['X-RateLimit-Remaining'] = '0';
      headers['Retry-After'] = String(Math.max(1, Math.ceil((resetMs - now) / 1000)));
      headers['X-RateLimit-Reset'] = String(Math.ceil(resetMs / 1000));
      return { allowed: false, headers };
    }
    headers['X-RateLimit-Remaining'] = String(this.limit - w.count);
    return { allowed: true, headers };
  }
}
