/**
 * What the MCP server knows of contact accounts from the API's answers: which contact holds an
 * account, and the contact's name. The API has no "read one account" method, and the money
 * tools take only `account_id`, so the money path (a failed debit's balance, caps in the
 * account's currency, a confirmation naming the person) reads the account back through
 * getContactAccounts of the contact it learnt here. The same for both backends. What it learns
 * of holders is also kept in the server's state (`AccountHolders`), when given one, so that the
 * next process of a client that starts one per call knows it too.
 */
import { amountNote } from '../../api/currency.js';
import { log } from '../../common/log.js';
import { contactsIn } from '../seen.js';
import type { AccountHolders } from '../state.js';

/** A contact account as read live. `amount` in minor units. */
export interface AccountView {
  id: number;
  contactId: number;
  contactName: string | null;
  currency: string;
  amount: number;
  blocked: boolean;
}

/** At most this many accounts and names are kept (the oldest are forgotten first). */
const KEEP = 10_000;

function remember<K, V>(map: Map<K, V>, k: K, v: V): void {
  map.delete(k);
  map.set(k, v);
  if (map.size > KEEP) map.delete(map.keys().next().value as K);
}

function isAccount(o: unknown): o is { id: number; currency: string; amount: number } {
  const a = o as Record<string, unknown> | null;
  return !!a && Number.isSafeInteger(a.id) && typeof a.currency === 'string' && Number.isSafeInteger(a.amount);
}

export class AccountBook {
  /** account id → contact id */
  private readonly holders = new Map<number, number>();
  /** contact id → name */
  private readonly names = new Map<number, string>();

  /** `kept`: the holders other processes of the same owner (or key) learnt, and where this one's go. */
  constructor(private readonly kept?: AccountHolders) {}

  async holder(accountId: number): Promise<number | undefined> {
    const known = this.holders.get(accountId);
    if (known !== undefined || !this.kept) return known;
    let contactId: number | undefined;
    try {
      contactId = await this.kept.get(accountId);
    } catch (e) {
      // Fails closed: an account whose holder cannot be read is one the server has not seen.
      log.warn({ err: e }, "an account's holder could not be read from the MCP state");
      return undefined;
    }
    if (contactId !== undefined) remember(this.holders, accountId, contactId);
    return contactId;
  }

  name(contactId: number): string | null {
    return this.names.get(contactId) ?? null;
  }

  /** Learn a contact and its accounts (a findContacts hit). */
  learnContact(id: number, name: string | null, accountIds: readonly number[]): Promise<void> {
    if (name !== null) remember(this.names, id, name);
    const learnt: Array<[number, number]> = [];
    for (const a of accountIds) this.hold(a, id, learnt);
    return this.keep(learnt);
  }

  /** Learn from a successful answer of `method` called with `params`. */
  learn(method: string, params: Record<string, unknown>, body: unknown): Promise<void> {
    const learnt: Array<[number, number]> = [];
    for (const c of contactsIn(body)) {
      remember(this.names, c.id as number, c.name as string);
      const accounts = (c as { accounts?: unknown }).accounts;
      if (Array.isArray(accounts)) for (const a of accounts) if (isAccount(a)) this.hold(a.id, c.id as number, learnt);
    }
    const contactId = params.contact_id;
    if (Number.isSafeInteger(contactId) && (method === 'getContactAccounts' || method === 'addContactAccount')) {
      const data = (body as { data?: unknown } | undefined)?.data;
      for (const a of Array.isArray(data) ? data : [data]) if (isAccount(a)) this.hold(a.id, contactId as number, learnt);
    }
    return this.keep(learnt);
  }

  /** Note a holder; one not known in this process already is added to `learnt`, to be kept. */
  private hold(accountId: number, contactId: number, learnt: Array<[number, number]>): void {
    if (this.holders.get(accountId) !== contactId) learnt.push([accountId, contactId]);
    remember(this.holders, accountId, contactId);
  }

  /**
   * Keep what this answer taught in the state (resolved once kept: the caller waits, so that the
   * next call of any context of the scope finds it); a failure is logged and costs only a later
   * "not seen" (never a wrong move).
   */
  private async keep(learnt: Array<[number, number]>): Promise<void> {
    if (learnt.length === 0 || !this.kept) return;
    // One pair per account (the last an answer showed): a statement may write a row only once.
    await this.kept
      .put([...new Map(learnt)])
      .catch((e: unknown) => log.warn({ err: e }, "accounts' holders could not be kept in the MCP state"));
  }
}

/** `1234` USD → `12.34` (major units, no code). */
export function majorUnits(amount: number, currency: string): string {
  return amountNote(amount, currency).split(' ')[0]!;
}
