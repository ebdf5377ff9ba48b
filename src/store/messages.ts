/** Messages: finding a bot's contact by messenger id or phone, and the conversation outbox: the SQL. */
import type { Db } from './db.js';
import type { Messenger } from './contacts.js';

export interface OutgoingMessage {
  contactId: number;
  text: string | null;
  image: string | null;
  file: string | null;
  now: string;
}

export class MessageStore {
  private readonly s;
  constructor(db: Db) {
    this.s = {
      byExternal: db.prepare<{ bot_id: number; messenger: string; external: string; phone: string }, { id: number }>(
        `SELECT id FROM contacts
         WHERE bot_id = @bot_id AND messenger = @messenger AND deleted_at IS NULL
           AND (CASE @messenger WHEN 'telegram' THEN telegram_id WHEN 'max' THEN CAST(max_user_id AS TEXT)
                  WHEN 'vk' THEN CAST(vk_user_id AS TEXT) WHEN 'viber' THEN viber_id END = @external
                OR phone = @phone)
         ORDER BY id LIMIT 1`,
      ),
      insert: db.prepare<[number, string | null, string | null, string | null, string]>(
        "INSERT INTO conversation (contact_id, direction, text, image, file, created_at) VALUES (?, 'out', ?, ?, ?, ?)",
      ),
    };
  }

  /** The bot's live contact in `messenger` whose user id, or phone (with or without +), is `external`. */
  findContact(botId: number, messenger: Messenger, external: string): number | undefined {
    return this.s.byExternal.get({ bot_id: botId, messenger, external, phone: external.replace(/^\+/, '') })?.id;
  }

  /** Append an outgoing message to the contact's conversation. */
  send(m: OutgoingMessage): void {
    this.s.insert.run(m.contactId, m.text, m.image, m.file, m.now);
  }
}
