/**
 * Contact accounts: a contact's internal balance per currency (bonuses, points, a deposit),
 * kept in minor units, with a journal of every move. getContactAccounts, addContactAccount
 * (alias createContactAccount), deleteContactAccount, addFundsToContactAccount,
 * withdrawFundsFromContactAccount.
 */
import { z } from 'zod';
import { defineMethod, READ } from './define.js';
import { isCurrency } from './currency.js';
import { r } from './rules.js';
import { Timestamp } from './shapes.js';

/** Largest top-up or debit in one call, in minor units (the spec's 10^14). */
export const MAX_MOVE = 100_000_000_000_000;
/** Largest balance: the largest integer a JSON client reads exactly (2^53 − 1). */
export const MAX_BALANCE = Number.MAX_SAFE_INTEGER;
/** Longest journal description, in characters. */
export const MAX_DESCRIPTION = 255;

export const ContactAccountSchema = z.object({
  id: z.number().int().describe('Account ID; pass it to other methods as account_id'),
  currency: z.string().describe('ISO 4217 code, e.g. USD'),
  amount: z.number().int().describe('Balance in minor units of the currency (cents for USD, whole yen for JPY)'),
  amount_note: z.string().describe('Balance in major units followed by the code, for display, e.g. "12.34 USD"'),
  created_at: Timestamp.describe('When the account was opened'),
  updated_at: Timestamp.describe('Last change'),
  blocked_at: Timestamp.nullable().describe('When the account was blocked; null means not blocked'),
});
export type ContactAccount = z.infer<typeof ContactAccountSchema>;

const accountId = r.integer().required().describe('Account ID (the id from getContactAccounts)');
const moveParams = {
  account_id: accountId,
  amount: r
    .integer()
    .required()
    .between(1, MAX_MOVE)
    .describe('Amount in MINOR units of the account currency (cents for USD, whole yen for JPY), 1 to 100000000000000'),
  description: r
    .string()
    .required()
    .max(MAX_DESCRIPTION)
    .describe('Why the money moves, up to 255 characters; written to the account journal'),
};

const WRITE = { readOnlyHint: false, openWorldHint: false } as const;

export const getContactAccounts = defineMethod({
  name: 'getContactAccounts',
  verbs: ['GET', 'POST'],
  status: 200,
  title: 'List contact accounts',
  description:
    "Returns a contact's internal accounts (one per currency: bonuses, points, deposit), in the order they were opened. " +
    'Each has its id (the account_id of the other account methods), currency, balance `amount` in MINOR units (cents), ' +
    '`amount_note` in major units for display, and `blocked_at` (null when not blocked). Changes nothing. ' +
    'Call this first to find the account_id for a top-up, debit or deletion.',
  params: {
    contact_id: r.integer().required().describe('Contact ID (from getContacts)'),
  },
  result: z.object({ data: z.array(ContactAccountSchema) }),
  annotations: READ,
});

export const addContactAccount = defineMethod({
  name: 'addContactAccount',
  verbs: ['POST'],
  status: 201,
  title: 'Open a contact account',
  description:
    'Opens an internal account for a contact in one currency, with a zero balance. A contact has at most one account per ' +
    'currency: a second one in the same currency fails with code currency_exists (use getContactAccounts to find the ' +
    'existing one). This is an internal balance (bonuses, points, deposit), not a bank account; no money is transferred.',
  params: {
    contact_id: r.integer().required().describe('Contact ID (from getContacts)'),
    currency: r
      .string()
      .required()
      .check(isCurrency, 'The selected :attribute is invalid.')
      .describe('ISO 4217 currency code in capital letters, e.g. USD, EUR, JPY'),
  },
  result: z.object({ data: ContactAccountSchema }),
  // A repeat with the same arguments changes nothing more (it answers currency_exists).
  annotations: { ...WRITE, destructiveHint: false, idempotentHint: true },
  aliases: ['createContactAccount'],
  checkWith: 'getContactAccounts',
});

export const deleteContactAccount = defineMethod({
  name: 'deleteContactAccount',
  verbs: ['POST'],
  status: 204,
  title: 'Delete a contact account',
  description:
    'Deletes a contact account together with its journal. Only an empty account (balance 0) can be deleted; otherwise it ' +
    'fails with code account_not_empty and nothing changes. Find the account_id with getContactAccounts.',
  params: { account_id: accountId },
  result: null,
  annotations: { ...WRITE, destructiveHint: true, idempotentHint: true },
  checkWith: 'getContactAccounts',
});

export const addFundsToContactAccount = defineMethod({
  name: 'addFundsToContactAccount',
  verbs: ['POST'],
  status: 200,
  title: 'Top up a contact account',
  description:
    'Adds `amount` (MINOR units, e.g. cents: 1234 is 12.34 USD) to a contact account and writes a "Deposit via API" ' +
    'journal record with the description. Returns the account with its new balance. Works on a blocked account too. ' +
    'amount is 1 to 100000000000000; a top-up that would take the balance past 9007199254740991 is refused. ' +
    'Not idempotent: each call adds again. Find the account_id with getContactAccounts.',
  params: moveParams,
  result: z.object({ data: ContactAccountSchema }),
  annotations: { ...WRITE, destructiveHint: false, idempotentHint: false },
  money: true,
  checkWith: 'getContactAccounts (compare the balance)',
});

export const withdrawFundsFromContactAccount = defineMethod({
  name: 'withdrawFundsFromContactAccount',
  verbs: ['POST'],
  status: 200,
  title: 'Debit a contact account',
  description:
    'Takes `amount` (MINOR units, e.g. cents: 1234 is 12.34 USD) off a contact account and writes a "Debit via API" ' +
    'journal record with the description. Returns the account with its new balance. The balance never goes below zero: ' +
    'a blocked account fails with code account_blocked, a balance below amount with insufficient_funds, and then ' +
    'nothing changes. Not idempotent: each call debits again. Find the account_id with getContactAccounts.',
  params: moveParams,
  result: z.object({ data: ContactAccountSchema }),
  annotations: { ...WRITE, destructiveHint: true, idempotentHint: false },
  money: true,
  checkWith: 'getContactAccounts (compare the balance)',
});

export const contactAccountMethods = [
  getContactAccounts,
  addContactAccount,
  deleteContactAccount,
  addFundsToContactAccount,
  withdrawFundsFromContactAccount,
] as const;
