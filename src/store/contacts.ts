/**
 * Contacts: export, count, create or update: the SQL.
 *
 * A contact is *listed* (exported and counted) when it is neither a preview contact nor
 * deleted; the partial indexes `contacts_listed*` hold exactly those. Totals and offset
 * positions come from `contact_blocks` (migration 2): per bot, how many listed contacts fall
 * in each run of 1024 ids, kept by triggers. An offset is found by summing block counts (one
 * row per 1024 contacts) and then skipping at most 1023 index entries, so a page costs the
 * same at offset 0 and at offset 990 000, and a total never scans the contacts.
 * With a date filter the blocks cannot answer: totals are index range counts and offsets are
 * skipped in the index.
 */
import type { Db } from './db.js';
import { unixSeconds } from './time.js';

/** Ids per block of `contact_blocks`: `block = id >> 10`. */
export const BLOCK_IDS = 1024;

export type Messenger = 'telegram' | 'max' | 'viber' | 'vk' | 'web';

export interface ContactRow {
  id: number;
  bot_id: number;
  messenger: Messenger;
  name: string;
  phone: string | null;
  email: string | null;
  address: string | null;
  avatar: string | null;
  telegram_id: string | null;
  telegram_username: string | null;
  max_user_id: number | null;
  max_username: string | null;
  vk_user_id: number | null;
  viber_id: string | null;
  created_at: string;
  created_ts: number;
  unsubscribed_at: string | null;
  preview: number;
  deleted_at: string | null;
  referrer_id: number | null;
}

export interface VariableRow {
  id: number;
  contact_id: number;
  name: string;
  value: string | null;
  type: number;
  schema_id: string | null;
  deletable: number;
  payload: string | null;
}

/** A date window in Unix seconds, both ends inclusive and optional. */
export interface DateWindow {
  from?: number;
  to?: number;
}

/** What createOrUpdateContact writes; `null`/absent optional fields leave the old value. */
export interface ContactUpsert {
  botId: number;
  messenger: Exclude<Messenger, 'web'>;
  /** The messenger's user id: telegram_id (text), max_user_id, vk_user_id (integers), viber_id. */
  externalId: string | number;
  name: string;
  phone?: string | null;
  email?: string | null;
  address?: string | null;
  /** telegram_username or max_username, for those messengers. */
  username?: string | null;
  /** Replaces all tags when given. */
  tags?: readonly string[];
  /** Text of the first message of a new contact's conversation. */
  firstMessage: string;
  now: string;
}

const LISTED = 'preview = 0 AND deleted_at IS NULL';
const IN_JSON = 'IN (SELECT value FROM json_each(?))';

function isUniqueViolation(e: unknown): boolean {
  return e instanceof Error && (e as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE';
}

export class ContactStore {
  private readonly s;
  constructor(private readonly db: Db) {
    const byExternal = (column: string) =>
      db.prepare<[number, string | number], { id: number }>(
        `SELECT id FROM contacts WHERE bot_id = ? AND ${column} = ? AND deleted_at IS NULL`,
      );
    this.s = {
      blockTotal: db.prepare<[string], { n: number }>(
        `SELECT coalesce(sum(n), 0) AS n FROM contact_blocks WHERE bot_id ${IN_JSON}`,
      ),
      blocks: db.prepare<[string], { block: number; n: number }>(
        `SELECT block, sum(n) AS n FROM contact_blocks WHERE bot_id ${IN_JSON}
         GROUP BY block HAVING sum(n) > 0 ORDER BY block`,
      ),
      idsFrom: db.prepare<[number, number, number], { id: number }>(
        `SELECT id FROM contacts INDEXED BY contacts_listed
         WHERE bot_id = ? AND ${LISTED} AND id >= ? ORDER BY id LIMIT ?`,
      ),
      datedTotal: db.prepare<[number, number, number], { n: number }>(
        `SELECT count(*) AS n FROM contacts INDEXED BY contacts_listed_ts
         WHERE bot_id = ? AND ${LISTED} AND created_ts >= ? AND created_ts <= ?`,
      ),
      datedIds: db.prepare<[string, number, number, number, number], { id: number }>(
        `SELECT id FROM contacts WHERE bot_id ${IN_JSON} AND ${LISTED} AND created_ts >= ? AND created_ts <= ?
         ORDER BY id LIMIT ? OFFSET ?`,
      ),
      rows: db.prepare<[string], ContactRow>(`SELECT * FROM contacts WHERE id ${IN_JSON} ORDER BY id`),
      tags: db.prepare<[string], { contact_id: number; name: string }>(
        `SELECT contact_id, name FROM contact_tags WHERE contact_id ${IN_JSON} ORDER BY contact_id, position`,
      ),
      variables: db.prepare<[string], VariableRow>(
        `SELECT id, contact_id, name, value, type, schema_id, deletable, payload
         FROM contact_variables WHERE contact_id ${IN_JSON} ORDER BY contact_id, id`,
      ),
      byExternal: {
        telegram: byExternal('telegram_id'),
        max: byExternal('max_user_id'),
        vk: byExternal('vk_user_id'),
        viber: byExternal('viber_id'),
      },
      insert: db.prepare(
        `INSERT INTO contacts (bot_id, messenger, name, phone, email, address, telegram_id, telegram_username,
           max_user_id, max_username, vk_user_id, viber_id, created_at, created_ts)
         VALUES (@bot_id, @messenger, @name, @phone, @email, @address, @telegram_id, @telegram_username,
           @max_user_id, @max_username, @vk_user_id, @viber_id, @created_at, @created_ts)`,
      ),
      update: db.prepare(
        `UPDATE contacts SET name = @name,
           phone = coalesce(@phone, phone), email = coalesce(@email, email), address = coalesce(@address, address),
           telegram_username = CASE WHEN messenger = 'telegram' THEN coalesce(@username, telegram_username) ELSE telegram_username END,
           max_username = CASE WHEN messenger = 'max' THEN coalesce(@username, max_username) ELSE max_username END
         WHERE id = @id`,
      ),
      clearTags: db.prepare<[number]>('DELETE FROM contact_tags WHERE contact_id = ?'),
      insertTag: db.prepare<[number, number, string]>('INSERT INTO contact_tags (contact_id, position, name) VALUES (?, ?, ?)'),
      insertMessage: db.prepare<[number, string, string, string]>(
        'INSERT INTO conversation (contact_id, direction, text, created_at) VALUES (?, ?, ?, ?)',
      ),
      bumpSubscribers: db.prepare<[number]>('UPDATE bots SET subscriber_count = subscriber_count + 1 WHERE id = ?'),
    };
  }

  /** Listed contacts of these bots, optionally created inside `window`. */
  count(botIds: readonly number[], window: DateWindow = {}): number {
    if (botIds.length === 0) return 0;
    if (window.from === undefined && window.to === undefined) return this.s.blockTotal.get(JSON.stringify(botIds))!.n;
    const [from, to] = bounds(window);
    let n = 0;
    for (const bot of botIds) n += this.s.datedTotal.get(bot, from, to)!.n;
    return n;
  }

  /** Ids of listed contacts of these bots in ascending order: `limit` of them after skipping `offset`. */
  pageIds(botIds: readonly number[], offset: number, limit: number, window: DateWindow = {}): number[] {
    if (botIds.length === 0 || limit <= 0 || !Number.isSafeInteger(offset)) return [];
    if (window.from !== undefined || window.to !== undefined) {
      const [from, to] = bounds(window);
      return this.s.datedIds.all(JSON.stringify(botIds), from, to, limit, offset).map((r) => r.id);
    }
    // Find the block that holds the offset-th contact, summing whole blocks before it.
    let skip = offset;
    let block: number | undefined;
    for (const row of this.s.blocks.iterate(JSON.stringify(botIds))) {
      if (skip < row.n) {
        block = row.block;
        break;
      }
      skip -= row.n;
    }
    if (block === undefined) return [];
    const fromId = block * BLOCK_IDS;
    // Each bot's next `skip + limit` ids (index only), merged: at most 1023 are skipped.
    const ids: number[] = [];
    for (const bot of botIds) for (const r of this.s.idsFrom.iterate(bot, fromId, skip + limit)) ids.push(r.id);
    if (botIds.length > 1) ids.sort((a, b) => a - b);
    return ids.slice(skip, skip + limit);
  }

  /** Contact rows by id, ascending (deleted and preview rows included: the caller chose the ids). */
  rowsByIds(ids: readonly number[]): ContactRow[] {
    return ids.length === 0 ? [] : this.s.rows.all(JSON.stringify(ids));
  }

  /** Tags of these contacts, in their order, one query. */
  tagsByContact(ids: readonly number[]): Map<number, string[]> {
    const out = new Map<number, string[]>();
    if (ids.length === 0) return out;
    for (const r of this.s.tags.iterate(JSON.stringify(ids))) {
      const list = out.get(r.contact_id);
      if (list) list.push(r.name);
      else out.set(r.contact_id, [r.name]);
    }
    return out;
  }

  /** Variables of these contacts, oldest first, one query. */
  variablesByContact(ids: readonly number[]): Map<number, VariableRow[]> {
    const out = new Map<number, VariableRow[]>();
    if (ids.length === 0) return out;
    for (const r of this.s.variables.iterate(JSON.stringify(ids))) {
      const list = out.get(r.contact_id);
      if (list) list.push(r);
      else out.set(r.contact_id, [r]);
    }
    return out;
  }

  /**
   * Find the bot's live contact by messenger id and update it, or create it, in one IMMEDIATE
   * transaction. If another connection inserted the same id first (the partial UNIQUE index
   * refuses ours), the call is replayed and takes the update path.
   */
  createOrUpdate(u: ContactUpsert): { id: number; created: boolean } {
    const run = () => this.db.transaction(() => this.upsertInTx(u)).immediate();
    try {
      return run();
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      return run();
    }
  }

  private upsertInTx(u: ContactUpsert): { id: number; created: boolean } {
    const found = this.s.byExternal[u.messenger].get(u.botId, u.externalId);
    let id: number;
    if (found) {
      id = found.id;
      this.s.update.run({
        id,
        name: u.name,
        phone: u.phone ?? null,
        email: u.email ?? null,
        address: u.address ?? null,
        username: u.username ?? null,
      });
    } else {
      const m = u.messenger;
      const info = this.s.insert.run({
        bot_id: u.botId,
        messenger: m,
        name: u.name,
        phone: u.phone ?? null,
        email: u.email ?? null,
        address: u.address ?? null,
        telegram_id: m === 'telegram' ? String(u.externalId) : null,
        telegram_username: m === 'telegram' ? (u.username ?? null) : null,
        max_user_id: m === 'max' ? u.externalId : null,
        max_username: m === 'max' ? (u.username ?? null) : null,
        vk_user_id: m === 'vk' ? u.externalId : null,
        viber_id: m === 'viber' ? String(u.externalId) : null,
        created_at: u.now,
        created_ts: unixSeconds(u.now),
      });
      id = Number(info.lastInsertRowid);
      // Not sent to the person: a note in the conversation, as an incoming entry.
      this.s.insertMessage.run(id, 'in', u.firstMessage, u.now);
      this.s.bumpSubscribers.run(u.botId);
    }
    if (u.tags) {
      this.s.clearTags.run(id);
      [...new Set(u.tags)].forEach((t, i) => this.s.insertTag.run(id, i, t));
    }
    return { id, created: !found };
  }
}

function bounds(w: DateWindow): [number, number] {
  return [w.from ?? Number.MIN_SAFE_INTEGER, w.to ?? Number.MAX_SAFE_INTEGER];
}
