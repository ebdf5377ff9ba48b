/** Projects, the owners invited to them (members), and their bots: where a resource lives. */
import { randomUUID } from 'node:crypto';
import type { Db } from './db.js';
import { isoTime } from './time.js';

export interface ProjectRow {
  uuid: string;
  owner_id: number;
  name: string;
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

export class ProjectStore {
  private readonly s;
  constructor(private readonly db: Db) {
    this.s = {
      project: db.prepare<[string], ProjectRow>('SELECT * FROM projects WHERE uuid = ?'),
      insertProject: db.prepare('INSERT INTO projects (uuid, owner_id, name, created_at) VALUES (@uuid, @owner_id, @name, @created_at)'),
      insertMember: db.prepare('INSERT INTO members (owner_id, project_uuid) VALUES (@owner_id, @project_uuid)'),
      bot: db.prepare<[number], BotRow>('SELECT b.*, p.owner_id FROM bots b JOIN projects p ON p.uuid = b.project_uuid WHERE b.id = ?'),
      insertBot: db.prepare(
        `INSERT INTO bots (id, project_uuid, name, deleted_at, created_at)
         VALUES (@id, @project_uuid, @name, @deleted_at, @created_at)`,
      ),
      deleteBot: db.prepare<[string, number]>('UPDATE bots SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL'),
      ownerBotIds: db.prepare<[number], { id: number }>(
        `SELECT b.id FROM bots b JOIN projects p ON p.uuid = b.project_uuid
         WHERE p.owner_id = ? AND b.deleted_at IS NULL ORDER BY b.id`,
      ),
    };
  }

  get(uuid: string): ProjectRow | undefined {
    return this.s.project.get(uuid);
  }
  insert(p: { uuid?: string; owner_id: number; name: string }): string {
    const uuid = p.uuid ?? randomUUID();
    this.s.insertProject.run({ uuid, owner_id: p.owner_id, name: p.name, created_at: isoTime() });
    return uuid;
  }
  /** Invite an owner to a project (a team member; the API does not let it in). */
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
  /** The owner's first project and its first live bot (the start-up banner's); prepared here, it runs once. */
  firstProject(ownerId: number): { uuid: string; bot_id: number | null } | undefined {
    return this.db
      .prepare<[number], { uuid: string; bot_id: number | null }>(
        `SELECT p.uuid, (SELECT min(b.id) FROM bots b WHERE b.project_uuid = p.uuid AND b.deleted_at IS NULL) AS bot_id
         FROM projects p WHERE p.owner_id = ? ORDER BY p.rowid LIMIT 1`,
      )
      .get(ownerId);
  }
  /** Live bots of the owner's own projects. */
  ownerBotIds(ownerId: number): number[] {
    return this.s.ownerBotIds.all(ownerId).map((r) => r.id);
  }
}
