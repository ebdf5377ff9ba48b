/**
 * Owners, projects, team members, bots, deprecations and settings: who may reach what.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from './db.js';
import { generateKey, hashKey, hashesEqual } from './keys.js';
import { isoTime } from './time.js';

/** Settings key of the owner a new database was given (the MCP server's owner with no key). */
export const DEFAULT_OWNER_SETTING = 'default_owner_id';

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

export interface BotRow {
  id: number;
  project_uuid: string;
  name: string;
  subscriber_count: number;
  deleted_at: string | null;
  created_at: string;
  owner_id: number;
}

export interface ContactAccessRow {
  id: number;
  bot_id: number;
  deleted_at: string | null;
  preview: number;
  bot_deleted_at: string | null;
  owner_id: number;
}

export interface ProjectRow {
  uuid: string;
  owner_id: number;
  name: string;
  created_at: string;
}

export class CoreStore {
  private readonly s;
  constructor(private readonly db: Db) {
    this.s = {
      ownerByHash: db.prepare<[string], OwnerRow>('SELECT * FROM owners WHERE key_hash = ?'),
      owner: db.prepare<[number], OwnerRow>('SELECT * FROM owners WHERE id = ?'),
      firstOwner: db.prepare<[], OwnerRow>('SELECT * FROM owners ORDER BY id LIMIT 1'),
      ownerCount: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM owners'),
      insertOwner: db.prepare(
        `INSERT INTO owners (id, name, email, phone, plan, blocked_at, key_hash, created_at)
         VALUES (@id, @name, @email, @phone, @plan, @blocked_at, @key_hash, @created_at)`,
      ),
      setKey: db.prepare<[string, number]>('UPDATE owners SET key_hash = ? WHERE id = ?'),
      setPlan: db.prepare<[string, number]>('UPDATE owners SET plan = ? WHERE id = ?'),
      setBlocked: db.prepare<[string | null, number]>('UPDATE owners SET blocked_at = ? WHERE id = ?'),
      project: db.prepare<[string], ProjectRow>('SELECT * FROM projects WHERE uuid = ?'),
      insertProject: db.prepare(
        'INSERT INTO projects (uuid, owner_id, name, created_at) VALUES (@uuid, @owner_id, @name, @created_at)',
      ),
      insertMember: db.prepare('INSERT INTO members (owner_id, project_uuid) VALUES (@owner_id, @project_uuid)'),
      bot: db.prepare<[number], BotRow>(
        'SELECT b.*, p.owner_id FROM bots b JOIN projects p ON p.uuid = b.project_uuid WHERE b.id = ?',
      ),
      insertBot: db.prepare(
        `INSERT INTO bots (id, project_uuid, name, deleted_at, created_at)
         VALUES (@id, @project_uuid, @name, @deleted_at, @created_at)`,
      ),
      deleteBot: db.prepare<[string, number]>('UPDATE bots SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL'),
      ownerBotIds: db.prepare<[number], { id: number }>(
        `SELECT b.id FROM bots b JOIN projects p ON p.uuid = b.project_uuid
         WHERE p.owner_id = ? AND b.deleted_at IS NULL ORDER BY b.id`,
      ),
      contactAccess: db.prepare<[number], ContactAccessRow>(
        `SELECT c.id, c.bot_id, c.deleted_at, c.preview, b.deleted_at AS bot_deleted_at, p.owner_id
         FROM contacts c JOIN bots b ON b.id = c.bot_id JOIN projects p ON p.uuid = b.project_uuid WHERE c.id = ?`,
      ),
      deprecation: db.prepare<[string], { method: string; sunset: string }>(
        'SELECT * FROM deprecations WHERE method = ?',
      ),
      upsertDeprecation: db.prepare<[string, string]>(
        'INSERT INTO deprecations (method, sunset) VALUES (?, ?) ON CONFLICT(method) DO UPDATE SET sunset = excluded.sunset',
      ),
      getSetting: db.prepare<[string], { value: string }>('SELECT value FROM settings WHERE key = ?'),
      setSetting: db.prepare<[string, string]>(
        'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
      ),
    };
  }

  /** The owner whose key this is, or undefined; the hash is compared in constant time. */
  ownerByKey(key: string): OwnerRow | undefined {
    const h = hashKey(key);
    const row = this.s.ownerByHash.get(h);
    return row && row.key_hash && hashesEqual(row.key_hash, h) ? row : undefined;
  }
  owner(id: number): OwnerRow | undefined {
    return this.s.owner.get(id);
  }
  firstOwner(): OwnerRow | undefined {
    return this.s.firstOwner.get();
  }
  ownerCount(): number {
    return this.s.ownerCount.get()!.n;
  }
  insertOwner(o: {
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
    const info = this.s.insertOwner.run({
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
  setOwnerBlocked(ownerId: number, blocked: boolean): boolean {
    return this.s.setBlocked.run(blocked ? isoTime() : null, ownerId).changes > 0;
  }
  project(uuid: string): ProjectRow | undefined {
    return this.s.project.get(uuid);
  }
  insertProject(p: { uuid?: string; owner_id: number; name: string }): string {
    const uuid = p.uuid ?? randomUUID();
    this.s.insertProject.run({ uuid, owner_id: p.owner_id, name: p.name, created_at: isoTime() });
    return uuid;
  }
  insertMember(m: { owner_id: number; project_uuid: string }): void {
    this.s.insertMember.run(m);
  }
  /** A bot with its project's owner, deleted or not. */
  bot(id: number): BotRow | undefined {
    return this.s.bot.get(id);
  }
  insertBot(b: { id?: number | null; project_uuid: string; name: string; deleted?: boolean }): number {
    const now = isoTime();
    const info = this.s.insertBot.run({
      id: b.id ?? null,
      project_uuid: b.project_uuid,
      name: b.name,
      deleted_at: b.deleted ? now : null,
      created_at: now,
    });
    return Number(info.lastInsertRowid);
  }
  deleteBot(id: number): boolean {
    return this.s.deleteBot.run(isoTime(), id).changes > 0;
  }
  /** Live bots of the owner's own projects. */
  ownerBotIds(ownerId: number): number[] {
    return this.s.ownerBotIds.all(ownerId).map((r) => r.id);
  }
  /** The owner's first project and its first live bot (the start-up banner's); prepared here, it runs once. */
  firstProject(ownerId: number): { uuid: string; bot_id: number | null } | undefined {
    return this.db
      .prepare<[number], { uuid: string; bot_id: number | null }>(
        `SELECT p.uuid, (SELECT min(b.id) FROM bots b WHERE b.project_uuid = p.uuid AND b.deleted_at IS NULL) AS bot_id
         FROM projects p WHERE p.owner_id = ? ORDER BY p.rowid LIMIT 1`,
      )
      .get(ownerId);
  }
  /** Who a contact belongs to, and whether it or its bot is deleted. */
  contactAccess(id: number): ContactAccessRow | undefined {
    return this.s.contactAccess.get(id);
  }
  deprecation(method: string): { method: string; sunset: string } | undefined {
    return this.s.deprecation.get(method);
  }
  setDeprecation(method: string, sunset: string): void {
    this.s.upsertDeprecation.run(method, sunset);
  }
  setting(key: string): string | undefined {
    return this.s.getSetting.get(key)?.value;
  }
  setSetting(key: string, value: string): void {
    this.s.setSetting.run(key, value);
  }
}
