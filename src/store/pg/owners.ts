/** Owners on PostgreSQL (the SQLite part: ../owners.ts): key holders, plan, block, key. */
import type { Surface } from '../store-api.js';
import { generateKey, hashKey, hashesEqual } from '../keys.js';
import type { OwnerRow, OwnerStore } from '../owners.js';
import { isoTime } from '../time.js';
import type { PgConnection } from './connection.js';

type NewOwner = Parameters<OwnerStore['insert']>[0];

export class PgOwnerStore implements Surface<OwnerStore> {
  constructor(private readonly c: PgConnection) {}

  /** The owner whose key this is, or undefined; read from the database on every call, so a key rotated through any instance is refused by all at once. */
  byKey(key: string): OwnerRow | undefined {
    return this.byHash(hashKey(key));
  }
  /** The owner whose key has this hash (`hashKey`), or undefined; compared in constant time. */
  byHash(h: string): OwnerRow | undefined {
    const row = this.c.one<OwnerRow>('SELECT * FROM owners WHERE key_hash = $1', [h]);
    return row && row.key_hash && hashesEqual(row.key_hash, h) ? row : undefined;
  }
  get(id: number): OwnerRow | undefined {
    return this.c.one<OwnerRow>('SELECT * FROM owners WHERE id = $1', [id]);
  }
  first(): OwnerRow | undefined {
    return this.c.one<OwnerRow>('SELECT * FROM owners ORDER BY id LIMIT 1');
  }
  count(): number {
    return this.c.one<{ n: number }>('SELECT count(*) AS n FROM owners')!.n;
  }
  /** As SQLite's rowid: a new owner's id is one past the highest. */
  insert(o: NewOwner): number {
    const now = isoTime();
    return this.c.tx(
      () =>
        this.c.one<{ id: number }>(
          `INSERT INTO owners (id, name, email, phone, plan, blocked_at, key_hash, created_at)
           VALUES (coalesce($1, (SELECT coalesce(max(id), 0) + 1 FROM owners)), $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
          [
            o.id ?? null,
            o.name,
            o.email ?? null,
            o.phone ?? null,
            o.plan ?? 'pro',
            o.blocked ? now : null,
            o.api_key ? hashKey(o.api_key) : null,
            o.created_at ?? now,
          ],
        )!.id,
    );
  }
  regenerateKey(ownerId: number): string | undefined {
    const key = generateKey();
    return this.c.query('UPDATE owners SET key_hash = $1 WHERE id = $2', [hashKey(key), ownerId]).rowCount ? key : undefined;
  }
  setPlan(ownerId: number, plan: 'pro' | 'free'): boolean {
    return this.c.query('UPDATE owners SET plan = $1 WHERE id = $2', [plan, ownerId]).rowCount > 0;
  }
  setBlocked(ownerId: number, blocked: boolean): boolean {
    return this.c.query('UPDATE owners SET blocked_at = $1 WHERE id = $2', [blocked ? isoTime() : null, ownerId]).rowCount > 0;
  }
}
