/**
 * The MCP audit trail kept in the API database (local mode): one row per data-changing tool
 * call, appended in the transaction of the change itself, read newest first.
 */
import type { AuditEntry, AuditPage, AuditQuery } from '../api/backend.js';
import { parseOrderedJson } from '../shared/ordered.js';
import type { Db } from './db.js';

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
          before: number | null;
          byOwner: number;
          owner: number | null;
          limit: number;
        },
        Row
      >(
        `SELECT seq, entry FROM mcp_audit
         WHERE (@tool IS NULL OR tool = @tool) AND (@contact IS NULL OR contact_id = @contact)
           AND (@since IS NULL OR at >= @since) AND (@before IS NULL OR seq < @before)
           AND (@byOwner = 0 OR json_extract(entry, '$.owner_id') IS @owner)
         ORDER BY seq DESC LIMIT @limit`,
      ),
    };
  }

  append(e: AuditEntry): void {
    this.s.append.run(e.at, e.tool, e.contact_id, JSON.stringify(e));
  }

  read(q: AuditQuery): AuditPage {
    const rows = this.s.page.all({
      tool: q.tool ?? null,
      contact: q.contact ?? null,
      since: q.since ?? null,
      before: q.before ?? null,
      byOwner: q.owner === undefined ? 0 : 1,
      owner: q.owner ?? null,
      limit: q.limit + 1,
    });
    const entries = rows.slice(0, q.limit).map((r) => ({ seq: r.seq, ...(parseOrderedJson(r.entry) as AuditEntry) }));
    return rows.length > q.limit ? { entries, next: entries[entries.length - 1]!.seq } : { entries };
  }
}
