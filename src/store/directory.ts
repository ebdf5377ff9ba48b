/**
 * What an owner may see of the workspace (the MCP server's getWorkspace): their projects (own,
 * and those they were invited to), the live bots of their own projects with listed-contact
 * counts, and the currencies of their contacts' accounts. A bot has no messenger of its own
 * here: it is the messenger of its first listed contact (a bot serves one messenger).
 */
import type { Db } from './db.js';

export interface ProjectView {
  uuid: string;
  name: string;
  role: 'owner' | 'member';
}

export interface BotView {
  id: number;
  name: string;
  messenger: string | null;
  project_uuid: string;
  contacts: number;
}

export class DirectoryStore {
  private readonly s;
  constructor(db: Db) {
    this.s = {
      projects: db.prepare<[number, number], ProjectView>(
        `SELECT uuid, name, 'owner' AS role FROM projects WHERE owner_id = ?
         UNION ALL
         SELECT p.uuid, p.name, 'member' AS role FROM members m JOIN projects p ON p.uuid = m.project_uuid
           WHERE m.owner_id = ? AND p.owner_id <> m.owner_id`,
      ),
      bots: db.prepare<[number], BotView>(
        `SELECT b.id, b.name,
           (SELECT messenger FROM contacts INDEXED BY contacts_listed
              WHERE bot_id = b.id AND preview = 0 AND deleted_at IS NULL ORDER BY id LIMIT 1) AS messenger,
           b.project_uuid,
           (SELECT coalesce(sum(n), 0) FROM contact_blocks WHERE bot_id = b.id) AS contacts
         FROM bots b JOIN projects p ON p.uuid = b.project_uuid
         WHERE p.owner_id = ? AND b.deleted_at IS NULL ORDER BY b.id`,
      ),
      currencies: db.prepare<[number], { currency: string }>(
        `SELECT a.currency FROM contact_accounts a JOIN contacts c ON c.id = a.contact_id JOIN bots b ON b.id = c.bot_id
           JOIN projects p ON p.uuid = b.project_uuid
         WHERE p.owner_id = ? GROUP BY a.currency ORDER BY count(*) DESC, a.currency LIMIT 50`,
      ),
    };
  }

  /** The owner's own projects, then those they were invited to. */
  projects(ownerId: number): ProjectView[] {
    return this.s.projects.all(ownerId, ownerId);
  }

  /** Live bots of the owner's own projects (the only ones the API reaches). */
  bots(ownerId: number): BotView[] {
    return this.s.bots.all(ownerId);
  }

  /** Currencies of the owner's contact accounts, most used first. */
  currencies(ownerId: number): string[] {
    return this.s.currencies.all(ownerId).map((r) => r.currency);
  }
}
