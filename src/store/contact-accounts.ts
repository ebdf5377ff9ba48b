/**
 * Contact accounts and their journal: the SQL. These are primitives; the caller runs a money
 * move (read, check, update balance, append journal) inside one `store.tx`, so the check and
 * the write see the same balance even with several processes on one file.
 */
import type { Db } from './db.js';
import { groupByContact } from './group.js';

export interface AccountRow {
  id: number;
  contact_id: number;
  currency: string;
  amount: number;
  created_at: string;
  updated_at: string;
  blocked_at: string | null;
}

/** What the journal calls an API move. */
export type Operation = 'Deposit via API' | 'Debit via API';

/** A move as `tryMove` takes it: `delta` onto account `id` of `ownerId`'s contact, within 0 … `max`. */
export interface Move {
  id: number;
  ownerId: number;
  delta: number;
  max: number;
  operation: Operation;
  description: string;
  now: string;
}

export class ContactAccountStore {
  private readonly s;
  constructor(db: Db) {
    this.s = {
      byContact: db.prepare<[number], AccountRow>('SELECT * FROM contact_accounts WHERE contact_id = ? ORDER BY id'),
      byContacts: db.prepare<[string], AccountRow>(
        'SELECT * FROM contact_accounts WHERE contact_id IN (SELECT value FROM json_each(?)) ORDER BY contact_id, id',
      ),
      byId: db.prepare<[number], AccountRow>('SELECT * FROM contact_accounts WHERE id = ?'),
      byCurrency: db.prepare<[number, string], AccountRow>('SELECT * FROM contact_accounts WHERE contact_id = ? AND currency = ?'),
      insert: db.prepare<[number, string, string, string], AccountRow>(
        `INSERT INTO contact_accounts (id, contact_id, currency, amount, created_at, updated_at, blocked_at)
         VALUES ((SELECT max_id + 1 FROM id_watermarks WHERE name = 'contact_accounts'), ?, ?, 0, ?, ?, NULL) RETURNING *`,
      ),
      remove: db.prepare<[number]>('DELETE FROM contact_accounts WHERE id = ? AND amount = 0'),
      setAmount: db.prepare<[number, string, number], AccountRow>(
        'UPDATE contact_accounts SET amount = ?, updated_at = ? WHERE id = ? RETURNING *',
      ),
      // The checks of a move as conditions of its UPDATE: the account is reachable by the owner
      // (its contact and bot live, the bot in one of the owner's projects, as requireContact
      // checks), a debit's account is not blocked, and the new balance is within bounds.
      // Positional parameters (bound from an argument list, cheaper than from an object a debit).
      checkedMove: db.prepare<[number, string, number, number, number, number, number], AccountRow>(
        `UPDATE contact_accounts SET amount = amount + ?, updated_at = ?
         WHERE id = ? AND amount + ? BETWEEN 0 AND ? AND (? = 0 OR blocked_at IS NULL)
           AND EXISTS (SELECT 1 FROM contacts c JOIN bots b ON b.id = c.bot_id JOIN projects p ON p.uuid = b.project_uuid
                       WHERE c.id = contact_accounts.contact_id AND c.deleted_at IS NULL AND b.deleted_at IS NULL AND p.owner_id = ?)
         RETURNING *`,
      ),
      journal: db.prepare<[number, Operation, number, string, number, string]>(
        `INSERT INTO account_journal (account_id, operation, amount, description, balance_after, created_at)
         VALUES (?, ?, ?, ?, ?, ?)`,
      ),
    };
  }

  /** The contact's accounts in the order they were opened. */
  listByContact(contactId: number): AccountRow[] {
    return this.s.byContact.all(contactId);
  }

  /** The accounts of these contacts, each contact's in the order they were opened; one query. */
  listByContacts(contactIds: readonly number[]): Map<number, AccountRow[]> {
    return contactIds.length === 0 ? new Map() : groupByContact(this.s.byContacts.iterate(JSON.stringify(contactIds)));
  }

  get(id: number): AccountRow | undefined {
    return this.s.byId.get(id);
  }

  byCurrency(contactId: number, currency: string): AccountRow | undefined {
    return this.s.byCurrency.get(contactId, currency);
  }

  /**
   * Open an empty account; `'exists'` when the contact already has one in that currency
   * (the UNIQUE index decides, so two racing openings cannot both succeed).
   */
  open(contactId: number, currency: string, now: string): AccountRow | 'exists' {
    try {
      return this.s.insert.get(contactId, currency, now, now)!;
    } catch (e) {
      if ((e as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') return 'exists';
      throw e;
    }
  }

  /** Delete an account whose balance is zero (its journal goes with it); false if none was. */
  removeEmpty(id: number): boolean {
    return this.s.remove.run(id).changes > 0;
  }

  /**
   * A move in two statements when every check passes (see `checkedMove`): the balance changed
   * by `delta` and the journal record appended. Undefined, nothing written, when any check
   * fails: the caller then reads the account to tell which. Run it inside `store.tx`.
   */
  tryMove(m: Move): AccountRow | undefined {
    const debit = m.operation === 'Debit via API' ? 1 : 0;
    const row = this.s.checkedMove.get(m.delta, m.now, m.id, m.delta, m.max, debit, m.ownerId);
    if (row) this.s.journal.run(m.id, m.operation, m.delta, m.description, row.amount, m.now);
    return row;
  }

  /**
   * Set the balance and append the journal record of the move: `delta` is signed (a debit is
   * negative), so an account's journal sums to its balance. Run it inside `store.tx`.
   */
  move(id: number, balance: number, delta: number, operation: Operation, description: string, now: string): AccountRow {
    const row = this.s.setAmount.get(balance, now, id);
    if (!row) throw new Error(`account ${id} vanished inside its transaction`);
    this.s.journal.run(id, operation, delta, description, balance, now);
    return row;
  }
}
