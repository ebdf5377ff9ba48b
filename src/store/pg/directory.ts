/** What an owner may see of the workspace, on PostgreSQL (the SQLite part: ../directory.ts). */
import type { Surface } from '../store-api.js';
import type { BotView, DirectoryStore, ProjectView } from '../directory.js';
import type { PgConnection } from './connection.js';

export class PgDirectoryStore implements Surface<DirectoryStore> {
  constructor(private readonly c: PgConnection) {}

  /** Own projects in the order they were made, then those the owner was invited to by uuid (SQLite's index orders). */
  projects(ownerId: number): ProjectView[] {
    const own = this.c.query<ProjectView>("SELECT uuid, name, 'owner' AS role FROM projects WHERE owner_id = $1 ORDER BY seq", [
      ownerId,
    ]).rows;
    const invited = this.c.query<ProjectView>(
      `SELECT p.uuid, p.name, 'member' AS role FROM members m JOIN projects p ON p.uuid = m.project_uuid
       WHERE m.owner_id = $1 AND p.owner_id <> m.owner_id ORDER BY m.project_uuid`,
      [ownerId],
    ).rows;
    return [...own, ...invited];
  }
  bots(ownerId: number): BotView[] {
    return this.c.query<BotView>(
      `SELECT b.id, b.name,
         (SELECT messenger FROM contacts WHERE bot_id = b.id AND preview = 0 AND deleted_at IS NULL ORDER BY id LIMIT 1) AS messenger,
         b.project_uuid,
         (SELECT count(*) FROM contacts WHERE bot_id = b.id AND preview = 0 AND deleted_at IS NULL) AS contacts
       FROM bots b JOIN projects p ON p.uuid = b.project_uuid
       WHERE p.owner_id = $1 AND b.deleted_at IS NULL ORDER BY b.id`,
      [ownerId],
    ).rows;
  }
  currencies(ownerId: number): string[] {
    return this.c
      .query<{ currency: string }>(
        `SELECT a.currency FROM contact_accounts a JOIN contacts c ON c.id = a.contact_id JOIN bots b ON b.id = c.bot_id
           JOIN projects p ON p.uuid = b.project_uuid
         WHERE p.owner_id = $1 GROUP BY a.currency ORDER BY count(*) DESC, a.currency LIMIT 50`,
        [ownerId],
      )
      .rows.map((r) => r.currency);
  }
}
