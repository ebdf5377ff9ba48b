/** Money safety: idempotency keys on the money tools, kept in the MCP server's own state file. */
import { expect, test } from 'vitest';
import { seedStore, TEST_STORE } from '../../helpers/store.js';
import { firstJson, mcpFixture, TEST_BACKEND, useMcp, type McpWorld } from '../harness.js';

const startMcp = useMcp();

async function balance(w: McpWorld): Promise<number> {
  const r = await w.call('getContactAccounts', { contact_id: 100 });
  return (r.structuredContent as any).data[0].amount;
}

const topUp = { account_id: 500, amount: 250, description: 'Bonus', idempotency_key: 'order-1' };

test('same key and same arguments: the first result again, replayed: true, and no money moves', async () => {
  const world = await startMcp();
  const first = await world.call('addFundsToContactAccount', topUp);
  expect(first.isError).toBeFalsy();
  expect((first.structuredContent as any).data.amount).toBe(1250);
  expect(first.structuredContent).not.toHaveProperty('replayed');
  const again = await world.call('addFundsToContactAccount', topUp);
  expect(again.isError).toBeFalsy();
  expect(again.structuredContent).toEqual({ ...(first.structuredContent as object), replayed: true });
  expect(firstJson(again)).toEqual(again.structuredContent);
  expect(await balance(world)).toBe(1250);
});

test.runIf(TEST_BACKEND === 'local')("a replay for an owner blocked since: the API's 403, not the kept answer", async () => {
  const world = await startMcp();
  expect((await world.call('addFundsToContactAccount', topUp)).isError).toBeFalsy();
  world.store.owners.setBlocked(1, true);
  // The spec: "A blocked account gives `403`." A replay is no exception.
  const again = await world.call('addFundsToContactAccount', topUp);
  expect(again.isError).toBe(true);
  expect(firstJson(again)).toMatchObject({ status: 403, error: 'Your account is blocked.' });
  world.store.owners.setBlocked(1, false);
  // The key still holds the move: unblocked, the same call is its replay, and nothing moves twice.
  expect(((await world.call('addFundsToContactAccount', topUp)).structuredContent as any).replayed).toBe(true);
  expect(await balance(world)).toBe(1250);
});

test('same key with other arguments is an error (idempotency_conflict on idempotency_key), and nothing moves', async () => {
  const world = await startMcp();
  await world.call('addFundsToContactAccount', topUp);
  const other = await world.call('addFundsToContactAccount', { ...topUp, amount: 300 });
  expect(other.isError).toBe(true);
  expect(firstJson(other)).toEqual({
    status: 422,
    message: expect.any(String),
    code: 'idempotency_conflict',
    errors: { idempotency_key: [expect.any(String)] },
  });
  const otherTool = await world.call('withdrawFundsFromContactAccount', topUp);
  expect(firstJson(otherTool)).toMatchObject({ status: 422, code: 'idempotency_conflict' });
  expect(await balance(world)).toBe(1250);
});

test("the key is kept in the server's own state file: a new server over the same files still replays", async () => {
  const dbFile = seedStore(mcpFixture());
  const debit = { ...topUp, amount: 100 };
  const first = await startMcp({ dbFile });
  const done = await first.call('withdrawFundsFromContactAccount', debit);
  expect((done.structuredContent as any).data.amount).toBe(900);
  await first.close();
  const second = await startMcp({ dbFile });
  const again = await second.call('withdrawFundsFromContactAccount', debit);
  expect(again.isError).toBeFalsy();
  expect(again.structuredContent).toEqual({ ...(done.structuredContent as object), replayed: true });
  expect(await balance(second)).toBe(900);
});

test('a failed call moves nothing and gives its key back: the same key works once the debit can succeed', async () => {
  const world = await startMcp();
  const debit = { account_id: 500, amount: 5000, description: 'Big buy', idempotency_key: 'buy-1' };
  const refused = await world.call('withdrawFundsFromContactAccount', debit);
  expect(firstJson(refused)).toMatchObject({ status: 422, code: 'insufficient_funds' });
  await world.call('addFundsToContactAccount', { account_id: 500, amount: 5000, description: 'Top up' });
  const ok = await world.call('withdrawFundsFromContactAccount', debit);
  expect(ok.isError).toBeFalsy();
  expect((ok.structuredContent as any).data.amount).toBe(1000);
});

test('concurrent calls with one key move the money once', async () => {
  const world = await startMcp();
  const results = await Promise.all(Array.from({ length: 5 }, () => world.call('addFundsToContactAccount', topUp)));
  expect(results.filter((r) => !r.isError && !(r.structuredContent as any).replayed)).toHaveLength(1);
  expect(await balance(world)).toBe(1250);
});

test('keys belong to one owner: another owner using the same key gets his own call done, not a replay or a conflict', async () => {
  const dbFile = seedStore(mcpFixture());
  const alice = await startMcp({ dbFile });
  const bob = await startMcp({ dbFile, apiKey: 'bob-key' });
  const opened = await bob.call('addContactAccount', { contact_id: 200, currency: 'USD' });
  const bobAccount = (opened.structuredContent as any).data.id as number;
  expect((await alice.call('addFundsToContactAccount', topUp)).isError).toBeFalsy();
  // The same key, other arguments: Bob's own top-up runs.
  const his = await bob.call('addFundsToContactAccount', { ...topUp, account_id: bobAccount, amount: 70 });
  expect(his.isError, JSON.stringify(his.content)).toBeFalsy();
  expect(his.structuredContent).not.toHaveProperty('replayed');
  expect((his.structuredContent as any).data).toMatchObject({ id: bobAccount, amount: 70 });
  // Each owner's key still replays his own answer.
  expect(((await alice.call('addFundsToContactAccount', topUp)).structuredContent as any).replayed).toBe(true);
  expect(
    ((await bob.call('addFundsToContactAccount', { ...topUp, account_id: bobAccount, amount: 70 })).structuredContent as any).replayed,
  ).toBe(true);
  expect(await balance(alice)).toBe(1250);
});

test('getMe past its sunset: a keyed money call still moves the money once and replays (the owner is never asked of getMe)', async () => {
  const world = await startMcp();
  world.store.settings.setDeprecation('getMe', '2020-01-01T00:00:00+00:00');
  expect(firstJson(await world.call('getMe'))).toMatchObject({ status: 410, code: 'method_removed' });
  const first = await world.call('addFundsToContactAccount', topUp);
  expect(first.isError, JSON.stringify(first.content)).toBeFalsy();
  const again = await world.call('addFundsToContactAccount', topUp);
  expect(again.structuredContent).toEqual({ ...(first.structuredContent as object), replayed: true });
  expect(await balance(world)).toBe(1250);
});

test('a bad idempotency_key value is a 422 on idempotency_key', async () => {
  const world = await startMcp();
  const r = await world.call('addFundsToContactAccount', { ...topUp, idempotency_key: '' });
  expect(firstJson(r)).toMatchObject({ status: 422, errors: { idempotency_key: [expect.any(String)] } });
  expect(await balance(world)).toBe(1000);
});

test('a lost answer (5xx or outcome_unknown) keeps the key: a retry with it is refused, never sent again', async () => {
  let calls = 0;
  const world = await startMcp({
    wrap: (b) => ({
      call: async (m, p, o) => {
        if (m !== 'addFundsToContactAccount') return b.call(m, p, o);
        calls++;
        return { status: 504, headers: {}, body: { message: 'lost', error: 'lost', code: 'outcome_unknown' } };
      },
      close: () => b.close(),
    }),
  });
  const first = await world.call('addFundsToContactAccount', topUp);
  expect(firstJson(first)).toMatchObject({ status: 504, code: 'outcome_unknown' });
  const retry = await world.call('addFundsToContactAccount', topUp);
  expect(firstJson(retry)).toMatchObject({ status: 422, code: 'idempotency_conflict' });
  expect(calls).toBe(1);
});

test('a definite refusal (4xx) gives the key back: the same key may be used again', async () => {
  const world = await startMcp();
  const refused = await world.call('addFundsToContactAccount', { ...topUp, account_id: 999 });
  expect(firstJson(refused).status).toBe(404);
  const ok = await world.call('addFundsToContactAccount', topUp);
  expect(ok.isError).toBeFalsy();
});

test('insufficient_funds: nothing moves, and a warnings line gives the balance and the largest debit that would succeed', async () => {
  const world = await startMcp();
  await world.call('getContactAccounts', { contact_id: 100 });
  const refused = await world.call('withdrawFundsFromContactAccount', { account_id: 500, amount: 5000, description: 'Big buy' });
  expect(refused.isError).toBe(true);
  const body = firstJson(refused);
  // The API's body stays as it is, beside the server's own line.
  expect(body).toMatchObject({ status: 422, code: 'insufficient_funds', errors: { account_id: [expect.any(String)] } });
  expect(body.warnings).toEqual([
    expect.stringContaining('10.00 USD (1000 in minor units): the largest debit that would succeed now is amount=1000'),
  ]);
  expect(await balance(world)).toBe(1000);
});

test('insufficient_funds on an account no answer has shown yet: the warning says how to read the balance', async () => {
  const world = await startMcp();
  const refused = await world.call('withdrawFundsFromContactAccount', { account_id: 500, amount: 5000, description: 'Big buy' });
  expect(firstJson(refused).warnings).toEqual([expect.stringContaining('getContactAccounts')]);
});

test('a description holding the NUL character: kept on SQLite; on PostgreSQL, which cannot store one, a 422 naming the field, nothing moves and the key is free again', async () => {
  const world = await startMcp();
  const nul = { ...topUp, description: 'Bonus\u0000', idempotency_key: 'nul-1' };
  const r = await world.call('addFundsToContactAccount', nul);
  if (TEST_STORE === 'sqlite') {
    expect(r.isError).toBeFalsy();
    expect(await balance(world)).toBe(1250);
    return;
  }
  expect(r.isError).toBe(true);
  expect(firstJson(r)).toMatchObject({
    status: 422,
    errors: { description: ['The description field must not contain the NUL character.'] },
  });
  expect(await balance(world)).toBe(1000);
  const fixed = await world.call('addFundsToContactAccount', { ...nul, description: 'Bonus' });
  expect(fixed.isError).toBeFalsy();
  expect(await balance(world)).toBe(1250);
});

test('an idempotency key holding the NUL character is refused on either store, and nothing moves', async () => {
  const world = await startMcp();
  const r = await world.call('addFundsToContactAccount', { ...topUp, idempotency_key: 'k\u0000' });
  expect(firstJson(r)).toMatchObject({ status: 422, errors: { idempotency_key: [expect.stringContaining('no NUL character')] } });
  expect(await balance(world)).toBe(1000);
});
