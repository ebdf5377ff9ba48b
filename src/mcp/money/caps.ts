/**
 * Money caps of the money tools: a per-call and a rolling 24 h limit per account, in major
 * units of the account's currency, per currency (`*` for any other). Above a cap a call needs
 * the person's confirmation; a client that cannot give it gets a refusal that moves nothing
 * and says what the person can do. The 24 h window is reserved in the MCP state file before the
 * call, atomically, so concurrent calls and restarts cannot slip past it.
 */
import { amountNote, minorUnits, toMinor } from '../../api/currency.js';
import type { Money } from '../../api/define.js';
import { fail, type ApiError } from '../../api/errors.js';
import { majorUnits, type AccountView } from './accounts.js';
import type { Caps } from '../state.js';

/** A limit per currency code, in major units as written (`"100.00"`); `*` for any currency. */
export type Limits = Record<string, string>;

export interface MoneyPolicy {
  maxAmount: Limits;
  maxDaily: Limits;
  /** `--no-confirm`: calls over a cap go ahead without asking (automation). */
  noConfirm: boolean;
}

/** Remote mode (real money): 100.00 a call and 500.00 per account per 24 h, unless set. */
export const REMOTE_DEFAULTS = { maxAmount: { '*': '100.00' }, maxDaily: { '*': '500.00' } } as const;

const DECIMAL = /^\d{1,15}(\.\d{1,6})?$/;

/** Check a limit as written; `off` (no limit) is kept as it is. */
export function checkLimit(text: string, what: string): string {
  if (text === 'off' || DECIMAL.test(text)) return text;
  throw new Error(`${what}: ${JSON.stringify(text)} is not an amount in major units (e.g. 100.00) or off`);
}

/** The limits of a policy file's entry: one amount for every currency, or one per currency. */
export function limitsOf(value: unknown, what: string): Limits {
  if (typeof value === 'string' || typeof value === 'number') return { '*': checkLimit(String(value), what) };
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new Error(`${what} must be an amount or an object of amounts by currency`);
  const out: Limits = {};
  for (const [code, v] of Object.entries(value)) {
    if (code !== '*' && !/^[A-Z]{3}$/.test(code)) throw new Error(`${what}: ${code} is not a currency code (or *)`);
    const text = checkLimit(String(v), `${what}.${code}`);
    // Written for one currency, a limit finer than its minor unit is a mistake: refused, never rounded.
    if (code !== '*' && text !== 'off' && toMinor(text, minorUnits(code)) === undefined)
      throw new Error(`${what}.${code}: ${text} is not a whole number of ${code}'s minor units (${minorUnits(code)} decimals)`);
    out[code] = text;
  }
  return out;
}

/**
 * A limit in minor units of `currency`. A limit is a most and a move is whole minor units, so
 * the decimals of a `*` limit past the currency's own leave the test unchanged (a move of at
 * most 2.50 JPY is one of at most 2 JPY): they are cut, and the rest converted as every amount
 * is. A limit too large to hold exactly is past any move (MAX_MOVE is 10^14).
 */
function limitInMinor(text: string, currency: string): number {
  const digits = minorUnits(currency);
  const [whole, frac = ''] = text.split('.');
  const cut = frac.slice(0, digits);
  return toMinor(cut ? `${whole}.${cut}` : whole!, digits) ?? Number.MAX_SAFE_INTEGER;
}

/** The caps of one currency, in its minor units. */
export function capsFor(policy: MoneyPolicy, currency: string): Caps {
  const one = (limits: Limits) => {
    const text = limits[currency] ?? limits['*'];
    return text === undefined || text === 'off' ? undefined : limitInMinor(text, currency);
  };
  const caps: Caps = {};
  const perCall = one(policy.maxAmount);
  const daily = one(policy.maxDaily);
  if (perCall !== undefined) caps.perCall = perCall;
  if (daily !== undefined) caps.daily = daily;
  return caps;
}

/** Whether any cap is set. */
export function hasCaps(policy: MoneyPolicy): boolean {
  return [...Object.values(policy.maxAmount), ...Object.values(policy.maxDaily)].some((v) => v !== 'off');
}

/** What the person can do about a call over a cap. */
const REMEDY =
  'Nothing was moved. The person can confirm this call in an MCP client that supports elicitation (the server then asks them, ' +
  'naming the contact, account and amount), or raise the cap where this server is started (--max-amount, --max-daily or --money-policy). ' +
  'Tell the person; do not retry the same call.';

/** Which cap a call passes, in words: "... is over this server's cap of 100.00 USD per call." */
function overWhy(move: Money, account: AccountView, amount: number, caps: Caps, over: 'amount' | 'daily', used: number): string {
  const note = (n: number) => amountNote(n, account.currency);
  const verb = move === 'debit' ? 'Debiting' : 'Topping up';
  return over === 'amount'
    ? `${verb} account ${account.id} by ${note(amount)} is over this server's cap of ${note(caps.perCall!)} per call.`
    : `${verb} account ${account.id} by ${note(amount)} would take what was moved on it in the last 24 h to ${note(used + amount)}, ` +
        `over this server's cap of ${note(caps.daily!)} per account per 24 h (${note(used)} so far).`;
}

/** The refusal of a call over a cap that nobody confirmed. */
export function overCapRefusal(
  move: Money,
  account: AccountView,
  amount: number,
  caps: Caps,
  over: 'amount' | 'daily',
  used: number,
): ApiError {
  return fail.coded('confirmation_required', 'amount', `${overWhy(move, account, amount, caps, over, used)} ${REMEDY}`);
}

/** Whose account, in words: "Анна Каренина's USD account 500". */
function whose(account: AccountView): string {
  return `${account.contactName ?? `contact ${account.contactId}`}'s ${account.currency} account ${account.id}`;
}

/**
 * The question put to the person: the contact, the account, the amount in major units and
 * the balance after ("Top up Анна Каренина's USD account 500 by 10.00 → 35.00?"), then why.
 */
export function confirmQuestion(
  move: Money,
  account: AccountView,
  amount: number,
  caps: Caps,
  over: 'amount' | 'daily',
  used: number,
): string {
  const after = move === 'debit' ? account.amount - amount : account.amount + amount;
  const ask = `${move === 'debit' ? 'Debit' : 'Top up'} ${whose(account)} by ${majorUnits(amount, account.currency)} → ${majorUnits(after, account.currency)}?`;
  return `${ask}\n${overWhy(move, account, amount, caps, over, used)} An AI assistant asks to do it; nothing moves unless you confirm.`;
}

/** The result when the person said no (or closed the question): nothing moved, and it was their call. */
export function declined(move: Money, account: AccountView, amount: number, cancelled: boolean): ApiError {
  const what = `${move === 'debit' ? 'debit' : 'top up'} ${whose(account)} by ${amountNote(amount, account.currency)}`;
  const how = cancelled ? `The person closed the question to ${what} without confirming it.` : `The person declined to ${what}.`;
  return fail.coded(
    'confirmation_declined',
    'amount',
    `${how} Nothing was moved. This is the person's decision, not an error to work around: do not call again unless they ask you to.`,
  );
}

/**
 * The refusal when no answer showed which contact holds the account (or that contact no longer
 * does), so its currency, and the caps, cannot be known. Nothing waits for a confirmation here:
 * the next step is a read, which this server remembers for the owner across its processes.
 */
export function unknownAccount(accountId: number): ApiError {
  return fail.coded(
    'account_not_seen',
    'account_id',
    `This server caps money calls per currency, and no answer it has given for this workspace shows which contact holds account ${accountId}, ` +
      "so it cannot tell the account's currency or apply its caps. Nothing was moved. Next step: call getContactAccounts with the contact_id " +
      "of the account's contact (findContacts finds the contact by name), check the account is there, then call again with the same arguments. " +
      'This server remembers what that read showed, also for a client that starts a new server process for every call.',
  );
}
