/**
 * Money on PostgreSQL (the SQLite parts: ../balance.ts, ../contact-accounts.ts). A move is one
 * conditional UPDATE (`tryMove`: the balance stays within 0 … max, the account not blocked for a
 * debit, the contact the caller's) and the journal insert, in a READ COMMITTED transaction
 * (`store.tx` with rowLocks): two instances debiting one account at once queue on the row's
 * lock, and the second's condition is checked again on the balance the first committed, so
 * neither fails nor passes on a stale balance. When the condition fails, the row stays locked
 * to the end of the transaction, so the service's reads that tell why (and its write, should
 * the balance have changed in between) see and change the current balance. The CHECK
 * (amount >= 0) of the table is the last guard.
 */
import type { BalanceStore } from '../balance.js';
import type { AccountRow, ContactAccountStore, Move, Operation } from '../contact-accounts.js';
import type { Surface } from '../store-api.js';
import { groupByContact } from '../group.js';
import type { PgConnection } from './connection.js';

export class PgBalanceStore implements Surface<BalanceStore> {
  constructor(private readonly c: PgConnection) {}

  get(ownerId: number): { balance: number; currency: string } | undefined {
    return this.c.one('SELECT balance, currency FROM owners WHERE id = $1', [ownerId]);
  }
  set(ownerId: number, balance: number, currency: string): boolean {
    return this.c.query('UPDATE owners SET balance = $1, currency = $2 WHERE id = $3', [balance, currency, ownerId]).rowCount > 0;
  }
}

export class PgContactAccountStore implements Surface<ContactAccountStore> {
  constructor(private readonly c: PgConnection) {}

  listByContact(contactId: number): AccountRow[] {
    return this.c.query<AccountRow>('SELECT * FROM contact_accounts WHERE contact_id = $1 ORDER BY id', [contactId]).rows;
  }
  listByContacts(contactIds: readonly number[]): Map<number, AccountRow[]> {
    if (contactIds.length === 0) return new Map();
    return groupByContact(
      this.c.query<AccountRow>('SELECT * FROM contact_accounts WHERE contact_id = ANY($1::bigint[]) ORDER BY contact_id, id', [contactIds])
        .rows,
    );
  }
  get(id: number): AccountRow | undefined {
    return this.c.one<AccountRow>('SELECT * FROM contact_accounts WHERE id = $1', [id]);
  }
  byCurrency(contactId: number, currency: string): AccountRow | undefined {
    return this.c.one<AccountRow>('SELECT * FROM contact_accounts WHERE contact_id = $1 AND currency = $2', [contactId, currency]);
  }
  /**
   * Open an empty account with the next id past the high-water mark; `'exists'` when the
   * contact has one in that currency (the UNIQUE constraint decides; no error is raised, which
   * would abort the caller's transaction on PostgreSQL).
   */
  open(contactId: number, currency: string, now: string): AccountRow | 'exists' {
    const row = this.c.one<AccountRow>(
      `WITH next AS (
         UPDATE id_watermarks SET max_id = max_id + 1 WHERE name = 'contact_accounts'
           AND NOT EXISTS (SELECT 1 FROM contact_accounts WHERE contact_id = $1 AND currency = $2)
         RETURNING max_id)
       INSERT INTO contact_accounts (id, contact_id, currency, amount, created_at, updated_at, blocked_at)
         SELECT max_id, $1, $2, 0, $3, $3, NULL FROM next
       ON CONFLICT (contact_id, currency) DO NOTHING RETURNING *`,
      [contactId, currency, now],
    );
    return row ?? 'exists';
  }
  removeEmpty(id: number): boolean {
    return this.c.query('DELETE FROM contact_accounts WHERE id = $1 AND amount = 0', [id]).rowCount > 0;
  }
  /**
   * A move in one statement when every check passes (the SQLite part's `tryMove`): the balance
   * changed by `delta` and the journal record appended. Undefined, nothing written, when any
   * check fails: the caller then reads the account to tell which, under the row lock taken
   * here. Run it inside `store.tx`.
   */
  tryMove(m: Move): AccountRow | undefined {
    const debit = m.operation === 'Debit via API';
    // One statement, one round trip: the row lock is held from here to COMMIT only, so moves
    // of one account follow each other as closely as the commits allow. It returns the
    // transaction's id too, which COMMIT needs should its answer be lost (connection.ts).
    const moved = this.c.one<AccountRow & { txid: number }>(
      `WITH moved AS (
         UPDATE contact_accounts SET amount = amount + $2, updated_at = $3
         WHERE id = $1 AND amount + $2 BETWEEN 0 AND $4 AND (NOT $5 OR blocked_at IS NULL)
           AND EXISTS (SELECT 1 FROM contacts c JOIN bots b ON b.id = c.bot_id JOIN projects p ON p.uuid = b.project_uuid
                       WHERE c.id = contact_accounts.contact_id AND c.deleted_at IS NULL AND b.deleted_at IS NULL AND p.owner_id = $6)
         RETURNING *),
       journal AS (
         INSERT INTO account_journal (account_id, operation, amount, description, balance_after, created_at)
         SELECT id, $7, $2, $8, amount, $3 FROM moved)
       SELECT *, txid_current() AS txid FROM moved`,
      [m.id, m.delta, m.now, m.max, debit, m.ownerId, m.operation, m.description],
    );
    // At READ COMMITTED another move could commit between the caller's reads and its write.
    if (!moved) {
      this.c.query('SELECT 1 FROM contact_accounts WHERE id = $1 FOR UPDATE', [m.id]);
      return undefined;
    }
    const { txid, ...row } = moved;
    this.c.knowTxid(txid);
    return row;
  }

  move(id: number, balance: number, delta: number, operation: Operation, description: string, now: string): AccountRow {
    const row = this.c.one<AccountRow>('UPDATE contact_accounts SET amount = $1, updated_at = $2 WHERE id = $3 RETURNING *', [
      balance,
      now,
      id,
    ]);
    if (!row) throw new Error(`account ${id} vanished inside its transaction`);
    this.c.query(
      `INSERT INTO account_journal (account_id, operation, amount, description, balance_after, created_at)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [id, operation, delta, description, balance, now],
    );
    return row;
  }
}
