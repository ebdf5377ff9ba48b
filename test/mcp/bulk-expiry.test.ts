/**
 * A bulk plan's time (an hour from previewBulk) bounds only its start. Once started it is
 * carried out to its end however long that takes (over many runBulk calls, or a task's rounds):
 * refused as "expired before it was started", the model would make a new plan and pay again the
 * contacts already paid. Not started in time, it is refused, also through the Bulk plan card
 * (confirmBulkPlan), whose click on a card left open confirms nothing then.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, expect, test, vi } from 'vitest';
import type { Backend } from '../../src/api/backend.js';
import { BULK_COMMIT_TOOL, UI_EXTENSION, UI_MIME } from '../../src/mcp/composite/apps.js';
import { queryRows } from '../helpers/store.js';
import { connectInMemory } from './clients.js';
import { firstJson, manyContacts, useMcp, type McpWorld, type StartOptions } from './harness.js';

const startMcp = useMcp();
afterEach(() => {
  vi.useRealTimers();
});

const N = 6;
const BONUS = { type: 'deposit', currency: 'USD', amount: 500, description: 'Late bonus' };
const TWO_HOURS = 2 * 60 * 60_000;

/** N more contacts tagged vip, each with a USD account (700+i) holding 100; top-ups 40 ms slower. */
function slowWorld(): Pick<StartOptions, 'fixture' | 'wrap'> {
  const f = manyContacts(N, () => ({ tags: ['vip'] }));
  const more = [...Array(N).keys()].map((i) => ({ id: 700 + i, contact_id: 1000 + i, currency: 'USD', amount: 100 }));
  const wrap = (b: Backend): Backend => ({
    call: (m, p, o) => (m === 'addFundsToContactAccount' ? sleep(40).then(() => b.call(m, p, o)) : b.call(m, p, o)),
    close: () => b.close(),
  });
  return { fixture: { ...f, accounts: [...(f.accounts as unknown[]), ...more] }, wrap };
}

const paid = (w: McpWorld) =>
  queryRows<{ n: number }>(
    w.store,
    "SELECT account_id, count(*) AS n FROM account_journal WHERE description = 'Late bonus' GROUP BY account_id",
  ).map((r) => Number(r.n));

test('a plan started in time goes on past its expiry, paying each contact once', async () => {
  // A client that cannot ask, under no caps: the plan needs no confirmation. 40 ms a top-up, 60 ms a call.
  const w = await startMcp({ ...slowWorld(), bulkCallMs: 60, client: { elicitation: false } });
  const preview = await w.call('previewBulk', { selection: { bot_id: 10, tags: ['vip'] }, action: BONUS });
  const planId = (preview.structuredContent as { data: { plan_id: string } }).data.plan_id;
  const first = (await w.call('runBulk', { plan_id: planId })).structuredContent as { data: { done: number; remaining: number } };
  expect(first.data.done).toBeGreaterThan(0);
  expect(first.data.remaining).toBeGreaterThan(0);
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + TWO_HOURS });
  for (let i = 0; i < 20; i++) {
    const r = await w.call('runBulk', { plan_id: planId });
    expect(r.isError).toBeFalsy();
    if ((r.structuredContent as { data: { remaining: number } }).data.remaining === 0) break;
  }
  // The N and the fixture's own vip contact with a USD account.
  expect(paid(w)).toEqual(Array(N + 1).fill(1));
});

test('a plan not started in time: runBulk and the card refuse it, nothing is sent', async () => {
  const w = await startMcp({ fixture: manyContacts(3, () => ({ tags: ['gold'] })) });
  const host = await connectInMemory('2025-11-25', w.factory, {
    capabilities: { extensions: { [UI_EXTENSION]: { mimeTypes: [UI_MIME] } } },
    elicitation: false,
  });
  const close = w.close;
  w.close = async () => {
    await host.close();
    await close();
  };
  const preview = await host.callTool({
    name: 'previewBulk',
    arguments: { selection: { bot_id: 10, tags: ['gold'] }, action: { type: 'sendMessage', text: 'Sale ended' } },
  });
  const planId = (preview.structuredContent as { data: { plan_id: string } }).data.plan_id;
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + TWO_HOURS });
  const expired = { status: 422, errors: { plan_id: [expect.stringMatching(/expired at .* before it was started/)] } };
  expect(firstJson(await host.callTool({ name: BULK_COMMIT_TOOL, arguments: { plan_id: planId } }))).toMatchObject(expired);
  expect(firstJson(await host.callTool({ name: 'runBulk', arguments: { plan_id: planId } }))).toMatchObject(expired);
  expect(queryRows(w.store, "SELECT contact_id FROM conversation WHERE direction = 'out' AND text = 'Sale ended'")).toEqual([]);
});
