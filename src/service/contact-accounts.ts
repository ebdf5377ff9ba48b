/**
 * Handlers: contact accounts as a ledger that can neither lose nor invent money. Every move
 * is one checked UPDATE of the balance and its journal record inside one transaction (IMMEDIATE
 * on SQLite; on PostgreSQL with row locks, so moves on one account queue rather than conflict),
 * so simultaneous requests (from any number of processes or instances) each check the balance
 * they change.
 */
import {
  MAX_BALANCE,
  type addContactAccount,
  type addFundsToContactAccount,
  type ContactAccount,
  type deleteContactAccount,
  type getContactAccounts,
  type withdrawFundsFromContactAccount,
} from '../api/contact-accounts.js';
import { amountNote } from '../api/currency.js';
import { fail } from '../api/errors.js';
import type { Infer, Shape } from '../api/rules.js';
import type { AccountRow, Operation } from '../store/contact-accounts.js';
import { isoTime } from '../store/time.js';
import { requireContact } from './access.js';
import { Reply, type Ctx } from './context.js';

type Params<M extends { params: Shape }> = Infer<M['params']>;

/** The API's shape of an account row. */
function toContactAccount(a: AccountRow): ContactAccount {
  return {
    id: a.id,
    currency: a.currency,
    amount: a.amount,
    amount_note: amountNote(a.amount, a.currency),
    created_at: a.created_at,
    updated_at: a.updated_at,
    blocked_at: a.blocked_at,
  };
}

/** The holder's account, reached through its contact: 404 missing (or contact/bot deleted), 403 another's. */
function requireAccount(ctx: Ctx, accountId: number): AccountRow {
  const account = ctx.store.contactAccounts.get(accountId);
  if (!account) throw fail.notFound('Account not found.');
  requireContact(ctx, account.contact_id);
  return account;
}

/**
 * The move when every check below passes, in one checked UPDATE and the journal insert; else
 * undefined, nothing written, and the handler's reads find the refusal and its order.
 */
function tryMove(ctx: Ctx, accountId: number, delta: number, operation: Operation, description: string): AccountRow | undefined {
  return ctx.store.contactAccounts.tryMove({
    id: accountId,
    ownerId: ctx.owner.id,
    delta,
    max: MAX_BALANCE,
    operation,
    description,
    now: isoTime(ctx.now),
  });
}

/** A move's writes check themselves (tryMove), and a failed check locks the row it then reads. */
const ROW_LOCKS = { rowLocks: true } as const;

export const contactAccountHandlers = {
  getContactAccounts(ctx: Ctx, p: Params<typeof getContactAccounts>): { data: ContactAccount[] } {
    requireContact(ctx, p.contact_id);
    return { data: ctx.store.contactAccounts.listByContact(p.contact_id).map(toContactAccount) };
  },

  addContactAccount(ctx: Ctx, p: Params<typeof addContactAccount>): Reply<{ data: ContactAccount }> {
    const row = ctx.store.tx(() => {
      requireContact(ctx, p.contact_id);
      const opened = ctx.store.contactAccounts.open(p.contact_id, p.currency, isoTime(ctx.now));
      if (opened === 'exists') {
        throw fail.coded('currency_exists', 'currency', `The contact already has an account in ${p.currency}.`);
      }
      return opened;
    });
    return new Reply(201, { data: toContactAccount(row) });
  },

  deleteContactAccount(ctx: Ctx, p: Params<typeof deleteContactAccount>): void {
    ctx.store.tx(() => {
      const account = requireAccount(ctx, p.account_id);
      if (account.amount !== 0 || !ctx.store.contactAccounts.removeEmpty(account.id)) {
        throw fail.coded('account_not_empty', 'account_id', 'Only an empty account can be deleted; its balance is not zero.');
      }
    });
  },

  addFundsToContactAccount(ctx: Ctx, p: Params<typeof addFundsToContactAccount>): { data: ContactAccount } {
    const row = ctx.store.tx(() => {
      const moved = tryMove(ctx, p.account_id, p.amount, 'Deposit via API', p.description);
      if (moved) return moved;
      const account = requireAccount(ctx, p.account_id);
      // A blocked account can be topped up.
      const balance = account.amount + p.amount;
      if (balance > MAX_BALANCE) {
        throw fail.invalid(
          'amount',
          `The amount field must not be greater than ${MAX_BALANCE - account.amount}: the balance cannot exceed ${MAX_BALANCE}.`,
        );
      }
      return ctx.store.contactAccounts.move(account.id, balance, p.amount, 'Deposit via API', p.description, isoTime(ctx.now));
    }, ROW_LOCKS);
    return { data: toContactAccount(row) };
  },

  withdrawFundsFromContactAccount(ctx: Ctx, p: Params<typeof withdrawFundsFromContactAccount>): { data: ContactAccount } {
    const row = ctx.store.tx(() => {
      const moved = tryMove(ctx, p.account_id, -p.amount, 'Debit via API', p.description);
      if (moved) return moved;
      const account = requireAccount(ctx, p.account_id);
      // The block is checked first, then the balance.
      if (account.blocked_at !== null) {
        throw fail.coded('account_blocked', 'account_id', 'The account is blocked.');
      }
      if (account.amount < p.amount) {
        throw fail.coded('insufficient_funds', 'account_id', 'Insufficient funds: the balance is less than the amount.');
      }
      const balance = account.amount - p.amount;
      return ctx.store.contactAccounts.move(account.id, balance, -p.amount, 'Debit via API', p.description, isoTime(ctx.now));
    }, ROW_LOCKS);
    return { data: toContactAccount(row) };
  },
};
