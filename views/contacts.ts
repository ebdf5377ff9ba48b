/**
 * The Contacts view: a getContacts page or findContacts hits as a table (name, messenger,
 * username, phone, tags, balance), sorted by a click on a column, with the previous and next
 * pages fetched through getContacts. getContacts rows carry no accounts, so their balances are
 * read with getContactAccounts, a few at a time.
 */
import type { Bridge, ToolResult } from './bridge.js';
import { bodyOf, errorOf, h, money, show, startView } from './common.js';

interface Account {
  id: number;
  currency: string;
  amount: number;
}
interface Row {
  id: number;
  name: string;
  messenger: string;
  username: string;
  phone: string;
  tags: string[];
  accounts?: Account[];
}

const COLUMNS = [
  ['name', 'Name'],
  ['messenger', 'Messenger'],
  ['username', 'Username'],
  ['phone', 'Phone'],
  ['tags', 'Tags'],
  ['balance', 'Balance'],
] as const;
type Key = (typeof COLUMNS)[number][0];

let bridge: Bridge;
let tool = 'getContacts';
let args: Record<string, unknown> = {};
let rows: Row[] = [];
let meta: Record<string, number> = {};
let sort: { key: Key; dir: 1 | -1 } | undefined;
let busy = false;

/** A contact of either tool as a row. */
function rowOf(c: any): Row {
  const usernames: string[] = c.usernames ?? [c.telegram_username, c.max_username].filter((u: unknown) => typeof u === 'string' && u);
  return {
    id: c.id,
    name: String(c.name ?? ''),
    messenger: String(c.messenger ?? ''),
    username: usernames.map((u) => (u.startsWith('@') ? u : `@${u}`)).join(', '),
    phone: c.phone ? (String(c.phone).startsWith('+') ? c.phone : `+${c.phone}`) : '',
    tags: Array.isArray(c.tags) ? c.tags : [],
    accounts: Array.isArray(c.accounts) ? c.accounts : undefined,
  };
}

function balanceText(r: Row): string {
  if (!r.accounts) return '…';
  return r.accounts.length ? r.accounts.map((a) => money(a.amount, a.currency)).join(', ') : '—';
}

function sortValue(r: Row, key: Key): string | number {
  if (key === 'tags') return r.tags.join(' ');
  if (key === 'balance') return r.accounts?.[0]?.amount ?? -Infinity;
  return r[key].toLowerCase();
}

function render(): void {
  const sorted = [...rows];
  if (sort) {
    const { key, dir } = sort;
    sorted.sort((a, b) => {
      const x = sortValue(a, key);
      const y = sortValue(b, key);
      return (x < y ? -1 : x > y ? 1 : 0) * dir;
    });
  }
  const head = h(
    'tr',
    {},
    ...COLUMNS.map(([key, label]) =>
      h(
        'th',
        {
          'aria-sort': sort?.key === key ? (sort.dir === 1 ? 'ascending' : 'descending') : 'none',
          class: key === 'balance' ? 'num' : undefined,
        },
        h('button', { 'data-sort': key, onclick: () => toggleSort(key) }, label, sort?.key === key ? (sort.dir === 1 ? ' ▲' : ' ▼') : ''),
      ),
    ),
  );
  const body = sorted.map((r) =>
    h(
      'tr',
      { 'data-id': r.id },
      h('td', { 'data-label': 'Name' }, r.name),
      h('td', { 'data-label': 'Messenger' }, r.messenger),
      h('td', { 'data-label': 'Username' }, r.username || '—'),
      h('td', { 'data-label': 'Phone' }, r.phone || '—'),
      // One child: a narrow frame lays the cell out as label and value.
      h('td', { 'data-label': 'Tags' }, r.tags.length ? h('span', {}, ...r.tags.map((t) => h('span', { class: 'tag' }, t))) : '—'),
      h('td', { 'data-label': 'Balance', class: 'num balance' }, balanceText(r)),
    ),
  );
  const table = rows.length
    ? h('div', { class: 'scroll' }, h('table', { class: 'stack' }, h('thead', {}, head), h('tbody', {}, ...body)))
    : h('p', { class: 'muted' }, 'No contacts on this page.');
  show('content', table, pager());
}

function toggleSort(key: Key): void {
  sort = sort?.key === key ? { key, dir: sort.dir === 1 ? -1 : 1 } : { key, dir: 1 };
  render();
}

/** Where this page sits, and the arguments of the previous and next ones (undefined: none). */
function paging(): { text: string; prev?: Record<string, unknown>; next?: Record<string, unknown> } {
  if (tool === 'findContacts') {
    const total = meta.total ?? rows.length;
    return { text: `${rows.length} of ${total}${meta.total_capped ? '+' : ''} found for “${String(args.query ?? '')}”` };
  }
  if (typeof meta.offset === 'number') {
    const { offset, limit, total } = meta as { offset: number; limit: number; total: number };
    const text = rows.length ? `${offset + 1}–${offset + rows.length} of ${total}` : `none of ${total}`;
    return {
      text,
      prev: offset > 0 ? { ...args, offset: Math.max(0, offset - limit), limit } : undefined,
      next: offset + limit < total ? { ...args, offset: offset + limit, limit } : undefined,
    };
  }
  const page = meta.current_page ?? 1;
  const last = meta.last_page ?? page;
  const rest = { ...args };
  delete rest.page;
  return {
    text: `Page ${page} of ${last} · ${meta.total ?? rows.length} contacts`,
    prev: page > 1 ? { ...rest, page: page - 1 } : undefined,
    next: page < last ? { ...rest, page: page + 1 } : undefined,
  };
}

function pager(): HTMLElement {
  const p = paging();
  const go = (a: Record<string, unknown> | undefined) => () => a && void load(a);
  return h(
    'div',
    { class: 'bar' },
    h('button', { class: 'btn', id: 'prev', disabled: !p.prev || busy, onclick: go(p.prev) }, '‹ Previous'),
    h('button', { class: 'btn', id: 'next', disabled: !p.next || busy, onclick: go(p.next) }, 'Next ›'),
    h('span', { class: 'muted', id: 'where' }, p.text),
  );
}

/** Show a result of the view's tool. */
function take(result: ToolResult): void {
  const err = errorOf(result);
  if (err) {
    show('status', h('span', { class: 'error' }, err));
    return;
  }
  const body = bodyOf(result);
  rows = (Array.isArray(body.data) ? body.data : []).map(rowOf);
  meta = body.meta ?? {};
  // findContacts says how fresh its index is; getContacts never does.
  if (body.meta?.index) tool = 'findContacts';
  show('title', tool === 'findContacts' ? 'Contacts found' : 'Contacts');
  show('status', '');
  render();
  void balances();
}

/** Balances of rows that came without accounts, four calls at a time. */
async function balances(): Promise<void> {
  const todo = rows.filter((r) => !r.accounts);
  const shown = rows;
  const worker = async () => {
    for (let r = todo.shift(); r; r = todo.shift()) {
      const res = await bridge.callTool('getContactAccounts', { contact_id: r.id }).catch(() => undefined);
      r.accounts = res && !res.isError ? (bodyOf(res).data ?? []) : [];
      if (rows === shown) render();
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
}

async function load(a: Record<string, unknown>): Promise<void> {
  busy = true;
  render();
  show('status', 'Loading…');
  try {
    const result = await bridge.callTool(tool, a);
    if (!result.isError) args = a;
    busy = false;
    take(result);
  } catch (e) {
    busy = false;
    render();
    show('status', h('span', { class: 'error' }, (e as Error).message));
  }
}

bridge = startView('workspace-contacts', (b) => {
  b.on('ui/notifications/host-context-changed', (ctx) => {
    const name = ctx.toolInfo?.tool?.name;
    if (name === 'getContacts' || name === 'findContacts') tool = name;
  });
  b.on('ui/notifications/tool-input', (p) => {
    args = { ...(p.arguments ?? {}) };
  });
  b.on('ui/notifications/tool-result', take);
});
