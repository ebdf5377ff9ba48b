/** The rate limit's windows kept in this process (the SQLite store's: one process serves a file). */
import type { RateWindows, WindowHit } from './store-api.js';

export class MemoryRateWindows implements RateWindows {
  private readonly windows = new Map<number, { start: number; count: number }>();

  hit(owner: number, now: number, windowMs: number, limit: number): WindowHit {
    let w = this.windows.get(owner);
    if (!w || now - w.start >= windowMs) {
      w = { start: now, count: 0 };
      this.windows.set(owner, w);
    }
    if (w.count >= limit) return { start: w.start, count: w.count, counted: false };
    w.count++;
    return { start: w.start, count: w.count, counted: true };
  }
}
