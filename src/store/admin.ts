/** The dashboard's operations that are not API methods (the `admin` command). */
import type { Db } from './db.js';
import { isoTime } from './time.js';

/** Runs `fn` in one transaction (the store's own wrapper). */
export type Transact = <T>(fn: () => T) => T;

export class AdminStore {
  private readonly s;
  constructor(
    db: Db,
    private readonly tx: Transact,
  ) {
    this.s = {
      blockAccount: db.prepare<[string | null, string, number]>('UPDATE contact_accounts SET blocked_at = ?, updated_at = ? WHERE id = ?'),
      deleteContact: db.prepare<[string, number]>('UPDATE contacts SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL'),
      contact: db.prepare<[number], { id: number; bot_id: number; preview: number; deleted_at: string | null }>(
        'SELECT id, bot_id, preview, deleted_at FROM contacts WHERE id = ?',
      ),
      dropSubscriber: db.prepare<[number]>('UPDATE bots SET subscriber_count = max(subscriber_count - 1, 0) WHERE id = ?'),
      journal: db.prepare<[number], Record<string, unknown>>(
        `SELECT id, account_id, operation, amount, description, balance_after, created_at
         FROM account_journal WHERE account_id = ? ORDER BY id`,
      ),
      accountExists: db.prepare<[number], { id: number }>('SELECT id FROM contact_accounts WHERE id = ?'),
      conversation: db.prepare<[number], Record<string, unknown>>(
        'SELECT id, direction, text, image, file, created_at FROM conversation WHERE contact_id = ? ORDER BY id',
      ),
    };
  }

  setAccountBlocked(accountId: number, blocked: boolean): boolean {
    const now = isoTime();
    return this.s.blockAccount.run(blocked ? now : null, now, accountId).changes > 0;
  }

  deleteContact(contactId: number): boolean {
    return this.tx(() => {
      const c = this.s.contact.get(contactId);
      if (!c || c.deleted_at) return false;
      this.s.deleteContact.run(isoTime(), contactId);
      if (!c.preview) this.s.dropSubscriber.run(c.bot_id);
      return true;
    });
  }

  /** The journal of an account, oldest first; undefined if there is no such account. */
  journal(accountId: number): Record<string, unknown>[] | undefined {
    if (!this.s.accountExists.get(accountId)) return undefined;
    return this.s.journal.all(accountId);
  }

  /** The contact's messages, oldest first; undefined if there is no such contact. */
  conversation(contactId: number): Record<string, unknown>[] | undefined {
    if (!this.s.contact.get(contactId)) return undefined;
    return this.s.conversation.all(contactId);
  }
}
