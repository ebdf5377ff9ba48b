/**
 * Resources: every list schema of the owner at `workspace://lists/{schema_id}` (the schema
 * object itself, as JSON), listed page by page through getListSchemas, read through
 * getListSchema; and the files exportContacts wrote, at `workspace://exports/{name}`, read in
 * parts within the result budget (parts.ts).
 */
import { join } from 'node:path';
import {
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplateType as ResourceTemplate,
} from '@modelcontextprotocol/server';
import { isSuccess } from '../../api/backend.js';
import { readWorkspace, WORKSPACE_RESOURCE, WORKSPACE_URI } from './workspace.js';
import { AUDIT_RESOURCE, AUDIT_TEMPLATE, auditBody, auditPageUri, auditQueryOf, isAuditUri } from '../money/audit.js';
import { fitStrings, longestPrefix, PROTOCOL_ROOM, resultSize, shortenStrings } from '../result/budget.js';
import { EXPORT_NAME, EXPORT_URI_PREFIX } from './export.js';
import { readView, uiResources } from './apps.js';
import { BULK_TEMPLATE, isBulkUri, readBulk } from './bulk.js';
import { partRoom, readPart, type Part } from '../result/parts.js';

import type { McpContext } from '../context.js';
import type { AuditQuery } from '../state.js';

const LIST_URI_PREFIX = 'workspace://lists/';
export const LIST_TEMPLATE = `${LIST_URI_PREFIX}{schema_id}`;
const EXPORT_TEMPLATE = `${EXPORT_URI_PREFIX}{name}{?offset,limit}`;
/** At most this many getListSchemas pages are walked to complete a schema_id. */
const COMPLETION_PAGES = 4;

export const TEMPLATES: ResourceTemplate[] = [
  {
    uriTemplate: LIST_TEMPLATE,
    name: 'list-schema',
    title: 'List schema',
    description: 'One list (schema) of your account: id, name, fields (slug → definition), bot_id, project, timestamps.',
    mimeType: 'application/json',
  },
  {
    uriTemplate: EXPORT_TEMPLATE,
    name: 'contacts-export',
    title: 'Contacts export',
    description:
      'A file exportContacts wrote (JSONL or CSV), read in parts that fit the result budget: offset and limit count lines from 0; ' +
      'each part names the next.',
  },
  AUDIT_TEMPLATE,
  BULK_TEMPLATE,
];

interface ListSchemaLike {
  id: string;
  name?: string;
  bot_id?: number | null;
  project?: string;
  fields?: Record<string, unknown> | unknown[];
}

interface Page {
  data: ListSchemaLike[];
  meta?: { current_page?: number; last_page?: number };
}

async function listPage(ctx: McpContext, page: number): Promise<Page> {
  const res = await ctx.backend.call('getListSchemas', { page });
  if (!isSuccess(res.status)) {
    throw new ProtocolError(ProtocolErrorCode.InternalError, `getListSchemas answered ${res.status}: ${JSON.stringify(res.body ?? {})}`);
  }
  return res.body as Page;
}

/** How many fields a schema has: its fields object's keys (in the API's order), or `[]` for none. */
function fieldCount(fields: ListSchemaLike['fields']): number {
  if (Array.isArray(fields)) return fields.length;
  return fields ? Object.keys(fields).length : 0;
}

function describe(s: ListSchemaLike): Resource {
  const fields = fieldCount(s.fields);
  const where = s.bot_id != null ? `bot ${s.bot_id}` : `project ${s.project ?? '?'}`;
  return {
    uri: LIST_URI_PREFIX + encodeURIComponent(s.id),
    name: s.name ?? s.id,
    title: s.name ?? s.id,
    description: `List ${s.id} in ${where}, ${fields} field${fields === 1 ? '' : 's'}`,
    mimeType: 'application/json',
  };
}

/**
 * resources/list: one getListSchemas page (50) per MCP page; the cursor is the next page number.
 * `views`: the MCP Apps views too (for a client that declared MCP Apps).
 */
export async function listResources(
  ctx: McpContext,
  cursor: string | undefined,
  views = false,
): Promise<{ resources: Resource[]; nextCursor?: string }> {
  const page = cursor === undefined ? 1 : Number(cursor);
  if (!Number.isInteger(page) || page < 1) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid cursor: ${cursor}`);
  const body = await listPage(ctx, page);
  const last = body.meta?.last_page ?? page;
  const own =
    page === 1
      ? [...(ctx.directory ? [WORKSPACE_RESOURCE] : []), ...(ctx.audit ? [AUDIT_RESOURCE] : []), ...(views ? uiResources() : [])]
      : [];
  return { resources: [...own, ...body.data.map(describe)], ...(page < last ? { nextCursor: String(page + 1) } : {}) };
}

/** resources/read for a list schema, an export file, the audit trail or a view. */
export async function readResource(ctx: McpContext, uri: string): Promise<ReadResourceResult> {
  const view = ctx.ui ? readView(uri) : undefined;
  if (view) return view;
  if (uri === WORKSPACE_URI && ctx.directory) return { contents: [{ uri, mimeType: 'application/json', text: await readWorkspace(ctx) }] };
  if (isAuditUri(uri) && ctx.audit) {
    let q;
    try {
      q = auditQueryOf(uri);
    } catch (e) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${uri}: ${(e as Error).message}`, { uri });
    }
    return boundedAudit(uri, await auditBody(ctx.audit, q), q, ctx.maxResultChars);
  }
  if (uri.startsWith(LIST_URI_PREFIX)) {
    const id = decodeURIComponent(uri.slice(LIST_URI_PREFIX.length));
    const res = await ctx.backend.call('getListSchema', { schema_id: id });
    if (res.status === 404 || res.status === 403) {
      throw new ResourceNotFoundError(uri);
    }
    if (!isSuccess(res.status)) {
      throw new ProtocolError(ProtocolErrorCode.InternalError, `getListSchema answered ${res.status}: ${JSON.stringify(res.body ?? {})}`);
    }
    const data = (res.body as { data: unknown }).data;
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(data) }] };
  }
  if (uri.startsWith(EXPORT_URI_PREFIX)) return readExport(ctx, uri);
  if (isBulkUri(uri) && ctx.plans) return readBulk(ctx, uri);
  throw new ResourceNotFoundError(uri);
}

/**
 * A page of the audit trail within the result budget: as many entries as fit, `next` the page
 * below the last one shown and `truncated` saying so; one entry over the budget alone has its
 * long strings cut.
 */
function boundedAudit(uri: string, body: Awaited<ReturnType<typeof auditBody>>, q: AuditQuery, budget: number): ReadResourceResult {
  const render = (b: object): ReadResourceResult => ({ contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(b) }] });
  const limit = budget - PROTOCOL_ROOM;
  const whole = render(body);
  if (resultSize(whole) <= limit || body.data.length === 0) return whole;
  const cut = (entries: typeof body.data) => {
    const next = auditPageUri(q, entries[entries.length - 1]!.seq);
    return render({ data: entries, next, truncated: { kept: entries.length, of: body.data.length, next } });
  };
  const kept = longestPrefix(body.data, (entries) => resultSize(cut(entries)) <= limit);
  if (kept > 0) return cut(body.data.slice(0, kept));
  const first = body.data.slice(0, 1);
  const most = fitStrings(first, (short) => resultSize(cut(short as typeof first)) <= limit);
  return cut(shortenStrings(first, Math.max(0, most)) as typeof first);
}

/** A whole number from a query parameter, or undefined when absent; anything else is refused. */
function queryInt(q: URLSearchParams, name: string, min: number, uri: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  if (!/^\d+$/.test(v) || Number(v) < min)
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${name} must be a whole number, ${min} or more: ${uri}`);
  return Number(v);
}

/**
 * One part of an export file (`?offset=&limit=` in lines, from 0; no offset: the first part):
 * the lines that fit in the result budget, then a note that says which lines these are, how
 * many parts and lines the file has, and the URI of the next part. `_meta` holds the same.
 */
async function readExport(ctx: McpContext, uri: string): Promise<ReadResourceResult> {
  const url = new URL(uri);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (url.host !== 'exports' || !EXPORT_NAME.test(name)) throw new ResourceNotFoundError(uri);
  const offset = queryInt(url.searchParams, 'offset', 0, uri) ?? 0;
  const limit = queryInt(url.searchParams, 'limit', 1, uri);
  const csv = name.endsWith('.csv');
  let part: Part;
  try {
    part = readPart(join(ctx.dataDir, 'exports', name), { csv, offset, limit, room: partRoom(ctx.maxResultChars) });
  } catch {
    throw new ResourceNotFoundError(uri);
  }
  const base = EXPORT_URI_PREFIX + name;
  const end = part.offset + part.lines;
  const next = end < part.total ? `${base}?offset=${end}${limit !== undefined ? `&limit=${limit}` : ''}` : null;
  const which =
    part.part !== undefined ? `Part ${part.part} of ${part.parts}` : `Lines from ${part.offset + 1} (the file has ${part.parts} parts)`;
  const note = [
    `${which} of ${name}: lines ${part.lines ? `${part.offset + 1}-${end}` : 'none'} of ${part.total}${csv ? ' (line 1 is the CSV header)' : ''}.`,
    ...(part.cutAt !== undefined ? [`Line ${end} is longer than the result budget: its first ${part.cutAt} characters are shown.`] : []),
    next ? `Next part: ${next}` : 'This is the last part.',
  ].join(' ');
  const meta = {
    offset: part.offset,
    lines: part.lines,
    total: part.total,
    parts: part.parts,
    ...(part.part ? { part: part.part } : {}),
    next,
  };
  return {
    contents: [
      { uri, mimeType: csv ? 'text/csv' : 'application/x-ndjson', text: part.text, _meta: meta },
      { uri, mimeType: 'text/plain', text: note },
    ],
  };
}

/** Completion of `schema_id`: ids that start with, or lists whose name contains, what was typed. */
export async function completeSchemaId(ctx: McpContext, value: string): Promise<{ values: string[]; total: number; hasMore: boolean }> {
  const needle = value.toLowerCase();
  const found: string[] = [];
  let more = false;
  for (let page = 1; page <= COMPLETION_PAGES; page++) {
    const body = await listPage(ctx, page);
    for (const s of body.data) {
      if (s.id.toLowerCase().startsWith(needle) || (s.name ?? '').toLowerCase().includes(needle)) found.push(s.id);
    }
    const last = body.meta?.last_page ?? page;
    if (page >= last) break;
    if (page === COMPLETION_PAGES) more = true;
  }
  return { values: found.slice(0, 100), total: found.length, hasMore: more || found.length > 100 };
}
