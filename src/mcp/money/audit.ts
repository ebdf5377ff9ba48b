/**
 * The audit trail of data-changing tool calls: what one entry holds (who called, arguments with
 * keys and secrets redacted: one builder for a method tool's call and a bulk plan's), its
 * append (a line not written is logged, never hides the call's outcome), and the remote mode's trail, an append-only JSON-lines file in the data
 * folder, each line fsynced before the tool answers. The local mode's trail is the database's
 * (`store/audit.ts`), written by the backend in the transaction of the change.
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import type { AuditEntry } from '../../api/backend.js';
import { log } from '../../common/log.js';
import { logWithin } from '../logging.js';
import type { AuditPage, AuditQuery, AuditTrail } from '../state.js';

/** Argument names whose values never reach the trail. */
const SECRET = /key|secret|token|password|authorization|cookie/i;

/** The arguments with every secret-looking value replaced, at any depth. */
function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET.test(k) ? '[redacted]' : redact(v)]));
}

/** Who made a call, as the tool's call knows it (`ToolExtra.caller`). */
interface Caller {
  client: { name: string; version: string } | null;
  session: string | null;
  oauthClient?: { id: string; name: string; scopes?: readonly string[] };
}

/**
 * The audit entry of a tool's call, its outcome still to come: when, the owner, the MCP client,
 * session and (`--auth oauth`) the OAuth client that called and the scopes its grant holds, the tool, its arguments (secrets
 * redacted), the contact it acts on and its idempotency key.
 */
export function auditEntryOf(
  who: { owner: number | undefined; caller: Caller | undefined },
  tool: string,
  args: Record<string, unknown>,
  o: { contact?: number; key?: string } = {},
): AuditEntry {
  return {
    at: new Date().toISOString(),
    owner_id: who.owner ?? null,
    client: who.caller?.client ?? null,
    session: who.caller?.session ?? null,
    ...(who.caller?.oauthClient
      ? {
          oauth_client: { id: who.caller.oauthClient.id, name: who.caller.oauthClient.name },
          ...(who.caller.oauthClient.scopes ? { grant_scopes: [...who.caller.oauthClient.scopes] } : {}),
        }
      : {}),
    tool,
    arguments: redact(args) as Record<string, unknown>,
    contact_id: o.contact ?? null,
    status: 0,
    code: null,
    idempotency_key: o.key ?? null,
    replayed: false,
    confirmation: null,
  };
}

/**
 * Append to the audit trail; a line that cannot be written (remote mode: a full disk, a file
 * made unwritable) does not hide the call's real outcome: it is logged, and the warning is returned.
 */
export async function appendAudit(trail: AuditTrail | undefined, entry: AuditEntry, signal: AbortSignal): Promise<string | undefined> {
  try {
    await trail?.append(entry);
    return undefined;
  } catch (e) {
    logWithin(signal, () => log.error({ err: e, tool: entry.tool }, 'audit line not written'));
    return `The audit trail could not be written for this call (${e instanceof Error ? e.message : String(e)}); its outcome above is real. Tell the server operator.`;
  }
}

/** Filter and page entries kept in order of writing (oldest first), newest first. */
function pageOf(all: readonly AuditEntry[], q: AuditQuery): AuditPage {
  const out: Array<AuditEntry & { seq: number }> = [];
  const start = Math.min(q.before ?? all.length + 1, all.length + 1) - 1;
  for (let seq = start; seq >= 1; seq--) {
    const e = all[seq - 1]!;
    if (q.tool !== undefined && e.tool !== q.tool) continue;
    if (q.contact !== undefined && e.contact_id !== q.contact) continue;
    if (q.since !== undefined && e.at < q.since) continue;
    if (q.owner !== undefined && (e.owner_id ?? null) !== q.owner) continue;
    if (out.length === q.limit) return { entries: out, next: out[out.length - 1]!.seq };
    out.push({ seq, ...e });
  }
  return { entries: out };
}

/** The remote mode's trail: one JSON line per entry, appended and fsynced. */
export class JsonlAuditTrail implements AuditTrail {
  constructor(readonly file: string) {}

  async append(entry: AuditEntry): Promise<void> {
    const fd = openSync(this.file, 'a', 0o600);
    try {
      writeSync(fd, JSON.stringify(entry) + '\n');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  async read(q: AuditQuery): Promise<AuditPage> {
    if (!existsSync(this.file)) return { entries: [] };
    const lines = readFileSync(this.file, 'utf8').split('\n');
    // A line cut short by a crash mid-write is skipped, not fatal.
    const all: AuditEntry[] = [];
    for (const line of lines) {
      if (!line) continue;
      try {
        all.push(JSON.parse(line) as AuditEntry);
      } catch {
        /* a torn last line */
      }
    }
    return pageOf(all, q);
  }
}

const AUDIT_URI = 'workspace://audit';
/** Entries per page, by default and at most. */
const PAGE = 50;
const MAX_PAGE = 500;

/**
 * One owner's part of a trail several owners write (a database or data folder several servers
 * share, `mcp --http --auth key`): their entries only, paged as the trail is (newest first,
 * `next` a `before`), other owners' skipped. `null`: the entries that name no owner.
 */
export function ownersAudit(trail: AuditTrail, ownerId: number | null): AuditTrail {
  return { append: (entry) => trail.append(entry), read: (q) => trail.read({ ...q, owner: ownerId }) };
}

export const AUDIT_RESOURCE = {
  uri: AUDIT_URI,
  name: 'audit',
  title: 'Audit trail',
  description:
    'Every call of a tool that changed (or tried to change) data, newest first, 50 a page: time, owner, MCP client and ' +
    'session, tool, arguments (secrets redacted), outcome, idempotency key, replay, confirmation. Filter and page with ' +
    `${AUDIT_URI}?tool=NAME&contact=ID&since=ISO8601&limit=N; "next" is the URI of the next page.`,
  mimeType: 'application/json',
};

export const AUDIT_TEMPLATE = {
  uriTemplate: `${AUDIT_URI}{?tool,contact,since,before,limit}`,
  name: 'audit-page',
  title: 'Audit trail (filtered)',
  description: AUDIT_RESOURCE.description,
  mimeType: 'application/json',
};

/** Whether a URI names the audit trail (with or without a query). */
export function isAuditUri(uri: string): boolean {
  return uri === AUDIT_URI || uri.startsWith(`${AUDIT_URI}?`);
}

/** The query a `workspace://audit?...` URI asks for; an Error names a bad parameter. */
export function auditQueryOf(uri: string): AuditQuery {
  const params = new URLSearchParams(uri.slice(AUDIT_URI.length + 1));
  const int = (name: string, min: number, max: number): number | undefined => {
    const v = params.get(name);
    if (v === null) return undefined;
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n < min || n > max) throw new Error(`${name} must be a whole number from ${min} to ${max}`);
    return n;
  };
  const q: AuditQuery = { limit: int('limit', 1, MAX_PAGE) ?? PAGE };
  const tool = params.get('tool');
  if (tool) q.tool = tool;
  const contact = int('contact', 1, Number.MAX_SAFE_INTEGER);
  if (contact !== undefined) q.contact = contact;
  const before = int('before', 1, Number.MAX_SAFE_INTEGER);
  if (before !== undefined) q.before = before;
  const since = params.get('since');
  if (since !== null) {
    const t = new Date(since);
    if (Number.isNaN(t.getTime())) throw new Error('since must be an ISO 8601 time');
    q.since = t.toISOString();
  }
  return q;
}

/** The URI of the page of `q` that starts below entry `before`. */
export function auditPageUri(q: AuditQuery, before: number): string {
  const p = new URLSearchParams();
  if (q.tool) p.set('tool', q.tool);
  if (q.contact !== undefined) p.set('contact', String(q.contact));
  if (q.since) p.set('since', q.since);
  p.set('before', String(before));
  p.set('limit', String(q.limit));
  return `${AUDIT_URI}?${p}`;
}

/** A page of the trail as the resource answers it: `{data, next}`, next the URI of the next page or null. */
export async function auditBody(trail: AuditTrail, q: AuditQuery): Promise<{ data: AuditPage['entries']; next: string | null }> {
  const page = await trail.read(q);
  return { data: page.entries, next: page.next !== undefined ? auditPageUri(q, page.next) : null };
}
