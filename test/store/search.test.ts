/**
 * The contact search index in the service's database: built by migration 6 for the contacts a
 * database already had, and kept in the same transaction as every contact write.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { ContactSearch } from '../../src/state/contact-query.js';
import { openDb } from '../../src/store/db.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { Store } from '../../src/store/index.js';
import { loadFixture } from '../../src/store/seed.js';
import { tempDir } from '../helpers/temp.js';
import { baseFixture } from '../helpers/world.js';

function file(): string {
  return join(tempDir(), 'workspace.db');
}

const found = (store: Store, query: string, bots = [10]) => new ContactSearch(store.search).search(query, bots, 5).hits.map((h) => h.id);

test('a database made before the index gets it built by migration 6, for the contacts already there', () => {
  const f = file();
  const old = new Database(f);
  for (const m of MIGRATIONS.slice(0, 5)) old.exec(m);
  old.pragma('user_version = 5');
  const now = '2026-01-01T00:00:00+00:00';
  old.exec(`INSERT INTO owners (id, name, plan, created_at) VALUES (1, 'A', 'pro', '${now}');
    INSERT INTO projects (uuid, owner_id, name, created_at) VALUES ('p', 1, 'P', '${now}');
    INSERT INTO bots (id, project_uuid, name, created_at) VALUES (10, 'p', 'B', '${now}');`);
  const ins = old.prepare(
    `INSERT INTO contacts (id, bot_id, messenger, name, phone, email, telegram_id, telegram_username, created_at, created_ts, preview, deleted_at)
     VALUES (?, 10, 'telegram', ?, ?, ?, ?, ?, '${now}', 0, ?, ?)`,
  );
  ins.run(1, 'Анна Каренина', '79165551234', 'anna@example.com', '501', 'annak', 0, null);
  ins.run(2, 'Preview Person', null, null, '502', null, 1, null);
  ins.run(3, 'Deleted Person', null, null, '503', null, 0, now);
  old.close();

  const store = Store.open(f);
  try {
    expect(store.db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    for (const q of ['каренина', '5551234', 'ANNA@example.com', '@annak', '501']) expect(found(store, q), q).toEqual([1]);
    // Preview and deleted contacts are not listed, so not indexed ("never included", as getContacts).
    expect(found(store, 'person')).toEqual([]);
  } finally {
    store.close();
  }
});

test('each contact write changes the index in its own transaction: a failed seed leaves no trace', () => {
  const store = Store.open(file());
  try {
    loadFixture(store, { ...baseFixture(), contacts: [{ id: 100, bot_id: 10, messenger: 'telegram', name: 'Ann Lee', telegram_id: '1' }] });
    expect(() =>
      loadFixture(store, {
        contacts: [
          { id: 101, bot_id: 10, messenger: 'telegram', name: 'Zed Half', telegram_id: '2' },
          { id: 102, bot_id: 999, messenger: 'telegram', name: 'No Bot', telegram_id: '3' },
        ],
      }),
    ).toThrow(/bot_id/);
    expect(found(store, 'zed')).toEqual([]);
    // An update that changes no indexed field leaves the index as it was; one that does, moves it.
    store.db.prepare('UPDATE contacts SET name = name, address = ? WHERE id = 100').run('Street 1');
    expect(found(store, 'ann lee')).toEqual([100]);
    store.db.prepare('UPDATE contacts SET name = ? WHERE id = 100').run('Ann Park');
    expect(found(store, 'lee')).toEqual([]);
    expect(found(store, 'park')).toEqual([100]);
    // A contact moved to another bot is searched there.
    store.db.prepare('UPDATE contacts SET bot_id = 20 WHERE id = 100').run();
    expect(found(store, 'park')).toEqual([]);
    expect(found(store, 'park', [20])).toEqual([100]);
    store.db.prepare('DELETE FROM contacts WHERE id = 100').run();
    expect(found(store, 'park', [20])).toEqual([]);
    expect(store.db.prepare('SELECT count(*) AS n FROM contact_search_keys').get()).toEqual({ n: 0 });
  } finally {
    store.close();
  }
});

test("migration 9 keeps each word behind its bot: a database indexed by migration 6 is rebuilt, and no bot finds another bot's words", () => {
  const f = file();
  const now = '2026-01-01T00:00:00+00:00';
  const old = openDb(f, MIGRATIONS.slice(0, 8));
  old.exec(`INSERT INTO owners (id, name, plan, created_at) VALUES (1, 'A', 'pro', '${now}');
    INSERT INTO projects (uuid, owner_id, name, created_at) VALUES ('p', 1, 'P', '${now}');
    INSERT INTO bots (id, project_uuid, name, created_at) VALUES (1, 'p', 'One', '${now}'), (10, 'p', 'Ten', '${now}');`);
  const ins = old.prepare(
    `INSERT INTO contacts (id, bot_id, messenger, name, email, telegram_id, created_at, created_ts) VALUES (?, ?, 'telegram', ?, ?, ?, '${now}', 0)`,
  );
  ins.run(1, 1, 'Alexandra 0zed', 'alexandra.k@example.com', '501');
  ins.run(2, 10, 'Alexander Zed', null, '502');
  old.close();

  const store = Store.open(f);
  try {
    expect(store.db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    // Built for the contacts already there: whole words, prefixes of every length, handles.
    expect(found(store, 'alexandra', [1])).toEqual([1]);
    expect(found(store, 'alexa', [1, 10])).toEqual([2, 1]); // the shorter name first
    expect(found(store, 'alexan ze', [10])).toEqual([2]);
    // Bot 1's "0zed" is not bot 10's "zed" (a tag of its own length per bot would make both "10zed").
    expect(found(store, 'zed', [10])).toEqual([2]);
    expect(found(store, 'zed', [1])).toEqual([]);
    expect(found(store, '0zed', [1, 10])).toEqual([1]);
    // A write after the migration is indexed by the same triggers.
    store.db
      .prepare(
        `INSERT INTO contacts (id, bot_id, messenger, name, telegram_id, created_at, created_ts) VALUES (3, 1, 'telegram', 'Zed Alexandrov', '503', '${now}', 0)`,
      )
      .run();
    expect(found(store, 'zed', [1])).toEqual([3]);
    expect(new ContactSearch(store.search).search('alexand', [1, 10], 5)).toMatchObject({ total: 3, capped: false });
  } finally {
    store.close();
  }
});
