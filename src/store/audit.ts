/**
 * The MCP audit trail kept in the API database (local mode): one row per data-changing tool
 * call, appended in the transaction of the change itself, read newest first.
 */
import type { AuditEntry, AuditPage, AuditQuery } from '../api/backend.js';
import { parseOrderedJson } from '../common/ordered.js';
import type { Db } from './db.js';

/**
 * A query of the whole trail (`admin audit`, the operator's view): the MCP resource's, and an end
 * time and a client. All of them are SQL conditions (here and in pg/audit.ts), on the columns
 * or on the stored entry's JSON, so that a page is a page of matching entries.
 */
export interface TrailQuery extends AuditQuery {
  /** ISO 8601: entries before it (`since` and `until` tile: [since, until)). */
  until?: string;
  /** The OAuth client's id or name, or the MCP client's name as it named itself. */
  client?: string;
}

interface Row {
  seq: number;
  entry: string;
}

export class AuditStore {
  private readonly s;
  constructor(db: Db) {
    this.s = {
      append: db.prepare<[string, string, number | null, string]>(
        'INSERT INTO mcp_audit (at, tool, contact_id, entry) VALUES (?, ?, ?, ?)',
      ),
      page: db.prepare<
        {
          tool: string | null;
          contact: number | null;
          since: string | null;
          until: string | null;
          before: number | null;
          client: string | null;
          byOwner: number;
          owner: number | null;
          limit: number;
        },
        Row
      >(
        `SELECT seq, entry FROM mcp_audit
         WHERE (@tool IS NULL OR tool = @tool) AND (@contact IS NULL OR contact_id = @contact)
           AND (@since IS NULL OR at >= @since) AND (@before IS NULL OR seq < @before)
           AND (@until IS NULL OR at < @until)
           AND (@byOwner = 0 OR json_extract(entry, '$.owner_id') IS @owner)
           AND (@client IS NULL OR @client IN (json_extract(entry, '$.oauth_client.id'),
             json_extract(entry, '$.oauth_client.name'), json_extract(entry, '$.client.name')))
         ORDER BY seq DESC LIMIT @limit`,
      ),
    };
  }

  append(e: AuditEntry): void {
    this.s.append.run(e.at, e.tool, e.contact_id, JSON.stringify(e));
  }

  read(q: TrailQuery): AuditPage {
    const rows = this.s.page.all({
      tool: q.tool ?? null,
      contact: q.contact ?? null,
      since: q.since ?? null,
      until: q.until ?? null,
      before: q.before ?? null,
      client: q.client ?? null,
      byOwner: q.owner === undefined ? 0 : 1,
      owner: q.owner ?? null,
      limit: q.limit + 1,
    });
    const entries = rows.slice(0, q.limit).map((r) => ({ seq: r.seq, ...(parseOrderedJson(r.entry) as AuditEntry) }));
    return rows.length > q.limit ? { entries, next: entries[entries.length - 1]!.seq } : { entries };
  }
}
