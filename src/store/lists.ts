/**
 * List schemas and list records: the SQL. A schema keeps its fields as a JSON array (their
 * order is the list's field order); a record keeps its set values as a JSON object by slug
 * (unset fields are absent). Filters and sorting read the record JSON with json_extract.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from './db.js';

export interface StoredField {
  slug: string;
  name: string;
  type: string;
  currency?: string;
  is_required: boolean;
  is_hidden: boolean;
  is_encryptable: boolean;
}

export interface ListRow {
  seq: number;
  id: string;
  project_uuid: string;
  bot_id: number | null;
  name: string;
  is_menu: number;
  fields: string;
  created_at: string;
  updated_at: string;
  owner_id: number;
}

/** A new list as `insert` takes it. */
export interface NewList {
  id: string;
  project_uuid: string;
  bot_id: number | null;
  name: string;
  is_menu: boolean;
  fields: StoredField[];
  now: string;
}

export interface RecordRow {
  seq: number;
  id: string;
  schema_seq: number;
  data: string;
  created_at: string;
  updated_at: string;
}

/** A record with its list, for lookups by record ID. */
export interface RecordWithList extends RecordRow {
  schema_id: string;
  fields: string;
  owner_id: number;
}

/** Where list schemas are kept between requests (core-cache.ts): a miss or a stale entry loads. */
export interface ListCache {
  listById(id: string, load: () => ListRow | undefined): ListRow | undefined;
}

export type RecordOrder = 'id' | 'created_at' | 'slug';

export interface RecordQuery {
  schemaSeq: number;
  /** Equality filters, slug → stored JSON value (null matches unset). */
  filters?: Record<string, unknown>;
  /** Slugs of bot fields, and the bot ID one of them must hold. */
  bot?: { slugs: string[]; id: number };
  contact?: { slugs: string[]; id: number };
  order: RecordOrder;
  /** For `slug` order. */
  slug?: string;
  desc: boolean;
  limit: number;
  offset: number;
}

const PROCESS_PART = randomBytes(5).toString('hex');
let counter = randomBytes(3).readUIntBE(0, 3) & 0x7fffff;

/**
 * A new 24-hex-character ID: seconds, a per-process random part, a counter. IDs made by one
 * process sort in the order they were made.
 */
export function newObjectId(now: Date = new Date()): string {
  counter = (counter + 1) & 0xffffff;
  const secs = Math.floor(now.getTime() / 1000)
    .toString(16)
    .padStart(8, '0');
  return secs + PROCESS_PART + counter.toString(16).padStart(6, '0');
}

/** The json_extract path of a slug (slugs hold no quote, so quoting is safe). */
function slugPath(slug: string): string {
  return `$."${slug}"`;
}

const RECORD_WHERE = `r.schema_seq = @schema
  AND (@filters IS NULL OR NOT EXISTS (
    SELECT 1 FROM json_each(@filters) f WHERE json_extract(r.data, '$."' || f.key || '"') IS NOT f.value))
  AND (@bot_id IS NULL OR EXISTS (
    SELECT 1 FROM json_each(@bot_slugs) b WHERE json_extract(r.data, '$."' || b.value || '"') = @bot_id))
  AND (@contact_id IS NULL OR EXISTS (
    SELECT 1 FROM json_each(@contact_slugs) c WHERE json_extract(r.data, '$."' || c.value || '"') = @contact_id))`;

const RECORD_COLUMNS = 'r.seq, r.id, r.schema_seq, r.data, r.created_at, r.updated_at';

const ORDER_SQL: Record<`${RecordOrder}:${'asc' | 'desc'}`, string> = {
  'id:asc': 'ORDER BY r.seq ASC',
  'id:desc': 'ORDER BY r.seq DESC',
  'created_at:asc': 'ORDER BY r.created_at ASC, r.seq ASC',
  'created_at:desc': 'ORDER BY r.created_at DESC, r.seq DESC',
  'slug:asc': 'ORDER BY json_extract(r.data, @path) ASC, r.seq ASC',
  'slug:desc': 'ORDER BY json_extract(r.data, @path) DESC, r.seq DESC',
};

interface QueryParams {
  schema: number;
  filters: string | null;
  bot_id: number | null;
  bot_slugs: string;
  contact_id: number | null;
  contact_slugs: string;
}

export class ListStore {
  private readonly s;
  /** Page queries pick record seqs only (a narrow sort); the rows are read after. */
  private readonly pages: Map<string, import('better-sqlite3').Statement<[QueryParams & Record<string, unknown>], { seq: number }>>;
  constructor(
    private readonly db: Db,
    private readonly cache: ListCache,
  ) {
    const listCols = 's.seq, s.id, s.project_uuid, s.bot_id, s.name, s.is_menu, s.fields, s.created_at, s.updated_at, p.owner_id';
    this.s = {
      byId: db.prepare<[string], ListRow>(
        `SELECT ${listCols} FROM list_schemas s JOIN projects p ON p.uuid = s.project_uuid WHERE s.id = ?`,
      ),
      ownerPage: db.prepare<[number, number, number], ListRow>(
        `SELECT ${listCols} FROM list_schemas s JOIN projects p ON p.uuid = s.project_uuid
         WHERE p.owner_id = ? ORDER BY s.seq LIMIT ? OFFSET ?`,
      ),
      ownerCount: db.prepare<[number], { n: number }>(
        'SELECT count(*) AS n FROM list_schemas s JOIN projects p ON p.uuid = s.project_uuid WHERE p.owner_id = ?',
      ),
      projectCount: db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM list_schemas WHERE project_uuid = ?'),
      insert: db.prepare(
        `INSERT INTO list_schemas (id, project_uuid, bot_id, name, is_menu, fields, created_at, updated_at)
         VALUES (@id, @project_uuid, @bot_id, @name, @is_menu, @fields, @now, @now)`,
      ),
      delete: db.prepare<[number]>('DELETE FROM list_schemas WHERE seq = ?'),
      deleteRecords: db.prepare<[number]>('DELETE FROM list_records WHERE schema_seq = ?'),
      setFields: db.prepare<[string, string, number]>('UPDATE list_schemas SET fields = ?, updated_at = ? WHERE seq = ?'),
      eraseField: db.prepare<[string, number, string]>(
        'UPDATE list_records SET data = json_remove(data, ?) WHERE schema_seq = ? AND json_type(data, ?) IS NOT NULL',
      ),
      record: db.prepare<[string], RecordWithList>(
        `SELECT ${RECORD_COLUMNS}, s.id AS schema_id, s.fields, p.owner_id
         FROM list_records r JOIN list_schemas s ON s.seq = r.schema_seq JOIN projects p ON p.uuid = s.project_uuid
         WHERE r.id = ?`,
      ),
      insertRecord: db.prepare(
        `INSERT INTO list_records (id, schema_seq, data, created_at, updated_at) VALUES (@id, @schema_seq, @data, @now, @now)`,
      ),
      updateRecord: db.prepare<[string, string, number]>('UPDATE list_records SET data = ?, updated_at = ? WHERE seq = ?'),
      deleteRecord: db.prepare<[number]>('DELETE FROM list_records WHERE seq = ?'),
      recordsBySeq: db.prepare<[string], RecordRow>(
        `SELECT ${RECORD_COLUMNS} FROM list_records r WHERE r.seq IN (SELECT value FROM json_each(?))`,
      ),
      countRecords: db.prepare<[QueryParams], { n: number }>(`SELECT count(*) AS n FROM list_records r WHERE ${RECORD_WHERE}`),
    };
    this.pages = new Map();
    for (const [key, order] of Object.entries(ORDER_SQL)) {
      this.pages.set(key, db.prepare(`SELECT r.seq FROM list_records r WHERE ${RECORD_WHERE} ${order} LIMIT @limit OFFSET @offset`));
    }
  }

  /** A list with its project's owner (kept between requests: core-cache.ts). */
  byId(id: string): ListRow | undefined {
    return this.cache.listById(id, () => this.s.byId.get(id));
  }
  /** A page of the lists of the owner's own projects, oldest first. */
  ownerPage(ownerId: number, limit: number, offset: number): { rows: ListRow[]; total: number } {
    return { rows: this.s.ownerPage.all(ownerId, limit, offset), total: this.s.ownerCount.get(ownerId)!.n };
  }
  projectCount(uuid: string): number {
    return this.s.projectCount.get(uuid)!.n;
  }
  insert(l: NewList): void {
    this.s.insert.run({ ...l, is_menu: l.is_menu ? 1 : 0, fields: JSON.stringify(l.fields) });
  }
  /** Delete a list and all its records, in one transaction. */
  delete(seq: number): void {
    this.db
      .transaction(() => {
        this.s.deleteRecords.run(seq);
        this.s.delete.run(seq);
      })
      .immediate();
  }
  setFields(seq: number, fields: StoredField[], now: string): void {
    this.s.setFields.run(JSON.stringify(fields), now, seq);
  }
  /** Drop a field from the list and erase its values from every record, in one transaction. */
  deleteField(seq: number, fields: StoredField[], slug: string, now: string): number {
    return this.db
      .transaction(() => {
        this.s.setFields.run(JSON.stringify(fields), now, seq);
        const path = slugPath(slug);
        return this.s.eraseField.run(path, seq, path).changes;
      })
      .immediate();
  }

  /**
   * One stored value of an encrypted field (record ID, slug, stored text), to check at start-up
   * that the secret at hand opens them. Prepared here: it runs once in a database's life.
   */
  oneEncryptedValue(): { record_id: string; slug: string; value: string } | undefined {
    return this.db
      .prepare<[], { record_id: string; slug: string; value: string }>(
        `SELECT r.id AS record_id, f.slug, json_extract(r.data, '$."' || f.slug || '"') AS value
         FROM (SELECT s.seq, json_extract(x.value, '$.slug') AS slug
               FROM list_schemas s, json_each(s.fields) x WHERE json_extract(x.value, '$.is_encryptable') = 1) f
         JOIN list_records r ON r.schema_seq = f.seq
         WHERE json_type(r.data, '$."' || f.slug || '"') = 'text' LIMIT 1`,
      )
      .get();
  }

  record(id: string): RecordWithList | undefined {
    return this.s.record.get(id);
  }
  insertRecord(rec: { id: string; schema_seq: number; data: Record<string, unknown>; now: string }): void {
    this.s.insertRecord.run({ id: rec.id, schema_seq: rec.schema_seq, data: JSON.stringify(rec.data), now: rec.now });
  }
  updateRecord(seq: number, data: Record<string, unknown>, now: string): void {
    this.s.updateRecord.run(JSON.stringify(data), now, seq);
  }
  deleteRecord(seq: number): boolean {
    return this.s.deleteRecord.run(seq).changes > 0;
  }
  /** One page of a list's records and the number of records that match. */
  recordPage(q: RecordQuery): { rows: RecordRow[]; total: number } {
    const params: QueryParams = {
      schema: q.schemaSeq,
      filters: q.filters && Object.keys(q.filters).length > 0 ? JSON.stringify(q.filters) : null,
      bot_id: q.bot ? q.bot.id : null,
      bot_slugs: JSON.stringify(q.bot?.slugs ?? []),
      contact_id: q.contact ? q.contact.id : null,
      contact_slugs: JSON.stringify(q.contact?.slugs ?? []),
    };
    const stmt = this.pages.get(`${q.order}:${q.desc ? 'desc' : 'asc'}`)!;
    const extra: Record<string, unknown> = { limit: q.limit, offset: q.offset };
    if (q.order === 'slug') extra.path = slugPath(q.slug ?? '');
    const seqs = stmt.all({ ...params, ...extra }).map((r) => r.seq);
    const bySeq = new Map(this.s.recordsBySeq.all(JSON.stringify(seqs)).map((r) => [r.seq, r]));
    const rows = seqs.map((q) => bySeq.get(q)).filter((r): r is RecordRow => r !== undefined);
    return { rows, total: this.s.countRecords.get(params)!.n };
  }
}
