/**
 * Errors that teach, over the real Client on both backends: beside the API's own message, a
 * note where that message would lead a model astray, and a note where a value was read other
 * than as sent.
 */
import { describe, expect, test } from 'vitest';
import { firstJson, useMcp } from '../harness.js';

const startMcp = useMcp();

async function balance(world: Awaited<ReturnType<typeof startMcp>>): Promise<number> {
  const r = await world.call('getContactAccounts', { contact_id: 100 });
  return (r.structuredContent as { data: Array<{ amount: number }> }).data[0]!.amount;
}

describe('errors that teach', () => {
  test('an amount of "10.00" or 10.5: the API\'s "must be an integer", and that amounts are minor units (10.00 USD is 1000); nothing moves', async () => {
    const world = await startMcp();
    const before = await balance(world);
    for (const [amount, cents] of [
      ['10.00', 1000],
      [10.5, 1050],
    ] as const) {
      const body = firstJson(await world.call('addFundsToContactAccount', { account_id: 500, amount, description: 'x' }));
      expect(body).toMatchObject({ status: 422, errors: { amount: ['The amount field must be an integer.'] } });
      expect(body.warnings).toEqual([
        `amount is an integer in minor units of the currency (cents): 10.00 USD is 1000. For ${amount} in a currency with cents send ${cents}, not ${Math.trunc(Number(amount))}.`,
      ]);
    }
    expect(await balance(world)).toBe(before);
  });

  test('date_from given as a date ("2024-01-01"): the 422 names the Unix seconds it means, in getContacts, getNumberOfContacts and exportContacts', async () => {
    const world = await startMcp();
    const want = ['The date from field must be an integer: Unix seconds, e.g. 1704067200 for 2024-01-01T00:00:00Z.'];
    for (const name of ['getContacts', 'getNumberOfContacts', 'exportContacts']) {
      const r = await world.call(name, { bot_id: 10, date_from: '2024-01-01' });
      expect(r.isError, name).toBe(true);
      expect(firstJson(r), name).toMatchObject({ status: 422, errors: { date_from: want } });
    }
  });

  test('an amount sent as the text "1000" is taken as 1000, and the result says so', async () => {
    const world = await startMcp();
    const before = await balance(world);
    const r = await world.call('addFundsToContactAccount', { account_id: 500, amount: '1000', description: 'x' });
    expect(r.isError).toBeFalsy();
    expect((r.structuredContent as { warnings: string[] }).warnings).toEqual([
      'amount was sent as the text "1000" and read as 1000: send it as a JSON number.',
    ]);
    expect(await balance(world)).toBe(before + 1000);
  });

  test('currency "usd": the API\'s "invalid", and that codes are capitals', async () => {
    const world = await startMcp();
    const body = firstJson(await world.call('addContactAccount', { contact_id: 100, currency: 'usd' }));
    expect(body).toMatchObject({ status: 422, errors: { currency: ['The selected currency is invalid.'] } });
    expect(body.warnings).toEqual(['Currency codes are ISO 4217 in capitals: send "USD", not "usd".']);
  });

  test('an unknown field type lists the allowed ones', async () => {
    const world = await startMcp();
    const body = firstJson(
      await world.call('createListSchema', { name: 'L', bot_id: 10, fields: [{ name: 'A', slug: 'a', type: 'text' }] }),
    );
    expect(body).toMatchObject({ status: 422, errors: { 'fields.0.type': ['The selected fields.0.type is invalid.'] } });
    expect(body.warnings).toEqual([
      'fields.0.type must be one of: string, number, bool, date, datetime, money, file, image, contact, bot.',
    ]);
  });

  test('getContacts {name: "Anna"} points to findContacts, not to page; a near name still gets "did you mean"', async () => {
    const world = await startMcp();
    const body = firstJson(await world.call('getContacts', { name: 'Anna' }));
    expect(body.status).toBe(422);
    expect(body.errors.name[0]).toMatch(
      /^The name field is not a parameter of this tool\. To find contacts by name, phone, email or username call findContacts/,
    );
    expect(body.errors.name[0]).not.toMatch(/Did you mean/);
    const near = firstJson(await world.call('getContacts', { limt: 5 }));
    expect(near.errors.limt[0]).toMatch(/Did you mean limit\?/);
    // A write is not a search: createOrUpdateContact takes name, and its unknown `query` gets no pointer.
    const write = firstJson(await world.call('createOrUpdateContact', { bot_id: 10, messenger: 'vk', vk_id: 1, name: 'A', query: 'x' }));
    expect(write.errors.query[0]).not.toMatch(/findContacts/);
  });
});
