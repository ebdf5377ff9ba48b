#!/usr/bin/env node
/**
 * Seed a big bot: N contacts (default 1 000 000) straight into a database file with batched
 * better-sqlite3 inserts. Creates the owner (key `bench-key`), project and bot when missing.
 * Every 10th contact has a tag, every 100th a `utm_source` variable; a few are preview or
 * deleted so the listed count differs from the row count.
 *
 *   npm run build && node tools/seed-contacts.mjs --db /tmp/big.db [--count 1000000] [--bot 900]
 *     [--times ascending|descending]
 *
 * Creation times grow with the ids (`ascending`, as contacts made through the API), so date
 * windows page over block counts; `descending` makes a bot out of time order (the slow path).
 *
 * Prints a JSON summary on stdout (this is a tool, not the MCP server).
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { openDb } from '../dist/store/db.js';
import { hashKey } from '../dist/store/keys.js';
import { isoTime } from '../dist/store/time.js';

const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    count: { type: 'string', default: '1000000' },
    bot: { type: 'string', default: '900' },
    owner: { type: 'string', default: '900' },
    key: { type: 'string', default: 'bench-key' },
    times: { type: 'string', default: 'ascending' },
  },
});
if (!values.db) {
  process.stderr.write(
    'usage: node tools/seed-contacts.mjs --db FILE [--count N] [--bot ID] [--owner ID] [--key KEY] [--times ascending|descending]\n',
  );
  process.exit(2);
}
const count = Number(values.count);
const botId = Number(values.bot);
const ownerId = Number(values.owner);
if (values.times !== 'ascending' && values.times !== 'descending') {
  process.stderr.write('--times must be ascending or descending\n');
  process.exit(2);
}
const descending = values.times === 'descending';
if (!Number.isSafeInteger(count) || count < 0 || !Number.isSafeInteger(botId) || !Number.isSafeInteger(ownerId)) {
  process.stderr.write('--count, --bot and --owner must be integers\n');
  process.exit(2);
}

const started = performance.now();
const fresh = !existsSync(values.db);
const db = openDb(values.db);
// A seed can be re-run from scratch; durability of each batch does not matter here.
db.pragma('synchronous = OFF');

const now = isoTime();
const projectUuid = `00000000-0000-4000-8000-${String(ownerId).padStart(12, '0')}`;
db.transaction(() => {
  if (!db.prepare('SELECT 1 FROM owners WHERE id = ?').get(ownerId)) {
    db.prepare(
      `INSERT INTO owners (id, name, email, plan, key_hash, created_at) VALUES (?, 'Bench owner', 'bench@example.com', 'pro', ?, ?)`,
    ).run(ownerId, hashKey(values.key), now);
  }
  if (!db.prepare('SELECT 1 FROM projects WHERE uuid = ?').get(projectUuid)) {
    db.prepare(`INSERT INTO projects (uuid, owner_id, name, created_at) VALUES (?, ?, 'Bench project', ?)`).run(projectUuid, ownerId, now);
  }
  if (!db.prepare('SELECT 1 FROM bots WHERE id = ?').get(botId)) {
    db.prepare(`INSERT INTO bots (id, project_uuid, name, created_at) VALUES (?, ?, 'Bench bot', ?)`).run(botId, projectUuid, now);
  }
}).immediate();

const insContact = db.prepare(
  `INSERT INTO contacts (bot_id, messenger, name, phone, email, telegram_id, telegram_username, created_at, created_ts, preview, deleted_at)
   VALUES (?, 'telegram', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
);
const insTag = db.prepare('INSERT INTO contact_tags (contact_id, position, name) VALUES (?, 0, ?)');
const insVar = db.prepare('INSERT INTO contact_variables (contact_id, name, value, type) VALUES (?, ?, ?, 0)');
const bump = db.prepare('UPDATE bots SET subscriber_count = subscriber_count + ? WHERE id = ?');
const base = db.prepare('SELECT coalesce(max(id), 0) AS n FROM contacts').get().n;
// Contacts are spread over the time before now, one every 3 seconds, in id order (or, with
// --times descending, in reverse).
const t0 = Math.floor(Date.now() / 1000) - count * 3;

const BATCH = 50_000;
let listed = 0;
const batch = db.transaction((from, to) => {
  let added = 0;
  for (let i = from; i < to; i++) {
    const ts = t0 + (descending ? count - 1 - i : i) * 3;
    const preview = i % 5000 === 4999 ? 1 : 0;
    const deleted = i % 7000 === 6999 ? now : null;
    const info = insContact.run(
      botId,
      `Contact ${base + i + 1}`,
      i % 3 === 0 ? String(447700000000 + i) : null,
      i % 4 === 0 ? `c${i}@example.com` : null,
      String(9_000_000_000 + base + i),
      i % 2 === 0 ? `user${i}` : null,
      new Date(ts * 1000).toISOString().slice(0, 19) + '+00:00',
      ts,
      preview,
      deleted,
    );
    const id = Number(info.lastInsertRowid);
    if (i % 10 === 0) insTag.run(id, i % 20 === 0 ? 'vip' : 'guest');
    if (i % 100 === 0) insVar.run(id, 'utm_source', 'bench');
    if (!preview && !deleted) added++;
  }
  bump.run(added, botId);
  listed += added;
});
for (let from = 0; from < count; from += BATCH) batch.immediate(from, Math.min(from + BATCH, count));
db.pragma('wal_checkpoint(TRUNCATE)');
db.close();

const seconds = (performance.now() - started) / 1000;
process.stdout.write(
  JSON.stringify({
    db: values.db,
    fresh,
    owner: ownerId,
    key: values.key,
    bot: botId,
    times: values.times,
    inserted: count,
    listed,
    seconds: Number(seconds.toFixed(1)),
  }) + '\n',
);
