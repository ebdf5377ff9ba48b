/**
 * The rate limit's windows in PostgreSQL: one atomic upsert per request, so every instance on
 * the database counts an owner's requests in the same window (120 a minute across all of them,
 * not per instance). No transaction and no lock beyond the row's own.
 */
import type { RateWindows, WindowHit } from '../store-api.js';
import type { PgConnection } from './connection.js';

export class PgRateWindows implements RateWindows {
  constructor(private readonly c: PgConnection) {}

  hit(owner: number, now: number, windowMs: number, limit: number): WindowHit {
    const w = this.c.one<{ start_ms: number; count: number }>(
      `INSERT INTO rate_windows AS w (owner_id, start_ms, count) VALUES ($1, $2, 1)
       ON CONFLICT (owner_id) DO UPDATE SET
         start_ms = CASE WHEN $2 - w.start_ms >= $3 THEN $2 ELSE w.start_ms END,
         count = CASE WHEN $2 - w.start_ms >= $3 THEN 1 ELSE w.count + 1 END
       RETURNING start_ms, count`,
      [owner, now, windowMs],
    )!;
    return { start: w.start_ms, count: Math.min(w.count, limit), counted: w.count <= limit };
  }
}
