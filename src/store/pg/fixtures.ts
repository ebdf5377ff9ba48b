/**
 * A fixture's own rows on PostgreSQL (the SQLite part: ../fixtures.ts). Rows a fixture gives
 * ids to move the identity sequences past them, and the contacts it wrote are put in the
 * search index, at `finish`, in the fixture's transaction.
 *
 * Contacts, with their tags, variables and bots' subscriber counts, are written a batch at a
 * time, one statement per table: a round trip per row would make a 20 000-contact fixture take
 * a minute. A batch goes before anything that reads them (or at BATCH contacts); one that fails
 * is rolled back and written again row by row, so the error names the contact whose row it was,
 * as the SQLite store's does.
 */
import type { Surface } from '../store-api.js';
import type { FixtureAccount, FixtureContact, FixtureStore } from '../fixtures.js';
import { FixtureError } from '../seed.js';
import { PgError, type PgConnection } from './connection.js';
import { reindex } from './search.js';

/** A fixture's contact as the loader gave it: its place among the fixture's contacts, its tags and variables. */
interface Pending {
  index: number;
  row: FixtureContact;
  tags: Array<[position: number, name: string]>;
  variables: Array<[name: string, value: string | null, type: number, deletable: number]>;
}

const BATCH = 1000;

/** The columns of a fixture's contact row, and their types (for unnest). */
const CONTACT_COLUMNS: ReadonlyArray<[keyof FixtureContact, 'bigint' | 'text']> = [
  ['id', 'bigint'],
  ['bot_id', 'bigint'],
  ['messenger', 'text'],
  ['name', 'text'],
  ['phone', 'text'],
  ['email', 'text'],
  ['address', 'text'],
  ['avatar', 'text'],
  ['telegram_id', 'text'],
  ['telegram_username', 'text'],
  ['max_user_id', 'bigint'],
  ['max_username', 'text'],
  ['vk_user_id', 'bigint'],
  ['viber_id', 'text'],
  ['created_at', 'text'],
  ['created_ts', 'bigint'],
  ['unsubscribed_at', 'text'],
  ['preview', 'bigint'],
  ['deleted_at', 'text'],
];

export class PgFixtureStore implements Surface<FixtureStore> {
  /** Contacts written since the last `finish`. */
  private written: number[] = [];
  private pending: Pending[] = [];
  private bumps = new Map<number, number>();
  /** Contacts the loader has given since the last `finish` (the index of the next). */
  private given = 0;
  /** The transaction of the load the rows above belong to. */
  private load = -1;
  constructor(private readonly c: PgConnection) {}

  /** A load that failed never reached `finish`: what it left belongs to no later load. */
  private sameLoad(): void {
    if (this.load === this.c.transactions) return;
    this.load = this.c.transactions;
    this.written = [];
    this.pending = [];
    this.bumps = new Map();
    this.given = 0;
  }

  allBotIds(ownerId: number): number[] {
    return this.c
      .query<{ id: number }>('SELECT b.id FROM bots b JOIN projects p ON p.uuid = b.project_uuid WHERE p.owner_id = $1', [ownerId])
      .rows.map((r) => r.id);
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
    this.sameLoad();
    if (this.pending.length >= BATCH) this.flush();
    this.pending.push({ index: this.given++, row: r, tags: [], variables: [] });
    this.written.push(r.id);
  }
  /** The loader gives a contact's tags and variables right after it. */
  private of(contactId: number): Pending {
    const last = this.pending[this.pending.length - 1];
    if (last?.row.id !== contactId) throw new Error(`contact ${contactId} is not the fixture's last contact`);
    return last;
  }
  insertTag(contactId: number, position: number, name: string): void {
    this.of(contactId).tags.push([position, name]);
  }
  insertVariable(contactId: number, name: string, value: string | null, type: number, deletable: boolean): void {
    this.of(contactId).variables.push([name, value, type, deletable ? 1 : 0]);
  }
  bumpSubscribers(botId: number): void {
    this.sameLoad();
    this.bumps.set(botId, (this.bumps.get(botId) ?? 0) + 1);
  }

  /** Write the contacts given so far, one statement per table; on a failure, again row by row to name the contact. */
  private flush(): void {
    const batch = this.pending;
    const bumps = this.bumps;
    this.pending = [];
    this.bumps = new Map();
    if (batch.length > 0) {
      try {
        this.c.tx(() => this.write(batch));
      } catch (e) {
        // A serialisation failure is the whole transaction's, tried again from the start.
        if (!(e instanceof PgError) || e.code?.startsWith('40')) throw e;
        for (const p of batch) {
          try {
            this.c.tx(() => this.write([p]));
          } catch (err) {
            if (!(err instanceof PgError)) throw err;
            throw new FixtureError(`contacts[${p.index}] (id ${p.row.id}): ${err.message}`);
          }
        }
        throw e;
      }
    }
    if (bumps.size > 0) {
      this.c.query(
        'UPDATE bots SET subscriber_count = subscriber_count + b.n FROM unnest($1::bigint[], $2::bigint[]) AS b(id, n) WHERE bots.id = b.id',
        [[...bumps.keys()], [...bumps.values()]],
      );
    }
  }

  private write(batch: Pending[]): void {
    this.c.query(
      `INSERT INTO contacts (${CONTACT_COLUMNS.map(([col]) => col).join(', ')})
       SELECT * FROM unnest(${CONTACT_COLUMNS.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ')})`,
      CONTACT_COLUMNS.map(([col]) => batch.map((p) => p.row[col])),
    );
    const tags = batch.flatMap((p) => p.tags.map(([position, name]) => [p.row.id, position, name] as const));
    if (tags.length > 0) {
      this.c.query(
        'INSERT INTO contact_tags (contact_id, position, name) SELECT c, p, n FROM unnest($1::bigint[], $2::bigint[], $3::text[]) WITH ORDINALITY AS t(c, p, n, o) ORDER BY o',
        [tags.map((t) => t[0]), tags.map((t) => t[1]), tags.map((t) => t[2])],
      );
    }
    const vars = batch.flatMap((p) => p.variables.map((v) => [p.row.id, ...v] as const));
    if (vars.length > 0) {
      this.c.query(
        `INSERT INTO contact_variables (contact_id, name, value, type, deletable)
         SELECT c, n, v, t, d FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::bigint[]) WITH ORDINALITY AS x(c, n, v, t, d, o) ORDER BY o`,
        [vars.map((v) => v[0]), vars.map((v) => v[1]), vars.map((v) => v[2]), vars.map((v) => v[3]), vars.map((v) => v[4])],
      );
    }
  }

  /** An account with its id, or SQLite's next rowid (one past the highest); the watermark follows. */
  insertAccount(a: FixtureAccount): number {
    this.flush();
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
    this.flush();
    return this.c.one('SELECT id FROM contacts WHERE id = $1', [id]) !== undefined;
  }
  setReferrer(contactId: number, referrerId: number): void {
    this.flush();
    this.c.query('UPDATE contacts SET referrer_id = $1 WHERE id = $2', [referrerId, contactId]);
  }
  finish(): void {
    this.sameLoad();
    this.flush();
    this.given = 0;
    for (const [table, column] of [
      ['contacts', 'id'],
      ['bots', 'id'],
      ['contact_variables', 'id'],
    ] as const) {
      this.c.query(
        `SELECT setval(pg_get_serial_sequence('${table}', '${column}'), coalesce((SELECT max(${column}) FROM ${table}), 0) + 1, false)`,
      );
    }
    const ids = this.written;
    this.written = [];
    reindex(this.c, ids);
  }
}
