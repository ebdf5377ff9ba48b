/** The MCP audit trail on PostgreSQL (the SQLite part: ../audit.ts): appended in the change's transaction, read newest first. */
import type { AuditEntry, AuditPage } from '../../api/backend.js';
import { parseOrderedJson } from '../../common/ordered.js';
import type { AuditStore, TrailQuery } from '../audit.js';
import type { Surface } from '../store-api.js';
import type { PgConnection } from './connection.js';

export class PgAuditStore implements Surface<AuditStore> {
  constructor(private readonly c: PgConnection) {}

  /** In a transaction, the last write before its COMMIT: it hands over the transaction's id, which COMMIT needs should its answer be lost (connection.ts), at no extra round trip. */
  append(e: AuditEntry): void {
    const { txid } = this.c.one<{ txid: number }>(
      'INSERT INTO mcp_audit (at, tool, contact_id, entry) VALUES ($1, $2, $3, $4) RETURNING txid_current() AS txid',
      [e.at, e.tool, e.contact_id, JSON.stringify(e)],
    )!;
    this.c.knowTxid(txid);
  }

  /** Every filter a SQL condition, as on SQLite: the client's on the stored entry's JSON. */
  read(q: TrailQuery): AuditPage {
    const rows = this.c.query<{ seq: number; entry: string }>(
      `SELECT seq, entry FROM mcp_audit
       WHERE ($1::text IS NULL OR tool = $1) AND ($2::bigint IS NULL OR contact_id = $2)
         AND ($3::text IS NULL OR at >= $3) AND ($4::bigint IS NULL OR seq < $4)
         AND (NOT $6::boolean OR (entry::jsonb ->> 'owner_id') IS NOT DISTINCT FROM $7::text)
         AND ($8::text IS NULL OR at < $8)
         AND ($9::text IS NULL OR $9 IN (entry::jsonb #>> '{oauth_client,id}', entry::jsonb #>> '{oauth_client,name}',
           entry::jsonb #>> '{client,name}'))
       ORDER BY seq DESC LIMIT $5`,
      [
        q.tool ?? null,
        q.contact ?? null,
        q.since ?? null,
        q.before ?? null,
        q.limit + 1,
        q.owner !== undefined,
        q.owner === undefined || q.owner === null ? null : String(q.owner),
        q.until ?? null,
        q.client ?? null,
      ],
    ).rows;
    const entries = rows.slice(0, q.limit).map((r) => ({ seq: r.seq, ...(parseOrderedJson(r.entry) as AuditEntry) }));
    return rows.length > q.limit ? { entries, next: entries[entries.length - 1]!.seq } : { entries };
  }
}
