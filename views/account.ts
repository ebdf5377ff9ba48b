/**
 * The Account view: a contact's accounts (getContactAccounts) with balances in major units, the
 * recent money moves on them from this server's audit trail, and a top-up / withdraw form. The
 * form's submit shows a confirm card; its Confirm calls confirmMoneyMove, the tool only this
 * view may call, with an idempotency key made for that card: however often the person clicks,
 * the money moves once.
 */
import type { Bridge, ToolResult } from './bridge.js';
import { bodyOf, errorOf, h, money, show, startView, toMinor } from './common.js';

interface Account {
  id: number;
  currency: string;
  amount: number;
  blocked_at: string | null;
}
interface Move {
  move: 'add' | 'withdraw';
  account: Account;
  amount: number;
  description: string;
  key: string;
}

const MONEY_TOOLS: Record<string, 'add' | 'withdraw'> = { addFundsToContactAccount: 'add', withdrawFundsFromContactAccount: 'withdraw' };

let bridge: Bridge;
let contactId: number | undefined;
let contactName: string | undefined;
let accounts: Account[] = [];
let pending: Move | undefined;
let outcome: HTMLElement | undefined;

/** A key no other confirm card has: 128 random bits. */
function newKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return 'view-' + Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

function renderAccounts(): HTMLElement {
  if (!accounts.length) return h('p', { class: 'muted' }, 'This contact has no accounts.');
  return h(
    'div',
    { class: 'grid', id: 'accounts' },
    ...accounts.map((a) =>
      h(
        'div',
        { class: 'card', 'data-account': a.id },
        h('div', { class: 'muted' }, `${a.currency} · account ${a.id}`, a.blocked_at ? ' · blocked' : ''),
        h('div', { class: 'big balance' }, money(a.amount, a.currency)),
      ),
    ),
  );
}

function renderForm(): HTMLElement {
  const select = h('select', { id: 'account' }, ...accounts.map((a) => h('option', { value: a.id }, `${a.currency} (account ${a.id})`)));
  const kind = h('select', { id: 'move' }, h('option', { value: 'add' }, 'Top up'), h('option', { value: 'withdraw' }, 'Withdraw'));
  const amount = h('input', { id: 'amount', inputmode: 'decimal', placeholder: '0.00', autocomplete: 'off', size: 8 });
  const description = h('input', { id: 'description', placeholder: 'Why (written to the journal)', maxlength: 255 });
  const error = h('div', { class: 'error', id: 'form-error' });
  const review = () => {
    const account = accounts.find((a) => String(a.id) === select.value);
    if (!account) return;
    const minor = toMinor(amount.value, account.currency);
    if (minor === undefined || minor < 1) {
      error.textContent = `Enter an amount in ${account.currency}, e.g. 10.00.`;
      return;
    }
    const move = kind.value as 'add' | 'withdraw';
    error.textContent = '';
    pending = {
      move,
      account,
      amount: minor,
      description: description.value.trim() || (move === 'add' ? 'Top-up' : 'Withdrawal'),
      key: newKey(),
    };
    outcome = undefined;
    render();
  };
  // Not a <form>: hosts' sandboxes may not allow form submission (no allow-forms).
  const enter = (e: KeyboardEvent) => e.key === 'Enter' && review();
  amount.addEventListener('keydown', enter);
  description.addEventListener('keydown', enter);
  const form = h(
    'div',
    { class: 'bar form', role: 'group', 'aria-label': 'Move money' },
    h('label', {}, 'Account', select),
    h('label', {}, 'Action', kind),
    h('label', {}, 'Amount', amount),
    h('label', { style: 'flex:1 1 160px' }, 'Description', description),
    h('button', { class: 'btn', type: 'button', id: 'review', onclick: review }, 'Review'),
  );
  return h('div', {}, form, error);
}

function renderConfirm(m: Move): HTMLElement {
  const after = m.move === 'add' ? m.account.amount + m.amount : m.account.amount - m.amount;
  const who = contactName ? `${contactName}’s` : `contact ${contactId}’s`;
  const confirm = h('button', { class: 'btn primary', id: 'confirm' }, 'Confirm');
  const cancel = h('button', { class: 'btn', id: 'cancel', onclick: () => ((pending = undefined), render()) }, 'Cancel');
  confirm.addEventListener('click', () => {
    // One click is enough: later clicks (and a second tab's) carry the same key and move nothing.
    confirm.disabled = true;
    cancel.disabled = true;
    void commit(m);
  });
  return h(
    'div',
    { class: 'card confirm', id: 'confirm-card', role: 'alertdialog', 'aria-label': 'Confirm the move' },
    h(
      'p',
      { style: 'margin:0 0 6px' },
      h(
        'strong',
        {},
        `${m.move === 'add' ? 'Top up' : 'Withdraw from'} ${who} ${m.account.currency} account by ${money(m.amount, m.account.currency)}?`,
      ),
    ),
    h('div', { class: 'muted' }, `“${m.description}” · balance after: ${money(after, m.account.currency)}`),
    h('div', { class: 'bar' }, confirm, cancel),
  );
}

async function commit(m: Move): Promise<void> {
  let result: ToolResult;
  try {
    result = await bridge.callTool('confirmMoneyMove', {
      move: m.move,
      account_id: m.account.id,
      amount: m.amount,
      description: m.description,
      idempotency_key: m.key,
    });
  } catch (e) {
    result = { isError: true, content: [{ type: 'text', text: JSON.stringify({ message: (e as Error).message }) }] };
  }
  pending = undefined;
  const err = errorOf(result);
  if (err) outcome = h('p', { class: 'error', id: 'outcome' }, err);
  else {
    const a = bodyOf(result).data as Account;
    outcome = h('p', { class: 'ok', id: 'outcome' }, `Done. The ${a.currency} balance is now ${money(a.amount, a.currency)}.`);
  }
  await refresh();
}

function render(): void {
  show('title', contactName ? `${contactName} · accounts` : contactId !== undefined ? `Contact ${contactId} · accounts` : 'Accounts');
  show(
    'content',
    renderAccounts(),
    outcome,
    accounts.length ? (pending ? renderConfirm(pending) : renderForm()) : null,
    h('h2', {}, 'Recent moves'),
    h('div', { id: 'journal' }, journalEl),
  );
}

let journalEl: HTMLElement = h('p', { class: 'muted' }, 'Loading…');

/** The recent money moves on the contact's accounts, from this server's audit trail. */
async function loadJournal(): Promise<void> {
  if (contactId === undefined) return;
  let page: any;
  try {
    page = await bridge.readJson(`workspace://audit?contact=${contactId}&limit=50`);
  } catch {
    page = undefined;
  }
  if (!page) {
    journalEl = h('p', { class: 'muted' }, 'This host does not let views read the audit trail.');
    return;
  }
  const byId = new Map(accounts.map((a) => [a.id, a]));
  const moves = (page.data as any[]).filter((e) => MONEY_TOOLS[e.tool] && e.status >= 200 && e.status < 300 && !e.replayed).slice(0, 10);
  if (!moves.length) {
    journalEl = h('p', { class: 'muted' }, 'No moves through this server yet.');
    return;
  }
  journalEl = h(
    'div',
    { class: 'scroll' },
    h(
      'table',
      { class: 'stack' },
      h(
        'thead',
        {},
        h('tr', {}, h('th', {}, 'When'), h('th', { class: 'num' }, 'Amount'), h('th', {}, 'Description'), h('th', {}, 'Confirmed')),
      ),
      h(
        'tbody',
        {},
        ...moves.map((e) => {
          const a = byId.get(e.arguments.account_id);
          const sign = MONEY_TOOLS[e.tool] === 'add' ? '+' : '−';
          const amount = a ? money(e.arguments.amount, a.currency) : String(e.arguments.amount);
          return h(
            'tr',
            { class: 'move' },
            h('td', { 'data-label': 'When' }, new Date(e.at).toLocaleString('en-GB', { dateStyle: 'short', timeStyle: 'short' })),
            h('td', { 'data-label': 'Amount', class: 'num' }, sign + amount),
            h('td', { 'data-label': 'Description' }, String(e.arguments.description ?? '')),
            h('td', { 'data-label': 'Confirmed' }, e.confirmation?.how ?? '—'),
          );
        }),
      ),
    ),
  );
}

async function refresh(): Promise<void> {
  if (contactId !== undefined) {
    const r = await bridge.callTool('getContactAccounts', { contact_id: contactId }).catch(() => undefined);
    if (r && !r.isError) accounts = bodyOf(r).data ?? accounts;
  }
  await loadJournal();
  render();
}

/** The contact's name, when findContacts is served (the accounts answer has none). */
async function loadName(): Promise<void> {
  if (contactId === undefined) return;
  const r = await bridge.callTool('findContacts', { query: String(contactId), limit: 1 }).catch(() => undefined);
  const hit = r && !r.isError ? bodyOf(r).data?.[0] : undefined;
  if (hit?.id === contactId) contactName = hit.name;
}

bridge = startView('workspace-account', (b) => {
  b.on('ui/notifications/tool-input', (p) => {
    const id = Number(p.arguments?.contact_id);
    if (Number.isSafeInteger(id)) contactId = id;
  });
  b.on('ui/notifications/tool-result', async (result: ToolResult) => {
    const err = errorOf(result);
    if (err) {
      show('status', h('span', { class: 'error' }, err));
      return;
    }
    const data = bodyOf(result).data;
    accounts = Array.isArray(data) ? data : [];
    show('status', '');
    render();
    await Promise.all([loadName(), loadJournal()]);
    render();
  });
});
