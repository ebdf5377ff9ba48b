/**
 * The spec's contact account parts (resource, states and transitions, the five endpoints, the
 * account errors, the limits, the alias), sentence by sentence, over real HTTP.
 */
import { describe, expect, it } from 'vitest';
import { loadFixture } from '../../src/store/seed.js';
import { queryRows } from '../helpers/store.js';
import { baseFixture, useWorld } from '../helpers/world.js';

const MAX_SAFE = 9007199254740991;
const T0 = new Date('2026-03-01T10:00:00Z');

let clock = T0;
let nextContact = 1000;

const w = useWorld(
  () => ({
    ...baseFixture(),
    bots: [
      ...(baseFixture().bots as object[]),
      { id: 11, project_uuid: '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10', name: 'Old bot', deleted: true },
    ],
    contacts: [
      { id: 101, bot_id: 10, messenger: 'telegram', name: 'Gone', telegram_id: '6001', deleted: true },
      { id: 110, bot_id: 11, messenger: 'telegram', name: 'On deleted bot', telegram_id: '6002' },
      { id: 200, bot_id: 20, messenger: 'telegram', name: 'Bob customer', telegram_id: '7001' },
    ],
    accounts: [
      { id: 601, contact_id: 101, currency: 'USD', amount: 0 },
      { id: 610, contact_id: 110, currency: 'USD', amount: 0 },
      { id: 620, contact_id: 200, currency: 'USD', amount: 300 },
    ],
  }),
  { now: () => clock },
);

/** A fresh contact of Alice's bot 10, with the given accounts seeded; returns their ids. */
function seedContact(accounts: Array<{ currency: string; amount?: number; blocked?: boolean }> = []) {
  const contactId = nextContact++;
  const before = maxAccountId();
  loadFixture(w.store, {
    contacts: [{ id: contactId, bot_id: 10, messenger: 'telegram', name: `C${contactId}`, telegram_id: `t${contactId}` }],
    accounts: accounts.map((a) => ({ contact_id: contactId, ...a })),
  });
  const ids = accounts.map((_, i) => before + i + 1);
  return { contactId, ids, id: ids[0]! };
}

function maxAccountId(): number {
  return queryRows<{ n: number }>(w.store, 'SELECT coalesce(max(id), 0) AS n FROM contact_accounts')[0]!.n;
}

function balance(id: number): number | undefined {
  return w.store.contactAccounts.get(id)?.amount;
}

function journal(id: number) {
  return (w.store.admin.journal(id) ?? []) as Array<{
    operation: string;
    amount: number;
    description: string;
    balance_after: number;
    created_at: string;
  }>;
}

const journalSum = (id: number) => journal(id).reduce((s, j) => s + j.amount, 0);

const topUp = (account_id: number, amount: number | string, description = 'top-up', key?: string) =>
  w.call('addFundsToContactAccount', { account_id, amount, description }, { key });
const debit = (account_id: number, amount: number | string, description = 'debit', key?: string) =>
  w.call('withdrawFundsFromContactAccount', { account_id, amount, description }, { key });

describe('Contact account resource', () => {
  it('fields: id, currency, amount, amount_note, created_at, updated_at, blocked_at, in that order', async () => {
    const { contactId } = seedContact([{ currency: 'USD', amount: 1234 }]);
    const r = await w.call('getContactAccounts', { contact_id: contactId });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['data']);
    expect(Object.keys(r.body.data[0])).toEqual(['id', 'currency', 'amount', 'amount_note', 'created_at', 'updated_at', 'blocked_at']);
  });

  it('id: Account ID; passed to other methods as account_id', async () => {
    const { contactId } = seedContact([{ currency: 'USD', amount: 100 }]);
    const list = await w.call('getContactAccounts', { contact_id: contactId });
    const id = list.body.data[0].id;
    const r = await topUp(id, 1);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ id, amount: 101 });
  });

  it('amount: balance in minor units (cents for USD; whole units for JPY); amount_note: major units followed by the code', async () => {
    const { contactId } = seedContact([
      { currency: 'USD', amount: 1234 },
      { currency: 'JPY', amount: 1200 },
      { currency: 'BHD', amount: 1234 },
      { currency: 'EUR', amount: 5 },
      { currency: 'CLF', amount: 1 },
    ]);
    const r = await w.call('getContactAccounts', { contact_id: contactId });
    expect(r.body.data.map((a: { amount: number; amount_note: string }) => [a.amount, a.amount_note])).toEqual([
      [1234, '12.34 USD'],
      [1200, '1200 JPY'],
      [1234, '1.234 BHD'],
      [5, '0.05 EUR'],
      [1, '0.0001 CLF'],
    ]);
  });

  it('created_at is when the account was opened, updated_at the last change (ISO 8601 with +00:00)', async () => {
    const { contactId } = seedContact();
    clock = new Date('2026-03-02T08:00:00Z');
    const opened = await w.call('addContactAccount', { contact_id: contactId, currency: 'USD' });
    expect(opened.body.data.created_at).toBe('2026-03-02T08:00:00+00:00');
    expect(opened.body.data.updated_at).toBe('2026-03-02T08:00:00+00:00');
    clock = new Date('2026-03-02T09:30:00Z');
    const moved = await topUp(opened.body.data.id, 50);
    expect(moved.body.data.created_at).toBe('2026-03-02T08:00:00+00:00');
    expect(moved.body.data.updated_at).toBe('2026-03-02T09:30:00+00:00');
    clock = T0;
  });

  it('blocked_at: null means not blocked; a blocked account holds a timestamp', async () => {
    const { contactId } = seedContact([{ currency: 'USD' }, { currency: 'EUR', blocked: true }]);
    const r = await w.call('getContactAccounts', { contact_id: contactId });
    expect(r.body.data[0].blocked_at).toBeNull();
    expect(r.body.data[1].blocked_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
  });

  it('a contact has at most one account per currency', async () => {
    const { contactId } = seedContact([{ currency: 'USD' }]);
    const r = await w.call('addContactAccount', { contact_id: contactId, currency: 'USD' });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('currency_exists');
    expect((await w.call('getContactAccounts', { contact_id: contactId })).body.data).toHaveLength(1);
  });

  it('operations appear in the account journal as "Deposit via API" and "Debit via API"', async () => {
    const { id } = seedContact([{ currency: 'USD' }]);
    clock = new Date('2026-03-03T12:00:00Z');
    await topUp(id, 700, 'welcome bonus');
    await debit(id, 250, 'order 42');
    clock = T0;
    expect(journal(id)).toEqual([
      expect.objectContaining({
        operation: 'Deposit via API',
        amount: 700,
        description: 'welcome bonus',
        balance_after: 700,
        created_at: '2026-03-03T12:00:00+00:00',
      }),
      expect.objectContaining({
        operation: 'Debit via API',
        amount: -250,
        description: 'order 42',
        balance_after: 450,
        created_at: '2026-03-03T12:00:00+00:00',
      }),
    ]);
    expect(journalSum(id)).toBe(450);
    expect(balance(id)).toBe(450);
  });
});

describe('States and transitions', () => {
  it('(none) → addContactAccount → open, not blocked, amount is 0', async () => {
    const { contactId } = seedContact();
    const r = await w.call('addContactAccount', { contact_id: contactId, currency: 'EUR' });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({ currency: 'EUR', amount: 0, amount_note: '0.00 EUR', blocked_at: null });
    expect(typeof r.body.data.id).toBe('number');
  });

  it('open → deleteContactAccount when the balance is zero → deleted, response 204', async () => {
    const { contactId, id } = seedContact([{ currency: 'USD' }]);
    const r = await w.call('deleteContactAccount', { account_id: id });
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    expect((await w.call('getContactAccounts', { contact_id: contactId })).body.data).toEqual([]);
    expect((await topUp(id, 1)).status).toBe(404);
  });

  it('blocked → deleteContactAccount when the balance is zero → deleted', async () => {
    const { id } = seedContact([{ currency: 'USD', blocked: true }]);
    expect((await w.call('deleteContactAccount', { account_id: id })).status).toBe(204);
    expect(balance(id)).toBeUndefined();
  });

  it('an account id is never given out again after its account is deleted (an old id cannot reach another contact)', async () => {
    const a = await w.call('addContactAccount', { contact_id: 200, currency: 'GBP' }, { key: 'bob-key' });
    expect(a.status).toBe(201);
    const id = a.body.data.id as number;
    expect((await w.call('deleteContactAccount', { account_id: id }, { key: 'bob-key' })).status).toBe(204);
    const b = await w.call('addContactAccount', { contact_id: 200, currency: 'GBP' }, { key: 'bob-key' });
    expect(b.body.data.id).toBeGreaterThan(id);
    const stale = await w.call('addFundsToContactAccount', { account_id: id, amount: 1, description: 'x' }, { key: 'bob-key' });
    expect(stale.status).toBe(404);
  });

  it('after deletion an account in that currency can be opened again', async () => {
    const { contactId, id } = seedContact([{ currency: 'USD' }]);
    await w.call('deleteContactAccount', { account_id: id });
    const r = await w.call('addContactAccount', { contact_id: contactId, currency: 'USD' });
    expect(r.status).toBe(201);
    expect(r.body.data.amount).toBe(0);
  });

  it('open → addFundsToContactAccount → same state, balance increases', async () => {
    const { id } = seedContact([{ currency: 'USD', amount: 100 }]);
    const r = await topUp(id, 250);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ id, amount: 350, amount_note: '3.50 USD', blocked_at: null });
  });

  it('addFundsToContactAccount: allowed on a blocked account, which stays blocked', async () => {
    const { id } = seedContact([{ currency: 'USD', amount: 100, blocked: true }]);
    const before = (await topUp(id, 1)).body.data;
    expect(before.amount).toBe(101);
    expect(before.blocked_at).not.toBeNull();
  });

  it('open, not blocked → withdrawFundsFromContactAccount when the balance is at least amount → balance decreases', async () => {
    const { id } = seedContact([{ currency: 'USD', amount: 1000 }]);
    const r = await debit(id, 400);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ id, amount: 600, amount_note: '6.00 USD', blocked_at: null });
    const all = await debit(id, 600);
    expect(all.status).toBe(200);
    expect(all.body.data.amount).toBe(0);
  });
});

describe('getContactAccounts', () => {
  it('Methods: GET, POST', async () => {
    const { contactId } = seedContact([{ currency: 'USD', amount: 5 }]);
    const get = await w.call('getContactAccounts', { contact_id: contactId }, { verb: 'GET' });
    const post = await w.call('getContactAccounts', { contact_id: contactId });
    expect(get.status).toBe(200);
    expect(post.status).toBe(200);
    expect(get.body).toEqual(post.body);
  });

  it('contact_id (integer, required)', async () => {
    const missing = await w.call('getContactAccounts', {});
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toEqual({ contact_id: ['The contact id field is required.'] });
    const bad = await w.call('getContactAccounts', { contact_id: 'abc' }, { verb: 'GET' });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual({ contact_id: ['The contact id field must be an integer.'] });
  });

  it('{data: [...]} in the order the accounts were opened (not by currency)', async () => {
    const { contactId } = seedContact();
    for (const currency of ['USD', 'EUR', 'AUD', 'JPY']) {
      expect((await w.call('addContactAccount', { contact_id: contactId, currency })).status).toBe(201);
    }
    const r = await w.call('getContactAccounts', { contact_id: contactId });
    expect(r.body.data.map((a: { currency: string }) => a.currency)).toEqual(['USD', 'EUR', 'AUD', 'JPY']);
  });

  it('a contact with no accounts gives an empty list', async () => {
    const { contactId } = seedContact();
    const r = await w.call('getContactAccounts', { contact_id: contactId });
    expect(r.status).toBe(200);
    expect(r.text).toBe('{"data":[]}');
  });
});

describe('addContactAccount', () => {
  it('Method: POST (GET gives 405)', async () => {
    const { contactId } = seedContact();
    const r = await w.call('addContactAccount', { contact_id: contactId, currency: 'USD' }, { verb: 'GET' });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('POST');
    expect(r.body.message).toBe('The GET method is not supported for route api/v1/addContactAccount. Supported methods: POST.');
    expect((await w.call('getContactAccounts', { contact_id: contactId })).body.data).toEqual([]);
  });

  it('also available under the name createContactAccount (POST only as well)', async () => {
    const { contactId } = seedContact();
    const r = await w.call('createContactAccount', { contact_id: contactId, currency: 'GBP' });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({ currency: 'GBP', amount: 0, blocked_at: null });
    const again = await w.call('createContactAccount', { contact_id: contactId, currency: 'GBP' });
    expect(again.status).toBe(422);
    expect(again.body.code).toBe('currency_exists');
    const viaGet = await w.call('createContactAccount', { contact_id: contactId, currency: 'EUR' }, { verb: 'GET' });
    expect(viaGet.status).toBe(405);
  });

  it('form fields work as well as JSON', async () => {
    const { contactId } = seedContact();
    const r = await w.call('addContactAccount', { contact_id: String(contactId), currency: 'USD' }, { form: true });
    expect(r.status).toBe(201);
  });

  it('contact_id and currency are required', async () => {
    const r = await w.call('addContactAccount', {});
    expect(r.status).toBe(422);
    expect(r.body).toEqual({
      message: 'The contact id field is required. (and 1 more error)',
      errors: { contact_id: ['The contact id field is required.'], currency: ['The currency field is required.'] },
    });
  });

  it('currency: ISO 4217 in capital letters (lower case or an unknown code gives 422 on currency)', async () => {
    const { contactId } = seedContact();
    for (const currency of ['usd', 'Usd', 'XYZ', 'US', 'USDD']) {
      const r = await w.call('addContactAccount', { contact_id: contactId, currency });
      expect(r.status, currency).toBe(422);
      expect(r.body).toEqual({
        message: 'The selected currency is invalid.',
        errors: { currency: ['The selected currency is invalid.'] },
      });
    }
    const notString = await w.call('addContactAccount', { contact_id: contactId, currency: 840 });
    expect(notString.status).toBe(422);
    expect(notString.body.errors.currency).toEqual(['The currency field must be a string.']);
    expect((await w.call('getContactAccounts', { contact_id: contactId })).body.data).toEqual([]);
    expect((await w.call('addContactAccount', { contact_id: contactId, currency: 'BHD' })).status).toBe(201);
  });

  it('Response 201: {data: <contact account>}', async () => {
    const { contactId } = seedContact();
    const r = await w.call('addContactAccount', { contact_id: contactId, currency: 'JPY' });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      data: {
        id: expect.any(Number),
        currency: 'JPY',
        amount: 0,
        amount_note: '0 JPY',
        created_at: '2026-03-01T10:00:00+00:00',
        updated_at: '2026-03-01T10:00:00+00:00',
        blocked_at: null,
      },
    });
  });
});

describe('Accounts must exist for the API moves', () => {
  it('the API top-up and debit methods work by account_id, so the account must exist (no account is opened for them)', async () => {
    const { contactId } = seedContact();
    const byContact = await w.call('addFundsToContactAccount', { contact_id: contactId, amount: 5, description: 'x' });
    expect(byContact.status).toBe(422);
    expect(byContact.body.errors).toEqual({ account_id: ['The account id field is required.'] });
    const next = maxAccountId() + 1000;
    for (const method of ['addFundsToContactAccount', 'withdrawFundsFromContactAccount']) {
      const r = await w.call(method, { account_id: next, amount: 5, description: 'x' });
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: 'Account not found.' });
    }
    expect((await w.call('getContactAccounts', { contact_id: contactId })).body.data).toEqual([]);
  });
});

describe('deleteContactAccount', () => {
  it('Method: POST (GET gives 405, nothing deleted)', async () => {
    const { id } = seedContact([{ currency: 'USD' }]);
    const r = await w.call('deleteContactAccount', { account_id: id }, { verb: 'GET' });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('POST');
    expect(balance(id)).toBe(0);
  });

  it('account_id (integer, required)', async () => {
    const r = await w.call('deleteContactAccount', {});
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual({ account_id: ['The account id field is required.'] });
  });

  it('only an empty account can be deleted: 422 account_not_empty on account_id, nothing changes', async () => {
    const { id } = seedContact([{ currency: 'USD', amount: 1 }]);
    const r = await w.call('deleteContactAccount', { account_id: id });
    expect(r.status).toBe(422);
    expect(Object.keys(r.body)).toEqual(['message', 'code', 'errors']);
    expect(r.body.code).toBe('account_not_empty');
    expect(Object.keys(r.body.errors)).toEqual(['account_id']);
    expect(r.body.errors.account_id).toEqual([r.body.message]);
    expect(balance(id)).toBe(1);
    // Emptied, it can go.
    expect((await debit(id, 1)).status).toBe(200);
    expect((await w.call('deleteContactAccount', { account_id: id })).status).toBe(204);
  });
});

describe('addFundsToContactAccount', () => {
  it('Method: POST (GET gives 405, nothing changes)', async () => {
    const { id } = seedContact([{ currency: 'USD', amount: 10 }]);
    const r = await w.call('addFundsToContactAccount', { account_id: id, amount: 5, description: 'x' }, { verb: 'GET' });
    expect(r.status).toBe(405);
    expect(balance(id)).toBe(10);
  });

  it('account_id, amount and description are required', async () => {
    const r = await w.call('addFundsToContactAccount', {});
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual({
      account_id: ['The account id field is required.'],
      amount: ['The amount field is required.'],
      description: ['The description field is required.'],
    });
    expect(r.body.message).toBe('The account id field is required. (and 2 more errors)');
  });

  it('amount: minor units, 1 to 100000000000000 (10^14)', async () => {
    const { id } = seedContact([{ currency: 'USD' }]);
    for (const amount of [0, -5, 100000000000001]) {
      const r = await topUp(id, amount);
      expect(r.status, String(amount)).toBe(422);
      expect(r.body.errors).toEqual({ amount: ['The amount field must be between 1 and 100000000000000.'] });
    }
    for (const amount of ['1.5', 'abc', 2.5]) {
      const r = await topUp(id, amount);
      expect(r.status).toBe(422);
      expect(r.body.errors).toEqual({ amount: ['The amount field must be an integer.'] });
    }
    expect(balance(id)).toBe(0);
    expect(journal(id)).toEqual([]);
    expect((await topUp(id, 1)).body.data.amount).toBe(1);
    expect((await topUp(id, 100000000000000)).body.data.amount).toBe(100000000000001);
    expect((await topUp(id, '5')).body.data.amount).toBe(100000000000006);
  });

  it('description: up to 255 characters (counted as characters); written to the account journal', async () => {
    const { id } = seedContact([{ currency: 'USD' }]);
    const long = await topUp(id, 1, 'x'.repeat(256));
    expect(long.status).toBe(422);
    expect(long.body.errors).toEqual({ description: ['The description field must not be greater than 255 characters.'] });
    const emoji = '💰'.repeat(255);
    expect((await topUp(id, 1, emoji)).status).toBe(200);
    expect(journal(id).map((j) => j.description)).toEqual([emoji]);
    expect((await topUp(id, 1, '   ')).body.errors).toEqual({ description: ['The description field is required.'] });
  });

  it('Response 200: {data: <contact account>} with the new balance', async () => {
    const { id } = seedContact([{ currency: 'BHD', amount: 1000 }]);
    const r = await topUp(id, 234);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['data']);
    expect(r.body.data).toMatchObject({ id, currency: 'BHD', amount: 1234, amount_note: '1.234 BHD' });
    expect(journal(id).at(-1)).toMatchObject({ operation: 'Deposit via API', amount: 234, balance_after: 1234 });
  });

  it('a top-up that would take the balance past 2^53 − 1 is refused with 422 on amount, nothing changed', async () => {
    const { id } = seedContact([{ currency: 'USD', amount: MAX_SAFE - 10 }]);
    const over = await topUp(id, 11);
    expect(over.status).toBe(422);
    expect(Object.keys(over.body.errors)).toEqual(['amount']);
    expect(balance(id)).toBe(MAX_SAFE - 10);
    expect(journal(id)).toHaveLength(1); // the opening balance only
    const exact = await topUp(id, 10);
    expect(exact.status).toBe(200);
    expect(exact.text).toContain(`"amount":${MAX_SAFE}`);
    expect((await topUp(id, 1)).status).toBe(422);
    expect(balance(id)).toBe(MAX_SAFE);
    expect(journalSum(id)).toBe(MAX_SAFE);
  });
});

describe('withdrawFundsFromContactAccount', () => {
  it('Method: POST (GET gives 405, nothing changes)', async () => {
    const { id } = seedContact([{ currency: 'USD', amount: 10 }]);
    const r = await w.call('withdrawFundsFromContactAccount', { account_id: id, amount: 5, description: 'x' }, { verb: 'GET' });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('POST');
    expect(balance(id)).toBe(10);
  });

  it('same parameters as addFundsToContactAccount (amount 1 to 10^14, description up to 255, all required)', async () => {
    const { id } = seedContact([{ currency: 'USD', amount: 10 }]);
    expect((await w.call('withdrawFundsFromContactAccount', {})).body.errors).toEqual({
      account_id: ['The account id field is required.'],
      amount: ['The amount field is required.'],
      description: ['The description field is required.'],
    });
    expect((await debit(id, 0)).body.errors).toEqual({ amount: ['The amount field must be between 1 and 100000000000000.'] });
    expect((await debit(id, 100000000000001)).status).toBe(422);
    expect((await debit(id, 1, 'y'.repeat(256))).body.errors).toEqual({
      description: ['The description field must not be greater than 255 characters.'],
    });
    expect(balance(id)).toBe(10);
  });

  it('Response 200: {data: <contact account>} with the new balance; the journal records the debit', async () => {
    const { id } = seedContact([{ currency: 'JPY', amount: 1200 }]);
    const r = await debit(id, 200, 'coffee');
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ id, currency: 'JPY', amount: 1000, amount_note: '1000 JPY' });
    expect(journal(id).at(-1)).toMatchObject({ operation: 'Debit via API', amount: -200, description: 'coffee', balance_after: 1000 });
  });

  it('the balance never goes below zero: 422 insufficient_funds on account_id, nothing changes', async () => {
    const { id } = seedContact([{ currency: 'USD', amount: 100 }]);
    const r = await debit(id, 101);
    expect(r.status).toBe(422);
    expect(Object.keys(r.body)).toEqual(['message', 'code', 'errors']);
    expect(r.body.code).toBe('insufficient_funds');
    expect(r.body.errors).toEqual({ account_id: [r.body.message] });
    expect(balance(id)).toBe(100);
    expect(journal(id)).toHaveLength(1);
  });

  it('a blocked account: 422 account_blocked on account_id, nothing changes', async () => {
    const { id } = seedContact([{ currency: 'USD', amount: 100, blocked: true }]);
    const r = await debit(id, 50);
    expect(r.status).toBe(422);
    expect(Object.keys(r.body)).toEqual(['message', 'code', 'errors']);
    expect(r.body.code).toBe('account_blocked');
    expect(r.body.errors).toEqual({ account_id: [r.body.message] });
    expect(balance(id)).toBe(100);
  });

  it('the block is checked first, then the balance', async () => {
    const { id } = seedContact([{ currency: 'USD', amount: 10, blocked: true }]);
    const r = await debit(id, 1000);
    expect(r.body.code).toBe('account_blocked');
    w.store.admin.setAccountBlocked(id, false);
    expect((await debit(id, 1000)).body.code).toBe('insufficient_funds');
  });

  it('unblocking (dashboard) makes it open, not blocked: debits work again', async () => {
    const { id } = seedContact([{ currency: 'USD', amount: 10, blocked: true }]);
    w.store.admin.setAccountBlocked(id, false);
    const r = await debit(id, 10);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ amount: 0, blocked_at: null });
  });

  // "The balance never goes below zero, even under simultaneous requests": one process answers its
  // requests one at a time (the SQLite driver is synchronous), so the race needs several processes
  // on one file: contact-accounts-concurrency.test.ts.
});

describe('Contact account errors: 404 and 403', () => {
  const moves = (id: number) => [() => w.call('deleteContactAccount', { account_id: id }), () => topUp(id, 1), () => debit(id, 1)];

  it('no such contact: 404', async () => {
    expect((await w.call('getContactAccounts', { contact_id: 999999 })).status).toBe(404);
    expect((await w.call('addContactAccount', { contact_id: 999999, currency: 'USD' })).status).toBe(404);
  });

  it('no such account: 404 {error}', async () => {
    for (const call of moves(999999)) {
      const r = await call();
      expect(r.status).toBe(404);
      expect(Object.keys(r.body)).toEqual(['error']);
    }
  });

  it('deleted contact: 404 (its accounts too), nothing changes', async () => {
    expect((await w.call('getContactAccounts', { contact_id: 101 })).status).toBe(404);
    expect((await w.call('addContactAccount', { contact_id: 101, currency: 'EUR' })).status).toBe(404);
    for (const call of moves(601)) expect((await call()).status).toBe(404);
    expect(balance(601)).toBe(0);
  });

  it('deleted bot: 404 (its contacts and their accounts), nothing changes', async () => {
    expect((await w.call('getContactAccounts', { contact_id: 110 })).status).toBe(404);
    expect((await w.call('addContactAccount', { contact_id: 110, currency: 'EUR' })).status).toBe(404);
    for (const call of moves(610)) expect((await call()).status).toBe(404);
    expect(balance(610)).toBe(0);
  });

  it("contact or account of another account's bot: 403 {error}, even for a team member; nothing changes", async () => {
    // Alice is invited to Bob's project; contact 200 and account 620 are Bob's.
    const list = await w.call('getContactAccounts', { contact_id: 200 });
    expect(list.status).toBe(403);
    expect(Object.keys(list.body)).toEqual(['error']);
    expect((await w.call('addContactAccount', { contact_id: 200, currency: 'EUR' })).status).toBe(403);
    for (const call of moves(620)) expect((await call()).status).toBe(403);
    expect(balance(620)).toBe(300);
    expect(journal(620)).toHaveLength(1);
    // Bob himself reaches them.
    expect((await w.call('getContactAccounts', { contact_id: 200 }, { key: 'bob-key' })).body.data[0]).toMatchObject({
      id: 620,
      amount: 300,
    });
    expect((await topUp(620, 5, 'bob', 'bob-key')).status).toBe(200);
  });

  it('the specific 422s carry message, code, errors (currency_exists on currency)', async () => {
    const { contactId } = seedContact([{ currency: 'EUR' }]);
    const r = await w.call('addContactAccount', { contact_id: contactId, currency: 'EUR' });
    expect(r.status).toBe(422);
    expect(Object.keys(r.body)).toEqual(['message', 'code', 'errors']);
    expect(r.body).toMatchObject({ code: 'currency_exists', errors: { currency: [r.body.message] } });
  });
});
