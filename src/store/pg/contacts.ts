/**
 * Contacts on PostgreSQL (the SQLite part: ../contacts.ts): export, count, create or update.
 * As on SQLite, a total is a sum of per-block counts (`contact_blocks`, 1024 ids a block, kept
 * by triggers) and a page at any offset is found by summing them, then read by id from the
 * start of its block: the export's last page costs what its first does, on every instance.
 * A date window that leaves none of the bots' contacts out (the export's `date_to` cap of
 * "now") is no window; any other is counted and paged through the index `contacts_listed_ts`.
 */
import {
  BLOCK_IDS,
  type ContactAccessRow,
  type ContactRow,
  type ContactStore,
  type ContactUpsert,
  type DateWindow,
  type VariableRow,
} from '../contacts.js';
import type { Surface } from '../store-api.js';
import { groupByContact } from '../group.js';
import { unixSeconds } from '../time.js';
import { PgError, type PgConnection } from './connection.js';
import { reindex } from './search.js';

const LISTED = 'preview = 0 AND deleted_at IS NULL';
const EXTERNAL_COLUMN = { telegram: 'telegram_id', max: 'max_user_id', vk: 'vk_user_id', viber: 'viber_id' } as const;

function bounds(w: DateWindow): [number, number] {
  return [w.from ?? Number.MIN_SAFE_INTEGER, w.to ?? Number.MAX_SAFE_INTEGER];
}

export class PgContactStore implements Surface<ContactStore> {
  constructor(private readonly c: PgConnection) {}

  access(id: number): ContactAccessRow | undefined {
    return this.c.one<ContactAccessRow>(
      `SELECT c.id, c.bot_id, c.deleted_at, c.preview, b.deleted_at AS bot_deleted_at, p.owner_id
       FROM contacts c JOIN bots b ON b.id = c.bot_id JOIN projects p ON p.uuid = b.project_uuid WHERE c.id = $1`,
      [id],
    );
  }
  /** Whether the bot's listed contacts were made in id order (SQLite's flag; here read when asked). */
  inTimeOrder(botId: number): boolean {
    return !this.c.one(
      `SELECT 1 FROM (SELECT created_ts, lag(created_ts) OVER (ORDER BY id) AS before FROM contacts WHERE bot_id = $1 AND ${LISTED}) t
       WHERE before > created_ts LIMIT 1`,
      [botId],
    );
  }
  count(botIds: readonly number[], window: DateWindow = {}): number {
    if (botIds.length === 0) return 0;
    if (this.wholeOf(botIds, window)) {
      return this.c.one<{ n: number }>('SELECT coalesce(sum(n), 0)::bigint AS n FROM contact_blocks WHERE bot_id = ANY($1::bigint[])', [
        botIds,
      ])!.n;
    }
    return this.c.one<{ n: number }>(
      `SELECT count(*) AS n FROM contacts WHERE bot_id = ANY($1::bigint[]) AND ${LISTED} AND created_ts BETWEEN $2 AND $3`,
      [botIds, ...bounds(window)],
    )!.n;
  }
  pageIds(botIds: readonly number[], offset: number, limit: number, window: DateWindow = {}): number[] {
    if (botIds.length === 0 || limit <= 0 || !Number.isSafeInteger(offset) || offset < 0) return [];
    if (!this.wholeOf(botIds, window)) {
      return this.c
        .query<{ id: number }>(
          `SELECT id FROM contacts WHERE bot_id = ANY($1::bigint[]) AND ${LISTED} AND created_ts BETWEEN $2 AND $3 ORDER BY id LIMIT $4 OFFSET $5`,
          [botIds, ...bounds(window), limit, offset],
        )
        .rows.map((r) => r.id);
    }
    // The block holding the offset-th contact (the block counts summed in id order), and how
    // many of its listed contacts come before it; then at most 1023 skipped in the index.
    const at = this.c.one<{ block: number; skip: number }>(
      `SELECT block, ($2 - (upto - n))::bigint AS skip FROM (
         SELECT block, n, sum(n) OVER (ORDER BY block) AS upto
         FROM (SELECT block, sum(n) AS n FROM contact_blocks WHERE bot_id = ANY($1::bigint[]) GROUP BY block) b
       ) c WHERE upto > $2 ORDER BY block LIMIT 1`,
      [botIds, offset],
    );
    if (!at) return [];
    return this.c
      .query<{ id: number }>(
        `SELECT id FROM contacts WHERE bot_id = ANY($1::bigint[]) AND ${LISTED} AND id >= $2 ORDER BY id LIMIT $3 OFFSET $4`,
        [botIds, at.block * BLOCK_IDS, limit, at.skip],
      )
      .rows.map((r) => r.id);
  }
  /**
   * Whether `window` leaves out none of these bots' listed contacts (no window, or one from at
   * or before the oldest to at or after the newest: two index seeks a bot).
   */
  private wholeOf(botIds: readonly number[], window: DateWindow): boolean {
    if (window.from === undefined && window.to === undefined) return true;
    const [from, to] = bounds(window);
    return this.c.one<{ whole: boolean }>(
      `SELECT coalesce(bool_and(lo >= $2 AND hi <= $3), true) AS whole FROM unnest($1::bigint[]) AS b(id),
         LATERAL (SELECT min(created_ts) AS lo, max(created_ts) AS hi FROM contacts WHERE bot_id = b.id AND ${LISTED}) m
       WHERE lo IS NOT NULL`,
      [botIds, from, to],
    )!.whole;
  }
  rowsByIds(ids: readonly number[]): ContactRow[] {
    return ids.length === 0 ? [] : this.c.query<ContactRow>('SELECT * FROM contacts WHERE id = ANY($1::bigint[]) ORDER BY id', [ids]).rows;
  }
  tagsByContact(ids: readonly number[]): Map<number, string[]> {
    if (ids.length === 0) return new Map();
    const rows = this.c.query<{ contact_id: number; name: string }>(
      'SELECT contact_id, name FROM contact_tags WHERE contact_id = ANY($1::bigint[]) ORDER BY contact_id, position',
      [ids],
    ).rows;
    return groupByContact(rows, (r) => r.name);
  }
  variablesByContact(ids: readonly number[]): Map<number, VariableRow[]> {
    if (ids.length === 0) return new Map();
    return groupByContact(
      this.c.query<VariableRow>(
        'SELECT id, contact_id, name, value, type, schema_id, deletable, payload FROM contact_variables WHERE contact_id = ANY($1::bigint[]) ORDER BY contact_id, id',
        [ids],
      ).rows,
    );
  }

  /**
   * Find the bot's live contact by messenger id and update it, or create it, in one
   * transaction; if another instance inserted the same id first, replay: the update path.
   */
  createOrUpdate(u: ContactUpsert): { id: number; created: boolean } {
    try {
      return this.c.tx(() => this.upsertInTx(u));
    } catch (e) {
      if (!(e instanceof PgError && e.code === '23505')) throw e;
      return this.c.tx(() => this.upsertInTx(u));
    }
  }

  private upsertInTx(u: ContactUpsert): { id: number; created: boolean } {
    const found = this.c.one<{ id: number }>(
      `SELECT id FROM contacts WHERE bot_id = $1 AND ${EXTERNAL_COLUMN[u.messenger]} = $2 AND deleted_at IS NULL`,
      [u.botId, u.externalId],
    );
    let id: number;
    if (found) {
      id = found.id;
      this.c.query(
        `UPDATE contacts SET name = $2,
           phone = coalesce($3, phone), email = coalesce($4, email), address = coalesce($5, address),
           telegram_username = CASE WHEN messenger = 'telegram' THEN coalesce($6, telegram_username) ELSE telegram_username END,
           max_username = CASE WHEN messenger = 'max' THEN coalesce($6, max_username) ELSE max_username END
         WHERE id = $1`,
        [id, u.name, u.phone ?? null, u.email ?? null, u.address ?? null, u.username ?? null],
      );
    } else {
      const m = u.messenger;
      id = this.c.one<{ id: number }>(
        `INSERT INTO contacts (bot_id, messenger, name, phone, email, address, telegram_id, telegram_username,
           max_user_id, max_username, vk_user_id, viber_id, created_at, created_ts)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id`,
        [
          u.botId,
          m,
          u.name,
          u.phone ?? null,
          u.email ?? null,
          u.address ?? null,
          m === 'telegram' ? String(u.externalId) : null,
          m === 'telegram' ? (u.username ?? null) : null,
          m === 'max' ? u.externalId : null,
          m === 'max' ? (u.username ?? null) : null,
          m === 'vk' ? u.externalId : null,
          m === 'viber' ? String(u.externalId) : null,
          u.now,
          unixSeconds(u.now),
        ],
      )!.id;
      // Not sent to the person: a note in the conversation, as an incoming entry.
      this.c.query("INSERT INTO conversation (contact_id, direction, text, created_at) VALUES ($1, 'in', $2, $3)", [
        id,
        u.firstMessage,
        u.now,
      ]);
      this.c.query('UPDATE bots SET subscriber_count = subscriber_count + 1 WHERE id = $1', [u.botId]);
    }
    reindex(this.c, [id]);
    if (u.tags) {
      this.c.query('DELETE FROM contact_tags WHERE contact_id = $1', [id]);
      const tags = [...new Set(u.tags)];
      if (tags.length > 0) {
        this.c.query(
          'INSERT INTO contact_tags (contact_id, position, name) SELECT $1, t.ord - 1, t.name FROM unnest($2::text[]) WITH ORDINALITY AS t(name, ord)',
          [id, tags],
        );
      }
    }
    return { id, created: !found };
  }
}
