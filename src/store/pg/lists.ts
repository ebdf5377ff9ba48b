/**
 * Lists and their records on PostgreSQL (the SQLite part: ../lists.ts). Records keep their
 * values as JSON text, written and read as SQLite's are; filters and sorts read them as jsonb
 * through json_key / json_rank / json_num / json_text (migrations.ts), which compare and order
 * values as SQLite's json_extract does (true equals 1, NULLs first, numbers before text).
 */
import type { Surface } from '../store-api.js';
import type { ListRow, ListStore, NewList, RecordQuery, RecordRow, RecordWithList, StoredField } from '../lists.js';
import { jsonbText, type PgConnection } from './connection.js';

const LIST_COLUMNS = 's.seq, s.id, s.project_uuid, s.bot_id, s.name, s.is_menu, s.fields, s.created_at, s.updated_at, p.owner_id';
const RECORD_COLUMNS = 'r.seq, r.id, r.schema_seq, r.data, r.created_at, r.updated_at';

// $1 schema, $2 filters (jsonb object or null), $3 bot id, $4 bot slugs, $5 contact id, $6 contact slugs.
const RECORD_WHERE = `r.schema_seq = $1
  AND ($2::jsonb IS NULL OR NOT EXISTS (
    SELECT 1 FROM jsonb_each($2::jsonb) f WHERE json_key(r.data::jsonb -> f.key) IS DISTINCT FROM json_key(f.value)))
  AND ($3::bigint IS NULL OR EXISTS (
    SELECT 1 FROM unnest($4::text[]) b(slug) WHERE json_key(r.data::jsonb -> b.slug) = json_key(to_jsonb($3::bigint))))
  AND ($5::bigint IS NULL OR EXISTS (
    SELECT 1 FROM unnest($6::text[]) c(slug) WHERE json_key(r.data::jsonb -> c.slug) = json_key(to_jsonb($5::bigint))))`;

/** The value of slug $7, ordered as SQLite orders json_extract's results. */
const BY_SLUG = (dir: 'ASC' | 'DESC') =>
  `ORDER BY json_rank(r.data::jsonb -> $7::text) ${dir}, json_num(r.data::jsonb -> $7::text) ${dir}, json_text(r.data::jsonb -> $7::text) COLLATE "C" ${dir}, r.seq ${dir}`;

const ORDER_SQL: Record<string, string> = {
  'id:asc': 'ORDER BY r.seq ASC',
  'id:desc': 'ORDER BY r.seq DESC',
  'created_at:asc': 'ORDER BY r.created_at ASC, r.seq ASC',
  'created_at:desc': 'ORDER BY r.created_at DESC, r.seq DESC',
  'slug:asc': BY_SLUG('ASC'),
  'slug:desc': BY_SLUG('DESC'),
};

export class PgListStore implements Surface<ListStore> {
  constructor(private readonly c: PgConnection) {}

  byId(id: string): ListRow | undefined {
    return this.c.one<ListRow>(`SELECT ${LIST_COLUMNS} FROM list_schemas s JOIN projects p ON p.uuid = s.project_uuid WHERE s.id = $1`, [
      id,
    ]);
  }
  ownerPage(ownerId: number, limit: number, offset: number): { rows: ListRow[]; total: number } {
    const rows = this.c.query<ListRow>(
      `SELECT ${LIST_COLUMNS} FROM list_schemas s JOIN projects p ON p.uuid = s.project_uuid WHERE p.owner_id = $1 ORDER BY s.seq LIMIT $2 OFFSET $3`,
      [ownerId, limit, offset],
    ).rows;
    const total = this.c.one<{ n: number }>(
      'SELECT count(*) AS n FROM list_schemas s JOIN projects p ON p.uuid = s.project_uuid WHERE p.owner_id = $1',
      [ownerId],
    )!.n;
    return { rows, total };
  }
  projectCount(uuid: string): number {
    return this.c.one<{ n: number }>('SELECT count(*) AS n FROM list_schemas WHERE project_uuid = $1', [uuid])!.n;
  }
  insert(l: NewList): void {
    this.c.query(
      `INSERT INTO list_schemas (id, project_uuid, bot_id, name, is_menu, fields, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`,
      [l.id, l.project_uuid, l.bot_id, l.name, l.is_menu ? 1 : 0, JSON.stringify(l.fields), l.now],
    );
  }
  delete(seq: number): void {
    this.c.tx(() => {
      this.c.query('DELETE FROM list_records WHERE schema_seq = $1', [seq]);
      this.c.query('DELETE FROM list_schemas WHERE seq = $1', [seq]);
    });
  }
  setFields(seq: number, fields: StoredField[], now: string): void {
    this.c.query('UPDATE list_schemas SET fields = $1, updated_at = $2 WHERE seq = $3', [JSON.stringify(fields), now, seq]);
  }
  /**
   * Drop a field and erase its values, in one transaction. The records are rewritten here, not
   * by jsonb (which would reorder their keys), so each keeps its text as SQLite's json_remove
   * leaves it.
   */
  deleteField(seq: number, fields: StoredField[], slug: string, now: string): number {
    return this.c.tx(() => {
      this.setFields(seq, fields, now);
      const rows = this.c.query<{ seq: number; data: string }>(
        'SELECT seq, data FROM list_records WHERE schema_seq = $1 AND data::jsonb ? $2 ORDER BY seq',
        [seq, slug],
      ).rows;
      if (rows.length === 0) return 0;
      const data = rows.map((r) => {
        const d = JSON.parse(r.data) as Record<string, unknown>;
        delete d[slug];
        return JSON.stringify(d);
      });
      return this.c.query(
        'UPDATE list_records r SET data = u.data FROM unnest($1::bigint[], $2::text[]) AS u(seq, data) WHERE r.seq = u.seq',
        [rows.map((r) => r.seq), data],
      ).rowCount;
    });
  }
  oneEncryptedValue(): { record_id: string; slug: string; value: string } | undefined {
    return this.c.one(
      `SELECT r.id AS record_id, f.slug, r.data::jsonb ->> f.slug AS value
       FROM (SELECT s.seq, x.value ->> 'slug' AS slug
             FROM list_schemas s, jsonb_array_elements(s.fields::jsonb) x WHERE json_key(x.value -> 'is_encryptable') = 'n1') f
       JOIN list_records r ON r.schema_seq = f.seq
       WHERE jsonb_typeof(r.data::jsonb -> f.slug) = 'string' LIMIT 1`,
    );
  }
  record(id: string): RecordWithList | undefined {
    return this.c.one<RecordWithList>(
      `SELECT ${RECORD_COLUMNS}, s.id AS schema_id, s.fields, p.owner_id
       FROM list_records r JOIN list_schemas s ON s.seq = r.schema_seq JOIN projects p ON p.uuid = s.project_uuid
       WHERE r.id = $1`,
      [id],
    );
  }
  insertRecord(rec: { id: string; schema_seq: number; data: Record<string, unknown>; now: string }): void {
    this.c.query('INSERT INTO list_records (id, schema_seq, data, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)', [
      rec.id,
      rec.schema_seq,
      jsonbText(rec.data),
      rec.now,
    ]);
  }
  updateRecord(seq: number, data: Record<string, unknown>, now: string): void {
    this.c.query('UPDATE list_records SET data = $1, updated_at = $2 WHERE seq = $3', [jsonbText(data), now, seq]);
  }
  deleteRecord(seq: number): boolean {
    return this.c.query('DELETE FROM list_records WHERE seq = $1', [seq]).rowCount > 0;
  }
  recordPage(q: RecordQuery): { rows: RecordRow[]; total: number } {
    const params: unknown[] = [
      q.schemaSeq,
      q.filters && Object.keys(q.filters).length > 0 ? jsonbText(q.filters) : null,
      q.bot ? q.bot.id : null,
      q.bot?.slugs ?? [],
      q.contact ? q.contact.id : null,
      q.contact?.slugs ?? [],
    ];
    const bySlug = q.order === 'slug';
    const order = ORDER_SQL[`${q.order}:${q.desc ? 'desc' : 'asc'}`]!;
    const n = bySlug ? 8 : 7;
    const rows = this.c.query<RecordRow>(
      `SELECT ${RECORD_COLUMNS} FROM list_records r WHERE ${RECORD_WHERE} ${order} LIMIT $${n} OFFSET $${n + 1}`,
      [...params, ...(bySlug ? [q.slug ?? ''] : []), q.limit, q.offset],
    ).rows;
    const total = this.c.one<{ n: number }>(`SELECT count(*) AS n FROM list_records r WHERE ${RECORD_WHERE}`, params)!.n;
    return { rows, total };
  }
}
