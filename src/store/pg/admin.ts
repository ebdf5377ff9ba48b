/** The dashboard's operations (the `admin` command) on PostgreSQL (the SQLite part: ../admin.ts). */
import type { AdminStore } from '../admin.js';
import type { Surface } from '../store-api.js';
import { isoTime } from '../time.js';
import type { PgConnection } from './connection.js';
import { reindex } from './search.js';

export class PgAdminStore implements Surface<AdminStore> {
  constructor(private readonly c: PgConnection) {}

  setAccountBlocked(accountId: number, blocked: boolean): boolean {
    const now = isoTime();
    return (
      this.c.query('UPDATE contact_accounts SET blocked_at = $1, updated_at = $2 WHERE id = $3', [blocked ? now : null, now, accountId])
        .rowCount > 0
    );
  }
  deleteContact(contactId: number): boolean {
    return this.c.tx(() => {
      const row = this.c.one<{ bot_id: number; preview: number; deleted_at: string | null }>(
        'SELECT bot_id, preview, deleted_at FROM contacts WHERE id = $1',
        [contactId],
      );
      if (!row || row.deleted_at) return false;
      this.c.query('UPDATE contacts SET deleted_at = $1 WHERE id = $2 AND deleted_at IS NULL', [isoTime(), contactId]);
      reindex(this.c, [contactId]);
      if (!row.preview) this.c.query('UPDATE bots SET subscriber_count = greatest(subscriber_count - 1, 0) WHERE id = $1', [row.bot_id]);
      return true;
    });
  }
  journal(accountId: number): Record<string, unknown>[] | undefined {
    if (!this.c.one('SELECT id FROM contact_accounts WHERE id = $1', [accountId])) return undefined;
    return this.c.query(
      'SELECT id, account_id, operation, amount, description, balance_after, created_at FROM account_journal WHERE account_id = $1 ORDER BY id',
      [accountId],
    ).rows;
  }
  conversation(contactId: number): Record<string, unknown>[] | undefined {
    if (!this.c.one('SELECT id FROM contacts WHERE id = $1', [contactId])) return undefined;
    return this.c.query('SELECT id, direction, text, image, file, created_at FROM conversation WHERE contact_id = $1 ORDER BY id', [
      contactId,
    ]).rows;
  }
}
