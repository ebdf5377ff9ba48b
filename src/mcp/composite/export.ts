/**
 * exportContacts, the composite tool: every contact matching bot_id/date_from/date_to, fetched
 * with getContacts offset paging (limit 1000) under a `date_to` cap fixed when the export
 * starts, so a bot that keeps growing still ends. One progress notification per page;
 * cancellable between pages. Rows go to a JSONL or CSV file in the data folder, and the result
 * carries the count, the file, its resource and how to read it in parts (in the text and in
 * structuredContent: some hosts drop resource links), and a resource link; never the rows.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { log } from '../../common/log.js';
import { logWithin } from '../logging.js';
import { isSuccess } from '../../api/backend.js';
import { CONTACT_FIELDS, type Contact } from '../../api/contacts.js';
import { ApiError } from '../../api/errors.js';
import { r } from '../../api/rules.js';
import { waitOut429 } from '../../common/retry.js';
import type { McpContext } from '../context.js';
import { partRoom, readPart } from '../result/parts.js';
import { refusal, toolResult } from '../result/results.js';
import type { ToolExtra, ToolSpec } from '../tool-spec.js';
import { compositeTool } from './composite-tool.js';
import { EXPORT_TOOL_INFO } from './identities.js';

const EXPORT_PAGE = 1000;
export const EXPORT_URI_PREFIX = 'workspace://exports/';
/** File names exports get, and the only names the export resource serves. */
export const EXPORT_NAME = /^contacts-[A-Za-z0-9_-]+\.(jsonl|csv)$/;

const params = {
  bot_id: r.integer(),
  date_from: r.unixSeconds().min(0),
  date_to: r.unixSeconds().min(0),
  format: r.oneOf(['jsonl', 'csv'] as const).describe('Default jsonl: a contact a line'),
};

/** The CSV columns who the contact is in, first. */
const CSV_FIRST = ['id', 'bot_id', 'messenger', 'name'] as const satisfies ReadonlyArray<keyof Contact>;
/** The CSV columns of lists and maps (as JSON text), last. */
const CSV_LAST = ['tags', 'utm', 'variables'] as const satisfies ReadonlyArray<keyof Contact>;

/** CSV columns: every field of the API's contact (src/api/contacts.ts), in its order but for the first and the last. */
const CSV_COLUMNS: ReadonlyArray<keyof Contact> = [
  ...CSV_FIRST,
  ...CONTACT_FIELDS.filter((f) => !(CSV_FIRST as readonly string[]).includes(f) && !(CSV_LAST as readonly string[]).includes(f)),
  ...CSV_LAST,
];

function csvCell(v: unknown): string {
  if (v === undefined || v === null) return '';
  const text = typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function csvRow(contact: Record<string, unknown>): string {
  return CSV_COLUMNS.map((c) => csvCell(contact[c])).join(',') + '\r\n';
}

const ResultSchema = z.object({
  count: z.number().int().describe('How many contacts were written'),
  file: z.string().describe('The file on the machine running the MCP server: its path over stdio, its name over HTTP'),
  uri: z.string().describe('Resource URI to read the file through MCP, in parts'),
  format: z.enum(['jsonl', 'csv']),
  date_to: z.number().int().describe('The creation-time cap (Unix seconds) the export used'),
  parts: z.number().int().describe('How many parts a read from the start takes'),
  read: z.string().describe('How to read it in parts'),
});

export function exportTool(ctx: McpContext): ToolSpec {
  return compositeTool({
    info: EXPORT_TOOL_INFO,
    description:
      "Writes every contact getContacts would list (same bot_id, date_from, date_to) to a JSONL or CSV file of the server's; " +
      'answers the count, path and resource to read it in parts. Contacts made after it starts are left out.',
    params,
    output: () => ResultSchema,
    async run(p, extra) {
      const format = p.format ?? 'jsonl';
      const now = Math.floor(Date.now() / 1000);
      const cap = Math.min(p.date_to ?? now, now);
      const dir = join(ctx.dataDir, 'exports');
      const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
      // The name is the file's only key (the folder may be shared by several owners' servers on
      // one database): 72 random bits, not guessable.
      const name = `contacts-${p.bot_id ?? 'all'}-${stamp}-${randomBytes(9).toString('base64url')}.${format}`;
      const file = join(dir, name);
      // Contacts are personal data: the folder and file are the server owner's only.
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const fd = openSync(file, 'wx', 0o600);
      // Also to the client that asked, when it listens (logging capability).
      logWithin(extra.signal, () => log.info({ bot_id: p.bot_id ?? null, format, date_to: cap, file: name }, 'exportContacts started'));
      let ok = false;
      try {
        if (format === 'csv') writeSync(fd, CSV_COLUMNS.join(',') + '\r\n');
        const outcome = await fetchAll(ctx, { bot_id: p.bot_id, date_from: p.date_from, date_to: cap }, extra, (rows) => {
          const text = rows.map((row) => (format === 'csv' ? csvRow(row as Record<string, unknown>) : JSON.stringify(row) + '\n')).join('');
          writeSync(fd, text);
        });
        if (typeof outcome !== 'number') return outcome;
        ok = true;
        logWithin(extra.signal, () => log.info({ count: outcome, file: name }, 'exportContacts written'));
        const uri = EXPORT_URI_PREFIX + name;
        const { parts } = readPart(file, { csv: format === 'csv', offset: 0, limit: 1, room: partRoom(ctx.maxResultChars) });
        const read =
          `resources/read ${uri} gives part 1 of ${parts}, within the result budget; each part names the next ` +
          `(${uri}?offset=N, lines from 0).`;
        const body = { count: outcome, file: ctx.localPaths ? file : name, uri, format, date_to: cap, parts, read };
        const result = toolResult({ status: 200, headers: {}, body }, { budget: ctx.maxResultChars });
        result.content.push({
          type: 'resource_link',
          uri,
          name,
          title: `Contacts export (${outcome} contacts)`,
          mimeType: format === 'csv' ? 'text/csv' : 'application/x-ndjson',
        });
        return result;
      } finally {
        closeSync(fd);
        if (!ok) unlinkSync(file);
      }
    },
  });
}

const CANCELLED = 'The export was cancelled; no file was kept.';

/** Page through getContacts; returns the count written, or the error result that stopped it. */
async function fetchAll(
  ctx: McpContext,
  filter: Record<string, unknown>,
  extra: ToolExtra,
  write: (rows: unknown[]) => void,
): Promise<number | CallToolResult> {
  let offset = 0;
  for (;;) {
    if (extra.signal.aborted) return refusal(new ApiError('cancelled', CANCELLED));
    let res;
    try {
      // A rate-limited page was not read: wait it out (the same loop as the remote client's).
      res = await waitOut429(() => ctx.call('getContacts', { ...filter, offset, limit: EXPORT_PAGE }, { signal: extra.signal }), {
        retries: 10,
        signal: extra.signal,
        onWait: (ms) => extra.progress(offset, undefined, `Rate limited; waiting ${Math.ceil(ms / 1000)} s`),
      });
    } catch (e) {
      if (extra.signal.aborted) continue;
      throw e;
    }
    if (extra.signal.aborted) continue;
    if (!isSuccess(res.status)) return toolResult(res, { method: 'getContacts', budget: ctx.maxResultChars });
    const body = res.body as { data?: unknown[]; meta?: { total?: number } };
    const rows = Array.isArray(body.data) ? body.data : [];
    write(rows);
    offset += rows.length;
    const total = typeof body.meta?.total === 'number' ? body.meta.total : undefined;
    await extra.progress(offset, total, `${offset}${total !== undefined ? ` of ${total}` : ''} contacts written`);
    if (rows.length < EXPORT_PAGE || (total !== undefined && offset >= total)) return offset;
  }
}
