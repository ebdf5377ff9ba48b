/** Tags on PostgreSQL (the SQLite part: ../tags.ts); `bot_tags` is filled by a trigger, as there. */
import type { Surface } from '../store-api.js';
import type { TagStore } from '../tags.js';
import type { PgConnection } from './connection.js';

export class PgTagStore implements Surface<TagStore> {
  constructor(private readonly c: PgConnection) {}

  botTags(botId: number): string[] {
    return this.c.query<{ name: string }>('SELECT name FROM bot_tags WHERE bot_id = $1 ORDER BY id', [botId]).rows.map((r) => r.name);
  }
  /** Add the tag at the end of the contact's tags, unless it has it (the HAVING): one statement. */
  attach(contactId: number, name: string): void {
    this.c.query(
      `INSERT INTO contact_tags (contact_id, position, name)
         SELECT $1, coalesce(max(position) + 1, 0), $2 FROM contact_tags WHERE contact_id = $1
         HAVING NOT EXISTS (SELECT 1 FROM contact_tags WHERE contact_id = $1 AND name = $2)`,
      [contactId, name],
    );
  }
  detach(contactId: number, name: string): void {
    this.c.query('DELETE FROM contact_tags WHERE contact_id = $1 AND name = $2', [contactId, name]);
  }
}
