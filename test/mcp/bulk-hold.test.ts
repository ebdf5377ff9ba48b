/**
 * A runBulk run holds its plan (15 s, renewed) so that a second run (another runBulk call, a
 * task's round, the Bulk plan card's Confirm) does not carry out the same steps. A step may take
 * longer than that (a remote API's pace, a rate limit's wait): the run keeps its hold while it
 * lives. Before, the second run took the plan over, found the first one's top-up under way, read
 * the balance back as not moved yet, gave the key back and topped up again: paid twice.
 */
import { expect, test } from 'vitest';
import type { Backend } from '../../src/api/backend.js';
import { queryRows } from '../helpers/store.js';
import { manyContacts, useMcp } from './harness.js';

const startMcp = useMcp();

test('a step that outlasts the hold: a second runBulk meanwhile pays no one twice', { timeout: 60_000 }, async () => {
  const base = manyContacts(2, () => ({ tags: ['vip'] }));
  const accounts = [...(base.accounts as unknown[]), { id: 700, contact_id: 1000, currency: 'USD', amount: 100 }];
  // The plan's first top-up takes 17 s, past the 15 s hold.
  let slow = true;
  const wrap = (b: Backend): Backend => ({
    async call(m, p, o) {
      if (m === 'addFundsToContactAccount' && slow) {
        slow = false;
        await new Promise((resolve) => setTimeout(resolve, 17_000));
      }
      return b.call(m, p, o);
    },
    close: () => b.close(),
  });
  const w = await startMcp({ fixture: { ...base, accounts }, wrap, client: { elicitation: false } });
  const action = { type: 'deposit', currency: 'USD', amount: 500, description: 'Held bonus' };
  const preview = await w.call('previewBulk', { selection: { bot_id: 10, tags: ['vip'] }, action });
  const planId = (preview.structuredContent as { data: { plan_id: string } }).data.plan_id;
  const first = w.call('runBulk', { plan_id: planId });
  await new Promise((resolve) => setTimeout(resolve, 15_500));
  const second = await w.call('runBulk', { plan_id: planId });
  expect(second.structuredContent).toMatchObject({ warnings: [expect.stringMatching(/^Another runBulk call is carrying out/)] });
  expect((await first).structuredContent).toMatchObject({ data: { failed: 0, remaining: 0 } });
  const moves = queryRows<{ n: number }>(
    w.store,
    "SELECT account_id, count(*) AS n FROM account_journal WHERE description = 'Held bonus' GROUP BY account_id ORDER BY account_id",
  );
  // The fixture's own vip contact's account and 700: each topped up once.
  expect(moves.map((r) => Number(r.n))).toEqual([1, 1]);
});

test('a run whose plan another call took over (its hold lapsed) stops before its next step', { timeout: 60_000 }, async () => {
  const base = manyContacts(6, () => ({ tags: ['vip'] }));
  const accounts = Array.from({ length: 6 }, (_, i) => ({ id: 800 + i, contact_id: 1000 + i, currency: 'USD', amount: 0 }));
  let w: Awaited<ReturnType<typeof startMcp>> | undefined;
  let calls = 0;
  const wrap = (b: Backend): Backend => ({
    async call(m, p, o) {
      if (m === 'addFundsToContactAccount' && ++calls === 2) {
        // As if this run stalled past its hold and another call took the plan: the run finds out within a renewal (5 s).
        w!.state.db.prepare("UPDATE bulk_plans SET runner = 'another', held_until_ms = ?").run(Date.now() + 60_000);
        await new Promise((resolve) => setTimeout(resolve, 5_500));
      }
      return b.call(m, p, o);
    },
    close: () => b.close(),
  });
  w = await startMcp({
    fixture: { ...base, accounts: [...(base.accounts as unknown[]), ...accounts] },
    wrap,
    client: { elicitation: false },
  });
  const action = { type: 'deposit', currency: 'USD', amount: 500, description: 'Taken bonus' };
  const preview = await w.call('previewBulk', { selection: { bot_id: 10, tags: ['vip'] }, action });
  const planId = (preview.structuredContent as { data: { plan_id: string } }).data.plan_id;
  const run = await w.call('runBulk', { plan_id: planId });
  expect(run.structuredContent).toMatchObject({
    data: { done: 2 },
    warnings: [expect.stringMatching(/^Another runBulk call took this plan over/)],
  });
  const moves = queryRows<{ n: number }>(w.store, "SELECT count(*) AS n FROM account_journal WHERE description = 'Taken bonus'");
  expect(Number(moves[0]!.n)).toBe(2);
});
