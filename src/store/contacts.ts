/**
 * Contacts: export, count, create or update: the SQL.
 *
 * A contact is *listed* (exported and counted) when it is neither a preview contact nor
 * deleted; the partial indexes `contacts_listed*` hold exactly those. Totals and offset
 * positions come from `contact_blocks` (migration 2): per bot, how many listed contacts fall
 * in each run of 1024 ids, kept by triggers. An offset is found by summing block counts (one
 * row per 1024 contacts) and then skipping at most 1023 index entries, so a page costs the
 * same at offset 0 and at offset 990 000, and a total never scans the contacts.
 *
 * A date window uses the same blocks when the bot's listed contacts are in time order
 * (`contact_order.by_time`, migration 4: created_ts never decreases as id grows, kept by
 * triggers). Then the contacts created inside the window are exactly the listed ones in one id
 * range, whose ends are one index seek each (`contacts_listed_ts`); blocks wholly inside the
 * range count by their block count, and only the two edge blocks are counted in the index
 * (at most 1024 entries each). A bot not in time order (a fixture or an import can make one)
 * takes the plain path: totals are index range counts and offsets are skipped in the index.
 */
import type { Db } from './db.js';
import { groupByContact } from './group.js';
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

/** Who a contact belongs to, and whether it or its bot is deleted. */
export interface ContactAccessRow {
  id: number;
  bot_id: number;
  deleted_at: string | null;
  preview: number;
  bot_deleted_at: string | null;
  owner_id: number;
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
      access: db.prepare<[number], ContactAccessRow>(
        `SELECT c.id, c.bot_id, c.deleted_at, c.preview, b.deleted_at AS bot_deleted_at, p.owner_id
         FROM contacts c JOIN bots b ON b.id = c.bot_id JOIN projects p ON p.uuid = b.project_uuid WHERE c.id = ?`,
      ),
      blockTotal: db.prepare<[string], { n: number }>(`SELECT coalesce(sum(n), 0) AS n FROM contact_blocks WHERE bot_id ${IN_JSON}`),
      blockSum: db.prepare<[number, number, number], { n: number }>(
        `SELECT coalesce(sum(n), 0) AS n FROM contact_blocks WHERE bot_id = ? AND block >= ? AND block <= ?`,
      ),
      blocks: db.prepare<[string, number, number], { bot_id: number; block: number; n: number }>(
        `SELECT bot_id, block, n FROM contact_blocks WHERE bot_id ${IN_JSON} AND block >= ? AND block <= ? AND n > 0
         ORDER BY block, bot_id`,
      ),
      byTime: db.prepare<[number], { by_time: number }>('SELECT by_time FROM contact_order WHERE bot_id = ?'),
      firstIdFrom: db.prepare<[number, number], { id: number }>(
        `SELECT id FROM contacts INDEXED BY contacts_listed_ts
         WHERE bot_id = ? AND ${LISTED} AND created_ts >= ? ORDER BY created_ts, id LIMIT 1`,
      ),
      lastIdTo: db.prepare<[number, number], { id: number }>(
        `SELECT id FROM contacts INDEXED BY contacts_listed_ts
         WHERE bot_id = ? AND ${LISTED} AND created_ts <= ? ORDER BY created_ts DESC, id DESC LIMIT 1`,
      ),
      rangeCount: db.prepare<[number, number, number], { n: number }>(
        `SELECT count(*) AS n FROM contacts INDEXED BY contacts_listed
         WHERE bot_id = ? AND ${LISTED} AND id >= ? AND id <= ?`,
      ),
      idsIn: db.prepare<[number, number, number, number], { id: number }>(
        `SELECT id FROM contacts INDEXED BY contacts_listed
         WHERE bot_id = ? AND ${LISTED} AND id >= ? AND id <= ? ORDER BY id LIMIT ?`,
      ),
      datedTotal: db.prepare<[number, number, number], { n: number }>(
        `SELECT count(*) AS n FROM contacts INDEXED BY contacts_listed_ts
         WHERE bot_id = ? AND ${LISTED} AND created_ts >= ? AND created_ts <= ?`,
      ),
      datedIds: db.prepare<[string, number, number, number, number], { id: number }>(
        `SELECT id FROM contacts WHERE bot_id ${IN_JSON} AND ${LISTED} AND created_ts >= ? AND created_ts <= ?
         ORDER BY id LIMIT ? OFFSET ?`,
      ),
      // A page's rows come back as arrays (`raw`): better-sqlite3 builds an object per row
      // by name, which costs more than the query; the objects are made below with literals.
      rows: db.prepare<[string], unknown[]>(`SELECT ${CONTACT_COLUMNS.join(', ')} FROM contacts WHERE id ${IN_JSON} ORDER BY id`).raw(),
      tags: db
        .prepare<[string], [number, string]>(
          `SELECT contact_id, name FROM contact_tags WHERE contact_id ${IN_JSON} ORDER BY contact_id, position`,
        )
        .raw(),
      variables: db
        .prepare<[string], unknown[]>(
          `SELECT id, contact_id, name, value, type, schema_id, deletable, payload
           FROM contact_variables WHERE contact_id ${IN_JSON} ORDER BY contact_id, id`,
        )
        .raw(),
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

  /** Who a contact belongs to, and whether it or its bot is deleted (deleted or not). */
  access(id: number): ContactAccessRow | undefined {
    return this.s.access.get(id);
  }

  /**
   * Whether the bot's listed contacts are in time order (created_ts never decreases as id
   * grows), so that a date window is one id range. A bot that never had a listed contact has
   * no row: nothing to be out of order.
   */
  inTimeOrder(botId: number): boolean {
    return (this.s.byTime.get(botId)?.by_time ?? 1) === 1;
  }

  /** Listed contacts of these bots, optionally created inside `window`. */
  count(botIds: readonly number[], window: DateWindow = {}): number {
    if (botIds.length === 0) return 0;
    if (!isDated(window)) return this.s.blockTotal.get(JSON.stringify(botIds))!.n;
    const [from, to] = bounds(window);
    let n = 0;
    for (const bot of botIds) {
      if (!this.inTimeOrder(bot)) {
        n += this.s.datedTotal.get(bot, from, to)!.n;
        continue;
      }
      const span = this.span(bot, from, to);
      if (span) n += this.spanCount(span);
    }
    return n;
  }

  /** Ids of listed contacts of these bots in ascending order: `limit` of them after skipping `offset`. */
  pageIds(botIds: readonly number[], offset: number, limit: number, window: DateWindow = {}): number[] {
    if (botIds.length === 0 || limit <= 0 || !Number.isSafeInteger(offset) || offset < 0) return [];
    const spans = this.spans(botIds, window);
    if (spans === undefined) {
      const [from, to] = bounds(window);
      return this.s.datedIds.all(JSON.stringify(botIds), from, to, limit, offset).map((r) => r.id);
    }
    if (spans.length === 0) return [];
    const byBot = new Map(spans.map((sp) => [sp.bot, sp]));
    const firstBlock = Math.min(...spans.map((sp) => blockOf(sp.lo)));
    const lastBlock = Math.max(...spans.map((sp) => blockOf(sp.hi)));
    // Find the block that holds the offset-th contact, summing the blocks before it: whole
    // block counts inside the spans, index counts (at most 1024 entries) for the edge blocks.
    let skip = offset;
    let found: number | undefined;
    let current: number | undefined;
    let inCurrent = 0;
    for (const row of this.s.blocks.iterate(JSON.stringify(spans.map((sp) => sp.bot)), firstBlock, lastBlock)) {
      if (row.block !== current) {
        if (current !== undefined) {
          if (skip < inCurrent) {
            found = current;
            break;
          }
          skip -= inCurrent;
        }
        current = row.block;
        inCurrent = 0;
      }
      inCurrent += this.inBlock(byBot.get(row.bot_id)!, row.block, row.n);
    }
    if (found === undefined && current !== undefined && skip < inCurrent) found = current;
    if (found === undefined) return [];
    const fromId = found * BLOCK_IDS;
    // Each bot's next `skip + limit` ids in its span (index only), merged: at most 1023 are skipped.
    const ids: number[] = [];
    for (const sp of spans) {
      if (sp.hi < fromId) continue;
      for (const r of this.s.idsIn.iterate(sp.bot, Math.max(sp.lo, fromId), sp.hi, skip + limit)) ids.push(r.id);
    }
    if (spans.length > 1) ids.sort((a, b) => a - b);
    return ids.slice(skip, skip + limit);
  }

  /**
   * Each bot's listed contacts inside `window` as one id range; bots with none are left out.
   * Undefined when a date window meets a bot not in time order (its window is no id range).
   */
  private spans(botIds: readonly number[], window: DateWindow): Span[] | undefined {
    if (!isDated(window)) return botIds.map((bot) => ({ bot, lo: 0, hi: Number.MAX_SAFE_INTEGER }));
    if (!botIds.every((bot) => this.inTimeOrder(bot))) return undefined;
    const [from, to] = bounds(window);
    const out: Span[] = [];
    for (const bot of botIds) {
      const span = this.span(bot, from, to);
      if (span) out.push(span);
    }
    return out;
  }

  /**
   * For a bot in time order: the first listed id created at or after `from` and the last
   * created at or before `to` (one index seek each); every listed id between them is inside
   * the window and no other. Undefined when the window holds none.
   */
  private span(bot: number, from: number, to: number): Span | undefined {
    if (from > to) return undefined;
    const lo = this.s.firstIdFrom.get(bot, from)?.id;
    const hi = lo === undefined ? undefined : this.s.lastIdTo.get(bot, to)?.id;
    return hi === undefined || lo! > hi ? undefined : { bot, lo: lo!, hi };
  }

  /** Listed contacts in a span: block counts for the blocks inside it, the index for its two edge blocks. */
  private spanCount(sp: Span): number {
    const first = blockOf(sp.lo);
    const last = blockOf(sp.hi);
    if (first === last) return this.s.rangeCount.get(sp.bot, sp.lo, sp.hi)!.n;
    return (
      this.s.rangeCount.get(sp.bot, sp.lo, (first + 1) * BLOCK_IDS - 1)!.n +
      (last - first > 1 ? this.s.blockSum.get(sp.bot, first + 1, last - 1)!.n : 0) +
      this.s.rangeCount.get(sp.bot, last * BLOCK_IDS, sp.hi)!.n
    );
  }

  /** Listed contacts of a span in one block whose count is `n`. */
  private inBlock(sp: Span, block: number, n: number): number {
    const start = block * BLOCK_IDS;
    const end = start + BLOCK_IDS - 1;
    if (sp.hi < start || sp.lo > end) return 0;
    if (sp.lo <= start && sp.hi >= end) return n;
    return this.s.rangeCount.get(sp.bot, Math.max(sp.lo, start), Math.min(sp.hi, end))!.n;
  }

  /** Contact rows by id, ascending (deleted and preview rows included: the caller chose the ids). */
  rowsByIds(ids: readonly number[]): ContactRow[] {
    return ids.length === 0 ? [] : this.s.rows.all(JSON.stringify(ids)).map(contactRow);
  }

  /** Tags of these contacts, in their order, one query. */
  tagsByContact(ids: readonly number[]): Map<number, string[]> {
    if (ids.length === 0) return new Map();
    const rows = this.s.tags.all(JSON.stringify(ids)).map(([contact_id, name]) => ({ contact_id, name }));
    return groupByContact(rows, (r) => r.name);
  }

  /** Variables of these contacts, oldest first, one query. */
  variablesByContact(ids: readonly number[]): Map<number, VariableRow[]> {
    return ids.length === 0 ? new Map() : groupByContact(this.s.variables.all(JSON.stringify(ids)).map(variableRow));
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

/** The columns of a ContactRow, in the order `contactRow` reads them. */
const CONTACT_COLUMNS = [
  'id',
  'bot_id',
  'messenger',
  'name',
  'phone',
  'email',
  'address',
  'avatar',
  'telegram_id',
  'telegram_username',
  'max_user_id',
  'max_username',
  'vk_user_id',
  'viber_id',
  'created_at',
  'created_ts',
  'unsubscribed_at',
  'preview',
  'deleted_at',
  'referrer_id',
] as const satisfies ReadonlyArray<keyof ContactRow>;

function contactRow(r: unknown[]): ContactRow {
  return {
    id: r[0] as number,
    bot_id: r[1] as number,
    messenger: r[2] as Messenger,
    name: r[3] as string,
    phone: r[4] as string | null,
    email: r[5] as string | null,
    address: r[6] as string | null,
    avatar: r[7] as string | null,
    telegram_id: r[8] as string | null,
    telegram_username: r[9] as string | null,
    max_user_id: r[10] as number | null,
    max_username: r[11] as string | null,
    vk_user_id: r[12] as number | null,
    viber_id: r[13] as string | null,
    created_at: r[14] as string,
    created_ts: r[15] as number,
    unsubscribed_at: r[16] as string | null,
    preview: r[17] as number,
    deleted_at: r[18] as string | null,
    referrer_id: r[19] as number | null,
  };
}

/** A variable row from `SELECT id, contact_id, name, value, type, schema_id, deletable, payload`. */
function variableRow(r: unknown[]): VariableRow {
  return {
    id: r[0] as number,
    contact_id: r[1] as number,
    name: r[2] as string,
    value: r[3] as string | null,
    type: r[4] as number,
    schema_id: r[5] as string | null,
    deletable: r[6] as number,
    payload: r[7] as string | null,
  };
}

/** A bot's listed contacts with ids from `lo` to `hi`, both inclusive. */
interface Span {
  bot: number;
  lo: number;
  hi: number;
}

/** The block of an id (`id >> 10` in SQL; ids may pass 2^31, so no `>>` here). */
function blockOf(id: number): number {
  return Math.floor(id / BLOCK_IDS);
}

function isDated(w: DateWindow): boolean {
  return w.from !== undefined || w.to !== undefined;
}

function bounds(w: DateWindow): [number, number] {
  return [w.from ?? Number.MIN_SAFE_INTEGER, w.to ?? Number.MAX_SAFE_INTEGER];
}
