/**
 * Idempotency keys of the MCP money tools: the first answer to (owner, key) is kept with a hash
 * of the call, so a retry with the same key replays it instead of moving money again. A row with
 * status 0 is a reservation: the call is under way (or its outcome was never learnt).
 */
import type { Db } from './db.js';
import { isoTime } from './time.js';

export interface IdempotencyRow {
  owner_id: number;
  key: string;
  method: string;
  params_hash: string;
  /** 0 while the call is under way; then the HTTP status of the kept answer. */
  status: number;
  /** JSON text of the kept answer's body; empty while pending. */
  body: string;
  created_at: string;
}

export class IdempotencyStore {
  private readonly s;
  constructor(db: Db) {
    this.s = {
      get: db.prepare<[number, string], IdempotencyRow>('SELECT * FROM idempotency_keys WHERE owner_id = ? AND key = ?'),
      reserve: db.prepare(
        `INSERT INTO idempotency_keys (owner_id, key, method, params_hash, status, body, created_at)
         VALUES (@owner_id, @key, @method, @params_hash, 0, '', @created_at)
         ON CONFLICT(owner_id, key) DO NOTHING`,
      ),
      complete: db.prepare<[number, string, number, string]>(
        'UPDATE idempotency_keys SET status = ?, body = ? WHERE owner_id = ? AND key = ? AND status = 0',
      ),
      release: db.prepare<[number, string]>('DELETE FROM idempotency_keys WHERE owner_id = ? AND key = ? AND status = 0'),
    };
  }

  get(ownerId: number, key: string): IdempotencyRow | undefined {
    return this.s.get.get(ownerId, key);
  }

  /**
   * Claim `key` for a call: returns undefined when this call now owns it, else the row that was
   * already there (a finished answer or another call's reservation). Atomic: one statement.
   */
  reserve(ownerId: number, key: string, method: string, paramsHash: string, now = new Date()): IdempotencyRow | undefined {
    const r = this.s.reserve.run({ owner_id: ownerId, key, method, params_hash: paramsHash, created_at: isoTime(now) });
    return r.changes === 1 ? undefined : this.get(ownerId, key);
  }

  /** Keep the answer of a reserved call. */
  complete(ownerId: number, key: string, status: number, bodyJson: string): void {
    this.s.complete.run(status, bodyJson, ownerId, key);
  }

  /** Give the key back (the call failed and moved nothing), so it may be used again. */
  release(ownerId: number, key: string): void {
    this.s.release.run(ownerId, key);
  }
}
