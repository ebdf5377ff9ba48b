/**
 * Money caps: "a call above 100.00 in the account's currency, or one that takes the rolling 24 h
 * total of an account past 500.00, needs confirmation"; "when the client cannot elicit: move
 * nothing; the result explains the cap and what the person can do ... never a token"; caps hold
 * across concurrent calls and restarts; `--no-confirm` turns confirmation off.
 */
import { expect, test } from 'vitest';
import { seedStore } from '../../helpers/store.js';
import { firstJson, mcpFixture, useMcp, type McpWorld } from '../harness.js';

const startMcp = useMcp();

async function balance(w: McpWorld): Promise<number> {
  const r = await w.call('getContactAccounts', { contact_id: 100 }); // also shows the server who holds account 500
  return (r.structuredContent as any).data[0].amount;
}

/** A client that cannot ask its user (declares no elicitation): calls over a cap are refused. */
const cannotAsk = { elicitation: false };

const topUp = (amount: number, extra: Record<string, unknown> = {}) => ({ account_id: 500, amount, description: 'Bonus', ...extra });

test('a client that cannot elicit, over the per-call cap: nothing moves, and the result explains the cap and what the person can do, with no token to send back', async () => {
  const world = await startMcp({ money: { maxAmount: { '*': '100.00' } }, client: cannotAsk });
  expect(await balance(world)).toBe(1000);
  const refused = await world.call('addFundsToContactAccount', topUp(10_001, { idempotency_key: 'big-1' }));
  expect(refused.isError).toBe(true);
  const body = firstJson(refused);
  expect(body).toMatchObject({ status: 422, code: 'confirmation_required', errors: { amount: [expect.any(String)] } });
  expect(body.message).toContain("by 100.01 USD is over this server's cap of 100.00 USD per call");
  expect(body.message).toMatch(/supports elicitation/);
  expect(body.message).toMatch(/--max-amount/);
  // Nothing the model could pass back to confirm by itself.
  expect(Object.keys(body).sort()).toEqual(['code', 'errors', 'message', 'status']);
  expect(await balance(world)).toBe(1000);
  // At the cap is allowed; the refused call gave its idempotency key back.
  expect((await world.call('addFundsToContactAccount', topUp(10_000))).isError).toBeFalsy();
  expect(await balance(world)).toBe(11_000);
});

test('the rolling 24 h cap counts top-ups and debits of an account together: a big move split into small ones does not slip past', async () => {
  const world = await startMcp({ money: { maxDaily: { USD: '5.00' } }, client: cannotAsk });
  await balance(world);
  for (let i = 0; i < 4; i++) expect((await world.call('addFundsToContactAccount', topUp(100))).isError).toBeFalsy();
  expect((await world.call('withdrawFundsFromContactAccount', topUp(100))).isError).toBeFalsy();
  const sixth = await world.call('addFundsToContactAccount', topUp(1));
  expect(firstJson(sixth).message).toContain("to 5.01 USD, over this server's cap of 5.00 USD per account per 24 h (5.00 USD so far)");
  expect(await balance(world)).toBe(1300);
});

test('a call the API refuses moves nothing and does not count toward the daily cap', async () => {
  const world = await startMcp({ money: { maxDaily: { '*': '20.00' } } });
  await balance(world);
  const refused = await world.call('withdrawFundsFromContactAccount', topUp(1001));
  expect(firstJson(refused).code).toBe('insufficient_funds');
  expect((await world.call('withdrawFundsFromContactAccount', topUp(1000))).isError).toBeFalsy();
  // 10.00 + 10.00 is the cap exactly: the refused 10.01 is not in the window.
  expect((await world.call('addFundsToContactAccount', topUp(1000))).isError).toBeFalsy();
});

test('20 concurrent top-ups never pass the daily cap', async () => {
  const world = await startMcp({ money: { maxDaily: { '*': '1.00' } }, client: cannotAsk });
  await balance(world);
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) => world.call('addFundsToContactAccount', topUp(30, { idempotency_key: `c-${i}` }))),
  );
  const ok = results.filter((r) => !r.isError);
  expect(ok).toHaveLength(3);
  expect(results.filter((r) => r.isError).map((r) => firstJson(r).code)).toEqual(Array(17).fill('confirmation_required'));
  expect(await balance(world)).toBe(1090);
});

test("the daily cap holds across a restart: the window is kept in the server's state file", async () => {
  const dbFile = seedStore(mcpFixture());
  const money = { maxDaily: { '*': '1.00' } };
  const first = await startMcp({ dbFile, money });
  await balance(first);
  expect((await first.call('addFundsToContactAccount', topUp(80))).isError).toBeFalsy();
  await first.close();
  const second = await startMcp({ dbFile, money, client: cannotAsk });
  await balance(second);
  expect(firstJson(await second.call('addFundsToContactAccount', topUp(21))).code).toBe('confirmation_required');
  expect((await second.call('addFundsToContactAccount', topUp(20))).isError).toBeFalsy();
});

test('an account the server has not seen yet: caps are per currency, so nothing moves and the result says what to call first', async () => {
  const world = await startMcp({ money: { maxAmount: { '*': '100.00' } } });
  const refused = await world.call('addFundsToContactAccount', topUp(1));
  expect(firstJson(refused)).toMatchObject({ code: 'account_not_seen', message: expect.stringContaining('getContactAccounts') });
  expect(await balance(world)).toBe(1000);
});

test('--no-confirm: a call over a cap goes ahead without asking, and the audit trail says so', async () => {
  const world = await startMcp({ money: { maxAmount: { '*': '1.00' }, noConfirm: true } });
  await balance(world);
  expect((await world.call('addFundsToContactAccount', topUp(500))).isError).toBeFalsy();
  expect(await balance(world)).toBe(1500);
  const read = await world.client.readResource({ uri: 'workspace://audit?tool=addFundsToContactAccount' });
  const [entry] = JSON.parse((read.contents[0] as { text: string }).text).data;
  expect(entry.confirmation).toEqual({ how: 'not asked (--no-confirm)', by: 'the server operator' });
});
