/**
 * What the MCP server knows of contact accounts from the API's answers: which contact holds an
 * account, and the contact's name. The API has no "read one account" method, and the money
 * tools take only `account_id`, so the money path (a failed debit's balance, caps in the
 * account's currency, a confirmation naming the person) reads the account back through
 * getContactAccounts of the contact it learnt here. The same for both backends.
 */
import { amountNote } from '../../api/currency.js';
import { contactsIn } from '../seen.js';

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

  holder(accountId: number): number | undefined {
    return this.holders.get(accountId);
  }

  name(contactId: number): string | null {
    return this.names.get(contactId) ?? null;
  }

  /** Learn a contact and its accounts (a findContacts hit). */
  learnContact(id: number, name: string | null, accountIds: readonly number[]): void {
    if (name !== null) remember(this.names, id, name);
    for (const a of accountIds) remember(this.holders, a, id);
  }

  /** Learn from a successful answer of `method` called with `params`. */
  learn(method: string, params: Record<string, unknown>, body: unknown): void {
    for (const c of contactsIn(body)) {
      remember(this.names, c.id as number, c.name as string);
      const accounts = (c as { accounts?: unknown }).accounts;
      if (Array.isArray(accounts)) for (const a of accounts) if (isAccount(a)) remember(this.holders, a.id, c.id as number);
    }
    const contactId = params.contact_id;
    if (!Number.isSafeInteger(contactId) || (method !== 'getContactAccounts' && method !== 'addContactAccount')) return;
    const data = (body as { data?: unknown } | undefined)?.data;
    for (const a of Array.isArray(data) ? data : [data]) if (isAccount(a)) remember(this.holders, a.id, contactId as number);
  }
}

/** `1234` USD → `12.34` (major units, no code). */
export function majorUnits(amount: number, currency: string): string {
  return amountNote(amount, currency).split(' ')[0]!;
}
