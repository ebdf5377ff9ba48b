/**
 * A fixture's own rows on PostgreSQL (the SQLite part: ../fixtures.ts). Rows a fixture gives
 * ids to move the identity sequences past them, and the contacts it wrote are put in the
 * search index, at `finish`, in the fixture's transaction.
 */
import type { Surface } from '../contract.js';
import type { FixtureAccount, FixtureContact, FixtureStore } from '../fixtures.js';
import type { PgConnection } from './connection.js';
import { reindex } from './search.js';

export class PgFixtureStore implements Surface<FixtureStore> {
  /** Contacts written since the last `finish`. */
  private written: number[] = [];
  constructor(private readonly c: PgConnection) {}

  allBotIds(ownerId: number): number[] {
    return this.c.query<{ id: number }>('SELECT b.id FROM bots b JOIN projects p ON p.uuid = b.project_uuid WHERE p.owner_id = $1', [ownerId]).rows.map((r) => r.id);
  }
  worldUsed(ownerId: number): boolean {
    return (
      this.c.one<{ n: number }>(
        `SELECT (SELECT count(*) FROM contacts c JOIN bots b ON b.id = c.bot_id JOIN projects p ON p.uuid = b.project_uuid WHERE p.owner_id = $1)
           + (SELECT count(*) FROM list_schemas l JOIN projects p ON p.uuid = l.project_uuid WHERE p.owner_id = $1)
           + (SELECT count(*) FROM members m JOIN projects p ON p.uuid = m.project_uuid WHERE p.owner_id = $1 OR m.owner_id = $1)
           + (SELECT count(*) FROM owners WHERE id <> $1) AS n`,
        [ownerId],
      )!.n > 0
    );
  }
  removeOwner(ownerId: number): void {
    this.c.query('DELETE FROM bots WHERE project_uuid IN (SELECT uuid FROM projects WHERE owner_id = $1)', [ownerId]);
    this.c.query('DELETE FROM projects WHERE owner_id = $1', [ownerId]);
    this.c.query('DELETE FROM owners WHERE id = $1', [ownerId]);
  }
  insertContact(r: FixtureContact): void {
    this.c.query(
      `INSERT INTO contacts (id, bot_id, messenger, name, phone, email, address, avatar, telegram_id, telegram_username,
         max_user_id, max_username, vk_user_id, viber_id, created_at, created_ts, unsubscribed_at, preview, deleted_at, referrer_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, NULL)`,
      [r.id, r.bot_id, r.messenger, r.name, r.phone, r.email, r.address, r.avatar, r.telegram_id, r.telegram_username, r.max_user_id, r.max_username, r.vk_user_id, r.viber_id, r.created_at, r.created_ts, r.unsubscribed_at, r.preview, r.deleted_at],
    );
    this.written.push(r.id);
  }
  insertTag(contactId: number, position: number, name: string): void {
    this.c.query('INSERT INTO contact_tags (contact_id, position, name) VALUES ($1, $2, $3)', [contactId, position, name]);
  }
  insertVariable(contactId: number, name: string, value: string | null, type: number, deletable: boolean): void {
    this.c.query('INSERT INTO contact_variables (contact_id, name, value, type, deletable) VALUES ($1, $2, $3, $4, $5)', [contactId, name, value, type, deletable ? 1 : 0]);
  }
  bumpSubscribers(botId: number): void {
    this.c.query('UPDATE bots SET subscriber_count = subscriber_count + 1 WHERE id = $1', [botId]);
  }
  /** An account with its id, or SQLite's next rowid (one past the highest); the watermark follows. */
  insertAccount(a: FixtureAccount): number {
    const id = this.c.one<{ id: number }>(
      `INSERT INTO contact_accounts (id, contact_id, currency, amount, created_at, updated_at, blocked_at)
       VALUES (coalesce($1, (SELECT coalesce(max(id), 0) + 1 FROM contact_accounts)), $2, $3, $4, $5, $5, $6) RETURNING id`,
      [a.id, a.contact_id, a.currency, a.amount, a.now, a.blocked_at],
    )!.id;
    this.c.query("UPDATE id_watermarks SET max_id = greatest(max_id, $1) WHERE name = 'contact_accounts'", [id]);
    return id;
  }
  openingBalance(accountId: number, amount: number, now: string): void {
    this.c.query(
      `INSERT INTO account_journal (account_id, operation, amount, description, balance_after, created_at)
       VALUES ($1, 'Opening balance', $2, 'Loaded from fixture', $2, $3)`,
      [accountId, amount, now],
    );
  }
  contactExists(id: number): boolean {
    return this.c.one('SELECT id FROM contacts WHERE id = $1', [id]) !== undefined;
  }
  setReferrer(contactId: number, referrerId: number): void {
    this.c.query('UPDATE contacts SET referrer_id = $1 WHERE id = $2', [referrerId, contactId]);
  }
  finish(): void {
    for (const [table, column] of [
      ['contacts', 'id'],
      ['bots', 'id'],
      ['contact_variables', 'id'],
    ] as const) {
      this.c.query(`SELECT setval(pg_get_serial_sequence('${table}', '${column}'), coalesce((SELECT max(${column}) FROM ${table}), 0) + 1, false)`);
    }
    const ids = this.written;
    this.written = [];
    reindex(this.c, ids);
  }
}
