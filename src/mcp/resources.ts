/**
 * Resources: every list schema of the owner at `workspace://lists/{schema_id}` (the schema
 * object itself, as JSON), listed page by page through getListSchemas, read through
 * getListSchema; and the files exportContacts wrote, at `workspace://exports/{name}`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplateType as ResourceTemplate,
} from '@modelcontextprotocol/server';
import { isSuccess } from '../api/backend.js';
import { readWorkspace, WORKSPACE_RESOURCE, WORKSPACE_URI } from './directory.js';
import { AUDIT_RESOURCE, AUDIT_TEMPLATE, auditBody, auditQueryOf, isAuditUri } from './audit.js';
import { EXPORT_NAME, EXPORT_URI_PREFIX } from './export.js';

import type { McpContext } from './context.js';

export const LIST_URI_PREFIX = 'workspace://lists/';
export const LIST_TEMPLATE = `${LIST_URI_PREFIX}{schema_id}`;
export const EXPORT_TEMPLATE = `${EXPORT_URI_PREFIX}{name}`;
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
    description: 'A file exportContacts wrote (JSONL or CSV).',
  },
  AUDIT_TEMPLATE,
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

/** resources/list: one getListSchemas page (50) per MCP page; the cursor is the next page number. */
export async function listResources(ctx: McpContext, cursor: string | undefined): Promise<{ resources: Resource[]; nextCursor?: string }> {
  const page = cursor === undefined ? 1 : Number(cursor);
  if (!Number.isInteger(page) || page < 1) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid cursor: ${cursor}`);
  const body = await listPage(ctx, page);
  const last = body.meta?.last_page ?? page;
  const own = page === 1 ? [...(ctx.directory ? [WORKSPACE_RESOURCE] : []), ...(ctx.audit ? [AUDIT_RESOURCE] : [])] : [];
  return { resources: [...own, ...body.data.map(describe)], ...(page < last ? { nextCursor: String(page + 1) } : {}) };
}

/** resources/read for a list schema or an export file. */
export async function readResource(ctx: McpContext, uri: string): Promise<ReadResourceResult> {
  if (uri === WORKSPACE_URI && ctx.directory) return { contents: [{ uri, mimeType: 'application/json', text: await readWorkspace(ctx) }] };
  if (isAuditUri(uri) && ctx.audit) {
    let q;
    try {
      q = auditQueryOf(uri);
    } catch (e) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${uri}: ${(e as Error).message}`, { uri });
    }
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(auditBody(ctx.audit, q)) }] };
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
  if (uri.startsWith(EXPORT_URI_PREFIX)) {
    const name = uri.slice(EXPORT_URI_PREFIX.length);
    if (!EXPORT_NAME.test(name)) throw new ResourceNotFoundError(uri);
    let text: string;
    try {
      text = readFileSync(join(ctx.dataDir, 'exports', name), 'utf8');
    } catch {
      throw new ResourceNotFoundError(uri);
    }
    return { contents: [{ uri, mimeType: name.endsWith('.csv') ? 'text/csv' : 'application/x-ndjson', text }] };
  }
  throw new ResourceNotFoundError(uri);
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
