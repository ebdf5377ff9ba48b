/**
 * The rows a fixture writes that no API method writes as they are (a contact with its id,
 * preview flag and times; an account with an opening balance): the SQL of `seed.ts`, which
 * checks the fixture and calls these inside one transaction.
 */
import type { ContactRow } from './contacts.js';
import type { Db } from './db.js';

/** A contact row as a fixture gives it (its referrer is set after every contact is in). */
export type FixtureContact = Omit<ContactRow, 'referrer_id'>;

export interface FixtureAccount {
  id: number | null;
  contact_id: number;
  currency: string;
  amount: number;
  now: string;
  blocked_at: string | null;
}

export class FixtureStore {
  private readonly s;
  constructor(db: Db) {
    this.s = {
      allBotIds: db.prepare<[number], { id: number }>(
        'SELECT b.id FROM bots b JOIN projects p ON p.uuid = b.project_uuid WHERE p.owner_id = ?',
      ),
      contactsOf: db.prepare<[number], { n: number }>(
        'SELECT count(*) AS n FROM contacts c JOIN bots b ON b.id = c.bot_id JOIN projects p ON p.uuid = b.project_uuid WHERE p.owner_id = ?',
      ),
      listsOf: db.prepare<[number], { n: number }>(
        'SELECT count(*) AS n FROM list_schemas l JOIN projects p ON p.uuid = l.project_uuid WHERE p.owner_id = ?',
      ),
      membersOf: db.prepare<[number, number], { n: number }>(
        'SELECT count(*) AS n FROM members m JOIN projects p ON p.uuid = m.project_uuid WHERE p.owner_id = ? OR m.owner_id = ?',
      ),
      otherOwners: db.prepare<[number], { n: number }>('SELECT count(*) AS n FROM owners WHERE id <> ?'),
      dropBots: db.prepare<[number]>('DELETE FROM bots WHERE project_uuid IN (SELECT uuid FROM projects WHERE owner_id = ?)'),
      dropProjects: db.prepare<[number]>('DELETE FROM projects WHERE owner_id = ?'),
      dropOwner: db.prepare<[number]>('DELETE FROM owners WHERE id = ?'),
      contact: db.prepare(
        `INSERT INTO contacts (id, bot_id, messenger, name, phone, email, address, avatar, telegram_id, telegram_username,
           max_user_id, max_username, vk_user_id, viber_id, created_at, created_ts, unsubscribed_at, preview, deleted_at, referrer_id)
         VALUES (@id, @bot_id, @messenger, @name, @phone, @email, @address, @avatar, @telegram_id, @telegram_username,
           @max_user_id, @max_username, @vk_user_id, @viber_id, @created_at, @created_ts, @unsubscribed_at, @preview, @deleted_at, NULL)`,
      ),
      tag: db.prepare<[number, number, string]>('INSERT INTO contact_tags (contact_id, position, name) VALUES (?, ?, ?)'),
      variable: db.prepare<[number, string, string | null, number, number]>(
        'INSERT INTO contact_variables (contact_id, name, value, type, deletable) VALUES (?, ?, ?, ?, ?)',
      ),
      bumpSubscribers: db.prepare<[number]>('UPDATE bots SET subscriber_count = subscriber_count + 1 WHERE id = ?'),
      account: db.prepare(
        `INSERT INTO contact_accounts (id, contact_id, currency, amount, created_at, updated_at, blocked_at)
         VALUES (@id, @contact_id, @currency, @amount, @now, @now, @blocked_at)`,
      ),
      journal: db.prepare<[number, number, number, string]>(
        `INSERT INTO account_journal (account_id, operation, amount, description, balance_after, created_at)
         VALUES (?, 'Opening balance', ?, 'Loaded from fixture', ?, ?)`,
      ),
      contactExists: db.prepare<[number], { id: number }>('SELECT id FROM contacts WHERE id = ?'),
      setReferrer: db.prepare<[number, number]>('UPDATE contacts SET referrer_id = ? WHERE id = ?'),
    };
  }

  /** Every bot of the owner's projects, deleted or not. */
  allBotIds(ownerId: number): number[] {
    return this.s.allBotIds.all(ownerId).map((b) => b.id);
  }
  /** Whether anything but the owner's own projects and bots was made: contacts, lists, team members, other owners. */
  worldUsed(ownerId: number): boolean {
    const n =
      this.s.contactsOf.get(ownerId)!.n +
      this.s.listsOf.get(ownerId)!.n +
      this.s.membersOf.get(ownerId, ownerId)!.n +
      this.s.otherOwners.get(ownerId)!.n;
    return n > 0;
  }
  /** Remove the owner with its projects and bots. */
  removeOwner(ownerId: number): void {
    this.s.dropBots.run(ownerId);
    this.s.dropProjects.run(ownerId);
    this.s.dropOwner.run(ownerId);
  }
  insertContact(c: FixtureContact): void {
    this.s.contact.run(c);
  }
  insertTag(contactId: number, position: number, name: string): void {
    this.s.tag.run(contactId, position, name);
  }
  insertVariable(contactId: number, name: string, value: string | null, type: number, deletable: boolean): void {
    this.s.variable.run(contactId, name, value, type, deletable ? 1 : 0);
  }
  bumpSubscribers(botId: number): void {
    this.s.bumpSubscribers.run(botId);
  }
  /** Insert an account (its id given or the next); its id. */
  insertAccount(a: FixtureAccount): number {
    return Number(this.s.account.run(a).lastInsertRowid);
  }
  openingBalance(accountId: number, amount: number, now: string): void {
    this.s.journal.run(accountId, amount, amount, now);
  }
  contactExists(id: number): boolean {
    return this.s.contactExists.get(id) !== undefined;
  }
  setReferrer(contactId: number, referrerId: number): void {
    this.s.setReferrer.run(referrerId, contactId);
  }
  /** After the last row of a fixture, in its transaction (SQLite's triggers have kept everything already). */
  finish(): void {}
}
