/**
 * Contact accounts: a contact's internal balance per currency (bonuses, points, a deposit),
 * kept in minor units, with a journal of every move. getContactAccounts, addContactAccount
 * (alias createContactAccount), deleteContactAccount, addFundsToContactAccount,
 * withdrawFundsFromContactAccount.
 */
import { z } from 'zod';
import { defineMethod, DESTROY, IDEMPOTENT_WRITE, READ, WRITE } from './define.js';
import { contactId } from './params.js';
import { isCurrency } from './currency.js';
import { r } from './rules.js';
import { Timestamp } from './shapes.js';

/** Largest top-up or debit in one call, in minor units (the spec's 10^14). */
const MAX_MOVE = 100_000_000_000_000;
/** Largest balance: the largest integer a JSON client reads exactly (2^53 − 1). */
export const MAX_BALANCE = Number.MAX_SAFE_INTEGER;
/** Longest journal description, in characters. */
const MAX_DESCRIPTION = 255;

const ContactAccountSchema = z.object({
  id: z.number().int().describe('Account ID; pass it to other methods as account_id'),
  currency: z.string().describe('ISO 4217 code, e.g. USD'),
  amount: z.number().int().describe('Balance in minor units of the currency (cents for USD, whole yen for JPY)'),
  amount_note: z.string().describe('Balance in major units followed by the code, for display, e.g. "12.34 USD"'),
  created_at: Timestamp.describe('When the account was opened'),
  updated_at: Timestamp.describe('Last change'),
  blocked_at: Timestamp.nullable().describe('When the account was blocked; null means not blocked'),
});
export type ContactAccount = z.infer<typeof ContactAccountSchema>;

const accountId = r.integer().required();
const moveParams = {
  account_id: accountId,
  amount: r.integer().required().between(1, MAX_MOVE).describe('Minor units of the account currency'),
  description: r.string().required().max(MAX_DESCRIPTION).describe('Why; kept in the account journal'),
};

export const getContactAccounts = defineMethod({
  name: 'getContactAccounts',
  title: 'List contact accounts',
  description:
    "A contact's internal accounts (one per currency: bonuses, points, deposit), oldest first; an account's id is the " +
    'account_id the other account tools take.',
  params: {
    contact_id: contactId,
  },
  result: z.object({ data: z.array(ContactAccountSchema) }),
  annotations: READ,
});

export const addContactAccount = defineMethod({
  name: 'addContactAccount',
  status: 201,
  title: 'Open a contact account',
  description:
    'Opens an internal account (bonuses, points, deposit; not a bank account) for a contact in one currency, balance 0. ' +
    'One per currency: a second fails with currency_exists.',
  params: {
    contact_id: contactId,
    currency: r
      .string()
      .required()
      .check(isCurrency, 'The selected :attribute is invalid.')
      .describe('ISO 4217 code in capitals, e.g. USD'),
  },
  result: z.object({ data: ContactAccountSchema }),
  // A repeat with the same arguments changes nothing more (it answers currency_exists).
  annotations: IDEMPOTENT_WRITE,
  aliases: ['createContactAccount'],
  checkWith: { method: getContactAccounts },
});

export const deleteContactAccount = defineMethod({
  name: 'deleteContactAccount',
  title: 'Delete a contact account',
  description: 'Deletes an empty account (balance 0) with its journal; otherwise fails with account_not_empty.',
  params: { account_id: accountId },
  result: null,
  annotations: DESTROY,
  checkWith: { method: getContactAccounts },
});

export const addFundsToContactAccount = defineMethod({
  name: 'addFundsToContactAccount',
  title: 'Top up a contact account',
  description:
    'Adds amount to a contact account (a blocked one too) with a "Deposit via API" journal entry; returns the account. ' +
    'A balance past 2^53-1 is refused. Each call adds again.',
  params: moveParams,
  result: z.object({ data: ContactAccountSchema }),
  annotations: WRITE,
  money: 'credit',
  checkWith: { method: getContactAccounts, compare: 'the balance' },
});

export const withdrawFundsFromContactAccount = defineMethod({
  name: 'withdrawFundsFromContactAccount',
  title: 'Debit a contact account',
  description:
    'Takes amount off a contact account with a "Debit via API" journal entry; returns the account. Never below 0: ' +
    'fails with account_blocked or insufficient_funds, changing nothing. Each call debits again.',
  params: moveParams,
  result: z.object({ data: ContactAccountSchema }),
  annotations: { ...WRITE, destructiveHint: true },
  money: 'debit',
  checkWith: { method: getContactAccounts, compare: 'the balance' },
});

export const contactAccountMethods = [
  getContactAccounts,
  addContactAccount,
  deleteContactAccount,
  addFundsToContactAccount,
  withdrawFundsFromContactAccount,
] as const;
