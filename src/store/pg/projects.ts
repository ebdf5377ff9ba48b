/** Projects, members and bots on PostgreSQL (the SQLite part: ../projects.ts). */
import { randomUUID } from 'node:crypto';
import type { Surface } from '../store-api.js';
import type { BotRow, ProjectRow, ProjectStore } from '../projects.js';
import { isoTime } from '../time.js';
import type { PgConnection } from './connection.js';

/** The ids of an owner's live bots, in order ($1 the owner). */
export const OWNER_BOTS =
  'SELECT b.id FROM bots b JOIN projects p ON p.uuid = b.project_uuid WHERE p.owner_id = $1 AND b.deleted_at IS NULL ORDER BY b.id';

export class PgProjectStore implements Surface<ProjectStore> {
  constructor(private readonly c: PgConnection) {}

  get(uuid: string): ProjectRow | undefined {
    return this.c.one<ProjectRow>('SELECT uuid, owner_id, name, created_at FROM projects WHERE uuid = $1', [uuid]);
  }
  insert(p: { uuid?: string; owner_id: number; name: string }): string {
    const uuid = p.uuid ?? randomUUID();
    this.c.query('INSERT INTO projects (uuid, owner_id, name, created_at) VALUES ($1, $2, $3, $4)', [uuid, p.owner_id, p.name, isoTime()]);
    return uuid;
  }
  insertMember(m: { owner_id: number; project_uuid: string }): void {
    this.c.query('INSERT INTO members (owner_id, project_uuid) VALUES ($1, $2)', [m.owner_id, m.project_uuid]);
  }
  bot(id: number): BotRow | undefined {
    return this.c.one<BotRow>('SELECT b.*, p.owner_id FROM bots b JOIN projects p ON p.uuid = b.project_uuid WHERE b.id = $1', [id]);
  }
  insertBot(b: { id?: number | null; project_uuid: string; name: string; deleted?: boolean }): number {
    const now = isoTime();
    return this.c.tx(() => {
      const id = this.c.one<{ id: number }>(
        'INSERT INTO bots (id, project_uuid, name, deleted_at, created_at) VALUES (coalesce($1, nextval(pg_get_serial_sequence($6, $7))), $2, $3, $4, $5) RETURNING id',
        [b.id ?? null, b.project_uuid, b.name, b.deleted ? now : null, now, 'bots', 'id'],
      )!.id;
      // A bot given its id (a fixture's): the next one made without an id comes after it.
      if (b.id != null) this.c.query("SELECT setval(pg_get_serial_sequence('bots', 'id'), (SELECT max(id) FROM bots))");
      return id;
    });
  }
  deleteBot(id: number): boolean {
    return this.c.query('UPDATE bots SET deleted_at = $1 WHERE id = $2 AND deleted_at IS NULL', [isoTime(), id]).rowCount > 0;
  }
  firstProject(ownerId: number): { uuid: string; bot_id: number | null } | undefined {
    return this.c.one(
      `SELECT p.uuid, (SELECT min(b.id) FROM bots b WHERE b.project_uuid = p.uuid AND b.deleted_at IS NULL) AS bot_id
       FROM projects p WHERE p.owner_id = $1 ORDER BY p.seq LIMIT 1`,
      [ownerId],
    );
  }
  ownerBotIds(ownerId: number): number[] {
    return this.c.query<{ id: number }>(OWNER_BOTS, [ownerId]).rows.map((r) => r.id);
  }
}
