/** Owners (the API's key holders): who a key belongs to, their plan, block and key. */
import type { Db } from './db.js';
import { generateKey, hashKey, hashesEqual } from './keys.js';
import { isoTime } from './time.js';

export interface OwnerRow {
  id: number;
  name: string;
  email: string | null;
  phone: string | null;
  plan: 'pro' | 'free';
  blocked_at: string | null;
  key_hash: string | null;
  created_at: string;
}

/** Where owners are kept between requests (core-cache.ts): a miss or a stale entry loads. */
export interface OwnerCache {
  ownerByHash(hash: string, load: () => OwnerRow | undefined): OwnerRow | undefined;
  ownerById(id: number, load: () => OwnerRow | undefined): OwnerRow | undefined;
}

export class OwnerStore {
  private readonly s;
  constructor(
    db: Db,
    private readonly cache: OwnerCache,
  ) {
    this.s = {
      byHash: db.prepare<[string], OwnerRow>('SELECT * FROM owners WHERE key_hash = ?'),
      get: db.prepare<[number], OwnerRow>('SELECT * FROM owners WHERE id = ?'),
      first: db.prepare<[], OwnerRow>('SELECT * FROM owners ORDER BY id LIMIT 1'),
      count: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM owners'),
      insert: db.prepare(
        `INSERT INTO owners (id, name, email, phone, plan, blocked_at, key_hash, created_at)
         VALUES (@id, @name, @email, @phone, @plan, @blocked_at, @key_hash, @created_at)`,
      ),
      setKey: db.prepare<[string, number]>('UPDATE owners SET key_hash = ? WHERE id = ?'),
      setPlan: db.prepare<[string, number]>('UPDATE owners SET plan = ? WHERE id = ?'),
      setBlocked: db.prepare<[string | null, number]>('UPDATE owners SET blocked_at = ? WHERE id = ?'),
    };
  }

  /** The owner whose key this is, or undefined; the hash is compared in constant time. */
  byKey(key: string): OwnerRow | undefined {
    return this.byHash(hashKey(key));
  }

  /** The owner whose key has this hash (`hashKey`), or undefined; compared in constant time. */
  byHash(h: string): OwnerRow | undefined {
    const row = this.cache.ownerByHash(h, () => this.s.byHash.get(h));
    return row && row.key_hash && hashesEqual(row.key_hash, h) ? row : undefined;
  }
  get(id: number): OwnerRow | undefined {
    return this.cache.ownerById(id, () => this.s.get.get(id));
  }
  first(): OwnerRow | undefined {
    return this.s.first.get();
  }
  count(): number {
    return this.s.count.get()!.n;
  }
  insert(o: {
    id?: number | null;
    name: string;
    email?: string | null;
    phone?: string | null;
    plan?: 'pro' | 'free';
    blocked?: boolean;
    api_key?: string | null;
    created_at?: string;
  }): number {
    const now = isoTime();
    const info = this.s.insert.run({
      id: o.id ?? null,
      name: o.name,
      email: o.email ?? null,
      phone: o.phone ?? null,
      plan: o.plan ?? 'pro',
      blocked_at: o.blocked ? now : null,
      key_hash: o.api_key ? hashKey(o.api_key) : null,
      created_at: o.created_at ?? now,
    });
    return Number(info.lastInsertRowid);
  }
  /** Give the owner a new key; the old one stops working at once. Returns the key. */
  regenerateKey(ownerId: number): string | undefined {
    const key = generateKey();
    const info = this.s.setKey.run(hashKey(key), ownerId);
    return info.changes ? key : undefined;
  }
  setPlan(ownerId: number, plan: 'pro' | 'free'): boolean {
    return this.s.setPlan.run(plan, ownerId).changes > 0;
  }
  setBlocked(ownerId: number, blocked: boolean): boolean {
    return this.s.setBlocked.run(blocked ? isoTime() : null, ownerId).changes > 0;
  }
}
