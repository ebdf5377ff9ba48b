/**
 * The search index file of a remote API (one per base URL and owner): a copy of the owner's
 * contacts as getContacts pages them, the same search index as the service's database
 * (`SEARCH_SCHEMA`, kept by the same triggers), and where the sync stands, so a sync that
 * stopped continues from its last page. Each page and its sync state are written in one
 * transaction.
 *
 * A full pass numbers itself (`pass`); every row a page brings is stamped with it, and when the
 * pass ends the rows it never saw (contacts deleted since) are dropped.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { openDb, type Db } from '../store/db.js';
import { SEARCH_BY_BOT, SEARCH_SCHEMA } from '../store/migrations.js';
import { sqliteSearchIndex } from '../store/search.js';
import { ContactSearch } from './contact-query.js';
import type { ContactMirrorFile, MirrorHit, MirrorRow, MirrorState } from '../mcp/remote/contact-index.js';

const MIRROR_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE contacts (
    id INTEGER PRIMARY KEY,
    bot_id INTEGER NOT NULL,
    messenger TEXT NOT NULL,
    name TEXT NOT NULL,
    phone TEXT,
    email TEXT,
    telegram_id TEXT,
    telegram_username TEXT,
    max_user_id TEXT,
    max_username TEXT,
    vk_user_id TEXT,
    viber_id TEXT,
    tags TEXT NOT NULL DEFAULT '[]',
    preview INTEGER NOT NULL DEFAULT 0,
    deleted_at TEXT,
    pass INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX contacts_pass ON contacts(pass);
  CREATE INDEX contacts_bot ON contacts(bot_id, id);

  CREATE TABLE bots (
    bot_id INTEGER PRIMARY KEY,
    contacts INTEGER NOT NULL
  ) STRICT;
  CREATE TRIGGER bots_insert AFTER INSERT ON contacts BEGIN
    INSERT INTO bots (bot_id, contacts) VALUES (NEW.bot_id, 1) ON CONFLICT (bot_id) DO UPDATE SET contacts = contacts + 1;
  END;
  CREATE TRIGGER bots_delete AFTER DELETE ON contacts BEGIN
    UPDATE bots SET contacts = contacts - 1 WHERE bot_id = OLD.bot_id;
    DELETE FROM bots WHERE bot_id = OLD.bot_id AND contacts <= 0;
  END;
  CREATE TRIGGER bots_move AFTER UPDATE OF bot_id ON contacts WHEN OLD.bot_id <> NEW.bot_id BEGIN
    UPDATE bots SET contacts = contacts - 1 WHERE bot_id = OLD.bot_id;
    DELETE FROM bots WHERE bot_id = OLD.bot_id AND contacts <= 0;
    INSERT INTO bots (bot_id, contacts) VALUES (NEW.bot_id, 1) ON CONFLICT (bot_id) DO UPDATE SET contacts = contacts + 1;
  END;

  CREATE TABLE sync_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    pass INTEGER NOT NULL,
    offset INTEGER NOT NULL,
    last_id INTEGER,
    total INTEGER,
    pass_started_at TEXT,
    as_of TEXT,
    checked_at TEXT
  ) STRICT;
  INSERT INTO sync_state (id, pass, offset) VALUES (1, 0, 0);
  `,
  SEARCH_SCHEMA,
  SEARCH_BY_BOT,
];

type StoredRow = Omit<MirrorRow, 'tags'> & { tags: string };

export class ContactMirror implements ContactMirrorFile {
  private readonly s;
  private readonly search: ContactSearch;
  private readonly upsertRows;
  private readonly put;
  private readonly finish;

  constructor(private readonly db: Db) {
    this.search = new ContactSearch(sqliteSearchIndex(db));
    this.s = {
      state: db.prepare<[], MirrorState>(
        'SELECT pass, offset, last_id, total, pass_started_at, as_of, checked_at FROM sync_state WHERE id = 1',
      ),
      beginPass: db.prepare<[string]>(
        'UPDATE sync_state SET pass = pass + 1, offset = 0, last_id = NULL, pass_started_at = ? WHERE id = 1',
      ),
      restartPass: db.prepare('UPDATE sync_state SET offset = 0, last_id = NULL WHERE id = 1'),
      advance: db.prepare<[number, number | null, number | null, string]>(
        'UPDATE sync_state SET offset = ?, last_id = ?, total = ?, checked_at = ? WHERE id = 1',
      ),
      upsert: db.prepare(
        `INSERT INTO contacts (id, bot_id, messenger, name, phone, email, telegram_id, telegram_username, max_user_id,
           max_username, vk_user_id, viber_id, tags, pass)
         VALUES (@id, @bot_id, @messenger, @name, @phone, @email, @telegram_id, @telegram_username, @max_user_id,
           @max_username, @vk_user_id, @viber_id, @tags, (SELECT pass FROM sync_state WHERE id = 1))
         ON CONFLICT (id) DO UPDATE SET bot_id = excluded.bot_id, messenger = excluded.messenger, name = excluded.name,
           phone = excluded.phone, email = excluded.email, telegram_id = excluded.telegram_id,
           telegram_username = excluded.telegram_username, max_user_id = excluded.max_user_id,
           max_username = excluded.max_username, vk_user_id = excluded.vk_user_id, viber_id = excluded.viber_id,
           tags = excluded.tags, pass = excluded.pass`,
      ),
      dropUnseen: db.prepare('DELETE FROM contacts WHERE pass < (SELECT pass FROM sync_state WHERE id = 1)'),
      endPass: db.prepare('UPDATE sync_state SET as_of = pass_started_at, pass_started_at = NULL WHERE id = 1'),
      rows: db.prepare<[string], StoredRow>(
        `SELECT id, bot_id, messenger, name, phone, email, telegram_username, max_username, tags
         FROM contacts WHERE id IN (SELECT value FROM json_each(?))`,
      ),
      count: db.prepare<[], { n: number }>('SELECT coalesce(sum(contacts), 0) AS n FROM bots'),
      bots: db.prepare<[], { id: number; contacts: number; messenger: string | null }>(
        `SELECT b.bot_id AS id, b.contacts,
           (SELECT messenger FROM contacts WHERE bot_id = b.bot_id ORDER BY id LIMIT 1) AS messenger
         FROM bots b ORDER BY b.bot_id`,
      ),
    };
    this.upsertRows = db.transaction((rows: MirrorRow[]) => {
      for (const r of rows) this.s.upsert.run({ ...r, tags: JSON.stringify(r.tags) });
    });
    this.put = db.transaction((rows: MirrorRow[], offset: number, lastId: number | null, total: number | null, now: string) => {
      this.upsertRows(rows);
      this.s.advance.run(offset, lastId, total, now);
    });
    this.finish = db.transaction(() => {
      this.s.dropUnseen.run();
      this.s.endPass.run();
    });
  }

  /** Open (creating if needed) an index file. */
  static open(file: string): ContactMirror {
    // Contacts are personal data: the folder is the server owner's only, as the data folder is.
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    return new ContactMirror(openDb(file, MIRROR_MIGRATIONS));
  }

  state(): MirrorState {
    return this.s.state.get()!;
  }

  /** Start a full pass from the first contact. */
  beginPass(now: string): void {
    this.s.beginPass.run(now);
  }

  /** Read the current pass again from the first contact (the list moved under it). */
  restartPass(): void {
    this.s.restartPass.run();
  }

  /** Keep contacts outside the paging (seen in other answers); the sync state stays. */
  upsert(rows: MirrorRow[]): void {
    this.upsertRows.immediate(rows);
  }

  /** Keep a page of contacts and where the next page starts, in one transaction. */
  putPage(rows: MirrorRow[], next: { offset: number; lastId: number | null; total: number | null }, now: string): void {
    this.put.immediate(rows, next.offset, next.lastId, next.total, now);
  }

  /** End the pass: drop the contacts it did not see. */
  finishPass(): void {
    this.finish.immediate();
  }

  /** Contacts of `botIds` (undefined: every bot in the copy) that match `query`, best first. */
  find(query: string, botIds: readonly number[] | undefined, limit: number): { hits: MirrorHit[]; total: number; capped: boolean } {
    const bots = botIds ?? this.bots().map((b) => b.id);
    const { hits, total, capped } = this.search.search(query, bots, limit);
    const rows = new Map(this.s.rows.all(JSON.stringify(hits.map((h) => h.id))).map((r) => [r.id, r]));
    return {
      hits: hits.map((h) => {
        const r = rows.get(h.id)!;
        return { ...r, tags: JSON.parse(r.tags) as string[], matched: h.matched };
      }),
      total,
      capped,
    };
  }

  /** Contacts in the copy. */
  count(): number {
    return this.s.count.get()!.n;
  }

  /** Bots in the copy, with their contacts and the messenger of their first contact. */
  bots(): Array<{ id: number; contacts: number; messenger: string | null }> {
    return this.s.bots.all();
  }

  close(): void {
    this.db.close();
  }
}
