// The baselines' own database work, straight on better-sqlite3, shared by the bare node:http
// server (bare-db-server.mjs) and the in-process ledger bench: what a hand-written server with
// no pipeline does for a debit and for a page of contacts.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ROOT } from './lib.mjs';

const Database = createRequire(join(ROOT, 'package.json'))('better-sqlite3');

/** A connection with the store's pragmas (WAL, synchronous=NORMAL, foreign keys, busy timeout). */
export function openRaw(file) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 10000');
  return db;
}

/** The API's timestamp form. */
const iso = () => new Date().toISOString().slice(0, 19) + '+00:00';

/**
 * A debit as one IMMEDIATE transaction: `UPDATE … WHERE amount >= ?` (the check and the write in
 * one statement), the journal insert, and the account back; undefined when refused.
 */
export function rawDebit(db) {
  const update = db.prepare(
    `UPDATE contact_accounts SET amount = amount - ?, updated_at = ?
     WHERE id = ? AND blocked_at IS NULL AND amount >= ? RETURNING *`,
  );
  const journal = db.prepare(
    `INSERT INTO account_journal (account_id, operation, amount, description, balance_after, created_at)
     VALUES (?, 'Debit via API', ?, ?, ?, ?)`,
  );
  return db.transaction((id, amount, description) => {
    const now = iso();
    const row = update.get(amount, now, id, amount);
    if (!row) return undefined;
    journal.run(id, -amount, description, row.amount, now);
    return row;
  }).immediate;
}

/** The account as the API shows it (two-digit currencies only: the benches use USD, EUR, GBP). */
export function accountView(row) {
  const s = String(row.amount).padStart(3, '0');
  return {
    id: row.id,
    currency: row.currency,
    amount: row.amount,
    amount_note: `${s.slice(0, -2)}.${s.slice(-2)} ${row.currency}`,
    created_at: row.created_at,
    updated_at: row.updated_at,
    blocked_at: row.blocked_at,
  };
}

/**
 * A page of a bot's listed contacts with their tags and variables, in prepared statements
 * (rows, tags, variables, the total), shaped as plain objects for JSON.stringify.
 */
export function rawContactsPage(db) {
  const IN = 'IN (SELECT value FROM json_each(?))';
  const q = {
    rows: db.prepare('SELECT * FROM contacts WHERE bot_id = ? AND preview = 0 AND deleted_at IS NULL ORDER BY id LIMIT ? OFFSET ?'),
    total: db.prepare('SELECT count(*) AS n FROM contacts WHERE bot_id = ? AND preview = 0 AND deleted_at IS NULL').pluck(),
    tags: db.prepare(`SELECT contact_id, name FROM contact_tags WHERE contact_id ${IN} ORDER BY contact_id, position`),
    vars: db.prepare(
      `SELECT id, contact_id, name, value, type, schema_id, deletable, payload FROM contact_variables
       WHERE contact_id ${IN} ORDER BY contact_id, id`,
    ),
  };
  const group = (rows) => {
    const m = new Map();
    for (const r of rows) {
      const list = m.get(r.contact_id);
      if (list) list.push(r);
      else m.set(r.contact_id, [r]);
    }
    return m;
  };
  return (botId, offset, limit) => {
    const rows = q.rows.all(botId, limit, offset);
    const ids = JSON.stringify(rows.map((r) => r.id));
    const tags = group(q.tags.all(ids));
    const vars = group(q.vars.all(ids));
    const data = rows.map((r) => {
      const vs = vars.get(r.id) ?? [];
      const utm = {};
      for (const v of vs) if (v.name.startsWith('utm_')) utm[v.name] = v.value;
      return {
        id: r.id,
        bot_id: r.bot_id,
        phone: r.phone,
        email: r.email,
        name: r.name,
        address: r.address,
        messenger: r.messenger,
        utm,
        avatar: r.avatar,
        telegram_id: r.telegram_id,
        telegram_username: r.telegram_username,
        vk_user_id: r.vk_user_id,
        created_at: r.created_at,
        unsubscribed_at: r.unsubscribed_at,
        tags: (tags.get(r.id) ?? []).map((t) => t.name),
        variables: vs.map((v) => ({
          id: v.id,
          name: v.name,
          value: v.value,
          type: v.type,
          schema_id: v.schema_id,
          deletable: v.deletable !== 0,
          payload: v.payload,
        })),
      };
    });
    return { data, meta: { offset, limit, total: q.total.get(botId) } };
  };
}
