/** Messages on PostgreSQL (the SQLite part: ../messages.ts): a bot's contact by messenger id or phone, and the outbox. */
import type { Messenger } from '../contacts.js';
import type { Surface } from '../store-api.js';
import type { MessageStore, OutgoingMessage } from '../messages.js';
import type { PgConnection } from './connection.js';

export class PgMessageStore implements Surface<MessageStore> {
  constructor(private readonly c: PgConnection) {}

  findContact(botId: number, messenger: Messenger, external: string): number | undefined {
    return this.c.one<{ id: number }>(
      `SELECT id FROM contacts
       WHERE bot_id = $1 AND messenger = $2 AND deleted_at IS NULL
         AND (CASE $2 WHEN 'telegram' THEN telegram_id WHEN 'max' THEN max_user_id::text
                WHEN 'vk' THEN vk_user_id::text WHEN 'viber' THEN viber_id END = $3
              OR phone = $4)
       ORDER BY id LIMIT 1`,
      [botId, messenger, external, external.replace(/^\+/, '')],
    )?.id;
  }
  send(m: OutgoingMessage): void {
    this.c.query("INSERT INTO conversation (contact_id, direction, text, image, file, created_at) VALUES ($1, 'out', $2, $3, $4, $5)", [
      m.contactId,
      m.text,
      m.image,
      m.file,
      m.now,
    ]);
  }
}
