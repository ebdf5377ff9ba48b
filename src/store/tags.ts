/**
 * Tags: a contact's tags (attach, detach) and a bot's tags: the SQL. `bot_tags` (migration 3)
 * holds every name ever used in a bot in order of first use, filled by a trigger.
 */
import type { Db } from './db.js';

export class TagStore {
  private readonly s;
  constructor(private readonly db: Db) {
    this.s = {
      botTags: db.prepare<[number], { name: string }>('SELECT name FROM bot_tags WHERE bot_id = ? ORDER BY id'),
      has: db.prepare<[number, string], { n: number }>('SELECT count(*) AS n FROM contact_tags WHERE contact_id = ? AND name = ?'),
      append: db.prepare<{ contact: number; name: string }>(
        `INSERT INTO contact_tags (contact_id, position, name)
         SELECT @contact, coalesce(max(position) + 1, 0), @name FROM contact_tags WHERE contact_id = @contact`,
      ),
      detach: db.prepare<[number, string]>('DELETE FROM contact_tags WHERE contact_id = ? AND name = ?'),
    };
  }

  /** Every tag used in the bot, in order of first use; position + 1 is the tag's id. */
  botTags(botId: number): string[] {
    return this.s.botTags.all(botId).map((r) => r.name);
  }

  /** Add the tag at the end of the contact's tags, unless it has it; one transaction. */
  attach(contactId: number, name: string): void {
    this.db
      .transaction(() => {
        if (this.s.has.get(contactId, name)!.n === 0) this.s.append.run({ contact: contactId, name });
      })
      .immediate();
  }

  /** Remove the tag from the contact; absent is fine. */
  detach(contactId: number, name: string): void {
    this.s.detach.run(contactId, name);
  }
}
