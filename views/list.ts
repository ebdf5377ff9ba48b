/**
 * The List view: a list schema (getListSchema) as its fields, in field order, and its first
 * records read with getListItems, one column per field; money values in major units.
 */
import type { Bridge, ToolResult } from './bridge.js';
import { bodyOf, errorOf, h, money, show, startView } from './common.js';

/** A field definition as getListSchema gives it (name, type, currency of a money field, flags). */
type Field = { name: string; type: string; currency?: string } & Record<`is_${string}`, boolean>;

/** Records shown under the fields. */
const FIRST = 10;

let bridge: Bridge;

function cell(value: unknown, f: Field): string {
  if (value === null || value === undefined || value === '') return '—';
  if (f.type === 'money' && typeof value === 'number') return money(value, f.currency ?? 'USD');
  if (f.type === 'bool') return value === true || value === 1 ? 'yes' : 'no';
  if (f.type === 'datetime' && typeof value === 'string') return value.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC');
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function fieldsTable(fields: Array<[string, Field]>): HTMLElement {
  if (!fields.length) return h('p', { class: 'muted' }, 'This list has no fields yet.');
  return h(
    'div',
    { class: 'scroll' },
    h(
      'table',
      { class: 'stack', id: 'fields' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Field'), h('th', {}, 'Slug'), h('th', {}, 'Type'), h('th', {}, 'Flags'))),
      h(
        'tbody',
        {},
        ...fields.map(([slug, f]) =>
          h(
            'tr',
            {},
            h('td', { 'data-label': 'Field' }, f.name),
            h('td', { 'data-label': 'Slug' }, h('code', {}, slug)),
            h('td', { 'data-label': 'Type' }, f.type === 'money' && f.currency ? `money (${f.currency})` : f.type),
            h(
              'td',
              { 'data-label': 'Flags' },
              [f.is_required && 'required', f.is_hidden && 'hidden', f.is_encryptable && 'encrypted'].filter(Boolean).join(', ') || '—',
            ),
          ),
        ),
      ),
    ),
  );
}

function recordsTable(fields: Array<[string, Field]>, records: any[], total: number): HTMLElement {
  if (!records.length) return h('p', { class: 'muted' }, 'No records yet.');
  return h(
    'div',
    {},
    h(
      'div',
      { class: 'scroll' },
      h(
        'table',
        { class: 'stack', id: 'records' },
        h(
          'thead',
          {},
          h('tr', {}, ...fields.map(([, f]) => h('th', { class: f.type === 'money' || f.type === 'number' ? 'num' : undefined }, f.name))),
        ),
        h(
          'tbody',
          {},
          ...records.map((rec) =>
            h(
              'tr',
              { 'data-id': rec.id },
              ...fields.map(([slug, f]) =>
                h('td', { 'data-label': f.name, class: f.type === 'money' || f.type === 'number' ? 'num' : undefined }, cell(rec[slug], f)),
              ),
            ),
          ),
        ),
      ),
    ),
    h('p', { class: 'muted', id: 'records-count' }, `${records.length} of ${total} records`),
  );
}

async function take(result: ToolResult): Promise<void> {
  const err = errorOf(result);
  if (err) {
    show('status', h('span', { class: 'error' }, err));
    return;
  }
  const schema = bodyOf(result).data ?? {};
  const fields: Array<[string, Field]> = Array.isArray(schema.fields) ? [] : Object.entries(schema.fields ?? {});
  show('title', String(schema.name ?? 'List'));
  show('status', `List ${schema.id} · ${fields.length} field${fields.length === 1 ? '' : 's'}`);
  const records = h('div', { id: 'records-box' }, h('p', { class: 'muted' }, 'Loading records…'));
  show('content', fieldsTable(fields), h('h2', {}, 'First records'), records);
  const r = await bridge.callTool('getListItems', { schema_id: schema.id, limit: FIRST }).catch((e: Error) => e);
  if (r instanceof Error || r.isError) {
    records.replaceChildren(h('p', { class: 'error' }, r instanceof Error ? r.message : errorOf(r)!));
    return;
  }
  const page = bodyOf(r);
  records.replaceChildren(recordsTable(fields, page.data ?? [], page.meta?.total ?? (page.data ?? []).length));
}

bridge = startView('workspace-list', (b) => {
  b.on('ui/notifications/tool-result', (result: ToolResult) => void take(result));
});
