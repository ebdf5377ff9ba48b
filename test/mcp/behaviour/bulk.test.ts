/**
 * Bulk actions on a segment (issue 32): previewBulk plans and changes nothing; runBulk, once
 * the person confirmed the whole plan, does each contact's step exactly once, however often it
 * is called (a second run does nothing again), after a cancel or a lost answer too; a declined
 * plan moves nothing; without a way to ask, a plan over the money caps or any message plan is
 * refused; a message plan skips the unsubscribed. On every backend and both protocol eras.
 */
import { expect, test } from 'vitest';
import type { Backend } from '../../../src/api/backend.js';
import { dumpStore, queryRows } from '../../helpers/store.js';
import { firstJson, manyContacts, useMcp, type McpWorld } from '../harness.js';

const startMcp = useMcp();

/**
 * Alice's bot 10: Ann (100, vip, USD 500 holding 1000) and contacts 1000-1007; 1000-1005 are
 * vip, 1001 unsubscribed, 1002 has no account, 1004's account is blocked; accounts 600+i hold 100.
 */
function segmentWorld() {
  const f = manyContacts(8, (i) => ({ tags: i < 6 ? ['vip'] : [], unsubscribed_at: i === 1 ? '2026-03-01T00:00:00Z' : null }));
  const accounts = [0, 1, 3, 4, 5, 6].map((i) => ({
    id: 600 + i,
    contact_id: 1000 + i,
    currency: 'USD',
    amount: 100,
    ...(i === 4 ? { blocked: true } : {}),
  }));
  return { ...f, accounts: [...(f.accounts as unknown[]), ...accounts] };
}

const VIP_ACCOUNTS = [500, 600, 601, 603, 604, 605];
const BONUS = { type: 'deposit', currency: 'USD', amount: 500, description: 'VIP bonus' };
const accept = () => ({ action: 'accept' as const, content: { confirm: true } });

function balances(w: McpWorld): Record<number, number> {
  const rows = queryRows<{ id: number; amount: number }>(w.store, 'SELECT id, amount FROM contact_accounts ORDER BY id');
  return Object.fromEntries(rows.map((r) => [Number(r.id), Number(r.amount)]));
}

/** The journal entries of `description`, by account. */
function journal(w: McpWorld, description: string): Record<number, number> {
  const rows = queryRows<{ account_id: number; n: number }>(
    w.store,
    'SELECT account_id, count(*) AS n FROM account_journal WHERE description = ? GROUP BY account_id ORDER BY account_id',
    [description],
  );
  return Object.fromEntries(rows.map((r) => [Number(r.account_id), Number(r.n)]));
}

/** A backend whose calls of `method` each take `ms` longer. */
function slowed(method: string, ms: number) {
  return (b: Backend): Backend => ({
    call: async (m, p, o) => {
      if (m === method) await new Promise((resolve) => setTimeout(resolve, ms));
      return b.call(m, p, o);
    },
    close: () => b.close(),
  });
}

async function preview(w: McpWorld, args: Record<string, unknown>) {
  const r = await w.call('previewBulk', args);
  expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
  return (r.structuredContent as { data: any }).data;
}

async function run(w: McpWorld, planId: string) {
  const r = await w.call('runBulk', { plan_id: planId });
  return { r, data: r.isError ? undefined : (r.structuredContent as { data: any }).data };
}

/** Every outcome of a plan, through its resource. */
async function outcomes(w: McpWorld, planId: string): Promise<any> {
  const res = await w.client.readResource({ uri: `workspace://bulk/${planId}` });
  return JSON.parse((res.contents[0] as { text: string }).text);
}

test('preview fixes the segment and checks each contact, changing nothing', async () => {
  const world = await startMcp({ fixture: segmentWorld() });
  expect(world.client.getInstructions()).toMatch(/use previewBulk, then runBulk with its plan_id/);
  const before = dumpStore(world.store);
  const plan = await preview(world, { selection: { bot_id: 10, tags: ['vip'] }, action: BONUS });
  expect(plan).toMatchObject({ count: 6, total: 3000, total_note: '30.00 USD', currency: 'USD' });
  expect(plan.skipped).toEqual([{ contact_id: 1002, reason: 'no USD account (open_missing_accounts opens one)' }]);
  expect(plan.sample.map((c: any) => c.id)).toEqual([100, 1000, 1001, 1003, 1004]);
  expect(Date.parse(plan.expires_at)).toBeGreaterThan(Date.now());
  expect(dumpStore(world.store)).toBe(before);
  // Every given part must hold: subscribed vips created in February, and a withdraw checks the balance and blocks.
  const narrow = await preview(world, {
    selection: { bot_id: 10, tags: ['vip'], subscribed_only: true, date_from: Date.parse('2026-02-01T00:00:00Z') / 1000 },
    action: { ...BONUS, type: 'withdraw', amount: 200 },
  });
  expect(narrow.count).toBe(0);
  expect(narrow.skipped).toEqual([
    { contact_id: 1000, reason: 'insufficient funds: the balance is 1.00 USD' },
    { contact_id: 1002, reason: 'no USD account' },
    { contact_id: 1003, reason: 'insufficient funds: the balance is 1.00 USD' },
    { contact_id: 1004, reason: 'account blocked' },
    { contact_id: 1005, reason: 'insufficient funds: the balance is 1.00 USD' },
  ]);
  // An action's fields are checked by the rules of the method it calls.
  const bad = await world.call('previewBulk', { selection: { tags: ['vip'] }, action: { ...BONUS, amount: 0, name: 'x' } });
  expect(firstJson(bad)).toMatchObject({
    status: 422,
    errors: { 'action.amount': ['The amount field must be between 1 and 100000000000000.'], 'action.name': [expect.any(String)] },
  });
  expect(dumpStore(world.store)).toBe(before);
});

test('a confirmed run tops up each contact once, with progress; a second run does nothing again', async () => {
  const world = await startMcp({ fixture: segmentWorld() });
  const questions: string[] = [];
  world.client.answer((q) => {
    questions.push(q.message);
    return accept();
  });
  const plan = await preview(world, { selection: { bot_id: 10, tags: ['vip'] }, action: BONUS, open_missing_accounts: true });
  expect(plan.count).toBe(7);
  const start = balances(world);
  const progress: number[] = [];
  const r = await world.client.callTool(
    { name: 'runBulk', arguments: { plan_id: plan.plan_id } },
    { onprogress: (p) => progress.push(p.progress) },
  );
  expect((r.structuredContent as any).data).toEqual({
    plan_id: plan.plan_id,
    done: 7,
    failed: 0,
    skipped: 0,
    remaining: 0,
    report: `workspace://bulk/${plan.plan_id}`,
  });
  // (2026-07-28: the retry that carries the person's answer may repeat a progress value already sent.)
  expect([...new Set(progress)]).toEqual([1, 2, 3, 4, 5, 6, 7]);
  expect(questions).toHaveLength(1);
  expect(questions[0]).toContain('Top up the USD accounts of 7 contacts by 5.00 USD each: 35.00 USD in all ("VIP bonus")');
  const after = balances(world);
  for (const id of VIP_ACCOUNTS) expect(after[id]).toBe(start[id]! + 500);
  const opened = queryRows<{ id: number }>(world.store, 'SELECT id FROM contact_accounts WHERE contact_id = 1002');
  expect(opened).toHaveLength(1);
  expect(after[Number(opened[0]!.id)]).toBe(500);
  const entries = journal(world, 'VIP bonus');
  expect(Object.values(entries)).toEqual(Array(7).fill(1));

  const again = await run(world, plan.plan_id);
  expect(again.data).toMatchObject({ done: 7, remaining: 0 });
  expect(questions).toHaveLength(1);
  expect(balances(world)).toEqual(after);
  expect(journal(world, 'VIP bonus')).toEqual(entries);

  const report = await outcomes(world, plan.plan_id);
  expect(report.counts).toEqual({ done: 7 });
  expect(report.data.map((s: any) => [s.contact_id, s.status])).toEqual(
    [100, 1000, 1001, 1002, 1003, 1004, 1005].map((id) => [id, 'done']),
  );
  expect(report.data[0]).toMatchObject({ account_id: 500, before: 1000, after: 1500 });
  // The audit trail holds the plan's confirmation and each money step.
  const audit = await world.client.readResource({ uri: 'workspace://audit?tool=runBulk' });
  const planEntries = JSON.parse((audit.contents[0] as { text: string }).text).data;
  expect(planEntries.map((e: any) => e.confirmation?.how)).toEqual([
    `elicitation accepted (bulk plan ${plan.plan_id})`,
    'elicitation asked, no answer yet',
  ]);
  expect(planEntries[0]).toMatchObject({ status: 200, arguments: { plan_id: plan.plan_id, count: 7, total: 3500 } });
  const steps = await world.client.readResource({ uri: 'workspace://audit?tool=addFundsToContactAccount' });
  const stepEntries = JSON.parse((steps.contents[0] as { text: string }).text).data;
  expect(stepEntries).toHaveLength(7);
  expect(stepEntries[0].idempotency_key).toMatch(new RegExp(`^bulk ${plan.plan_id} \\d+$`));
});

test('a declined plan moves nothing, and its first answer stands', async () => {
  const world = await startMcp({ fixture: segmentWorld() });
  const plan = await preview(world, { selection: { bot_id: 10, tags: ['vip'] }, action: BONUS });
  const start = balances(world);
  world.client.answer(() => ({ action: 'decline' }));
  const declined = await run(world, plan.plan_id);
  expect(firstJson(declined.r)).toMatchObject({ status: 422, code: 'confirmation_declined' });
  world.client.answer(accept);
  const again = await run(world, plan.plan_id);
  expect(firstJson(again.r)).toMatchObject({ status: 422, code: 'confirmation_declined' });
  expect(balances(world)).toEqual(start);
  expect(journal(world, 'VIP bonus')).toEqual({});
});

test('without a way to ask: a plan over the caps and a message plan are refused, changing nothing; one under the caps runs', async () => {
  const world = await startMcp({ fixture: segmentWorld(), client: { elicitation: false }, money: { maxAmount: { '*': '20.00' } } });
  const start = balances(world);
  const big = await preview(world, { selection: { bot_id: 10, tags: ['vip'] }, action: BONUS });
  const refused = await run(world, big.plan_id);
  expect(firstJson(refused.r)).toMatchObject({ status: 422, code: 'confirmation_required' });
  expect(firstJson(refused.r).message).toContain('30.00 USD in all ("VIP bonus"). That is over this server\'s money caps');
  const message = await preview(world, {
    selection: { bot_id: 10, tags: ['vip'] },
    action: { type: 'sendMessage', text: 'Shop opens at 9' },
  });
  expect(firstJson((await run(world, message.plan_id)).r)).toMatchObject({ status: 422, code: 'confirmation_required' });
  expect(queryRows(world.store, "SELECT id FROM conversation WHERE direction = 'out'")).toEqual([]);
  expect(balances(world)).toEqual(start);
  // 6 x 2.00 = 12.00, under the cap of 20.00: each step passes the caps by itself.
  const small = await preview(world, { selection: { bot_id: 10, tags: ['vip'] }, action: { ...BONUS, amount: 200 } });
  expect((await run(world, small.plan_id)).data).toMatchObject({ done: 6, failed: 0, remaining: 0 });
  for (const id of VIP_ACCOUNTS) expect(balances(world)[id]).toBe(start[id]! + 200);
});

test('a message plan skips the unsubscribed and reaches each other person once', async () => {
  const world = await startMcp({ fixture: segmentWorld() });
  world.client.answer((q) => {
    expect(q.message).toContain('Send a message to 6 people: "Shop opens at 9". It cannot be taken back.');
    return accept();
  });
  const plan = await preview(world, { selection: { bot_id: 10, tags: ['vip'] }, action: { type: 'sendMessage', text: 'Shop opens at 9' } });
  expect(plan.skipped).toEqual([{ contact_id: 1001, reason: 'unsubscribed' }]);
  expect((await run(world, plan.plan_id)).data).toMatchObject({ done: 6, skipped: 1, remaining: 0 });
  expect((await run(world, plan.plan_id)).data).toMatchObject({ done: 6, skipped: 1, remaining: 0 });
  const sent = queryRows<{ contact_id: number }>(
    world.store,
    "SELECT contact_id FROM conversation WHERE direction = 'out' AND text = 'Shop opens at 9' ORDER BY contact_id",
  );
  expect(sent.map((s) => Number(s.contact_id))).toEqual([100, 1000, 1002, 1003, 1004, 1005]);
});

test('a rate limit pauses the run; a cancel stops it cleanly; the next run goes on and pays no one twice', async () => {
  const cancel = new AbortController();
  let moves = 0;
  const world = await startMcp({
    fixture: segmentWorld(),
    wrap: (b): Backend => ({
      call: async (m, p, o) => {
        if (m !== 'addFundsToContactAccount') return b.call(m, p, o);
        // The first move is rate limited (the run pauses); the third is the last before the cancel.
        if (++moves === 1) return { status: 429, headers: { 'retry-after': '1' }, body: { message: 'Too Many Attempts.' } };
        if (moves === 4) {
          // The client cancels while this move is under way; the move goes on (a step once begun finishes).
          cancel.abort();
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        return b.call(m, p, o);
      },
      close: () => b.close(),
    }),
  });
  world.client.answer(accept);
  const plan = await preview(world, { selection: { bot_id: 10, tags: ['vip'] }, action: BONUS });
  const start = balances(world);
  const paused = await world.call('runBulk', { plan_id: plan.plan_id });
  expect((paused.structuredContent as any).data).toMatchObject({ done: 0, remaining: 6 });
  expect((paused.structuredContent as any).warnings).toEqual([expect.stringMatching(/^Paused: addFundsToContactAccount was rate limited/)]);
  expect(balances(world)).toEqual(start);
  // Confirmed once, the plan is not asked about again: this call is the client's own request, cancellable in either era.
  await expect(
    world.client.callTool({ name: 'runBulk', arguments: { plan_id: plan.plan_id } }, { signal: cancel.signal }),
  ).rejects.toThrow();
  // The run ends at the next step; then nothing is left under way.
  let report: any;
  await expect
    .poll(async () => {
      report = await outcomes(world, plan.plan_id);
      return [report.counts.running ?? 0, report.plan.confirmation?.accepted];
    })
    .toEqual([0, true]);
  // The move under way when the call was cancelled finished; none after it began.
  expect(report.counts.done).toBe(3);
  expect(report.counts.pending).toBeGreaterThan(0);
  // The cancelled call lets go of the plan as it ends; until then another call says a run is under way.
  let later = await run(world, plan.plan_id);
  for (let i = 0; i < 50 && (later.r.structuredContent as any)?.warnings?.[0]?.startsWith('Another runBulk call'); i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    later = await run(world, plan.plan_id);
  }
  expect(later.data).toMatchObject({ done: 6, remaining: 0 });
  for (const id of VIP_ACCOUNTS) expect(balances(world)[id]).toBe(start[id]! + 500);
  expect(Object.values(journal(world, 'VIP bonus'))).toEqual(Array(6).fill(1));
});

test('a move whose answer was lost is read back before it is tried again: made (done, not moved again) or not made (moved once)', async () => {
  let lose: 'after' | 'before' | undefined;
  const world = await startMcp({
    fixture: segmentWorld(),
    wrap: (b): Backend => ({
      call: async (m, p, o) => {
        if (m === 'addFundsToContactAccount' && lose && (p.account_id === 600 || p.account_id === 601)) {
          // 600: the move is made and its answer lost; 601: lost before it reached the API.
          if (p.account_id === 600) await b.call(m, p, o);
          return { status: 504, headers: {}, body: { message: 'lost', error: 'lost', code: 'outcome_unknown' } };
        }
        return b.call(m, p, o);
      },
      close: () => b.close(),
    }),
  });
  world.client.answer(accept);
  const plan = await preview(world, { selection: { bot_id: 10, tags: ['vip'] }, action: BONUS });
  const start = balances(world);
  lose = 'after';
  const first = await run(world, plan.plan_id);
  expect(first.data).toMatchObject({ done: 4, remaining: 2 });
  lose = undefined;
  const second = await run(world, plan.plan_id);
  expect(second.data).toMatchObject({ done: 6, remaining: 0 });
  for (const id of VIP_ACCOUNTS) expect(balances(world)[id]).toBe(start[id]! + 500);
  expect(Object.values(journal(world, 'VIP bonus'))).toEqual(Array(6).fill(1));
  const report = await outcomes(world, plan.plan_id);
  expect(report.data.find((s: any) => s.contact_id === 1000)).toMatchObject({ status: 'done', verified: true });
  expect(report.data.find((s: any) => s.contact_id === 1001)).toMatchObject({ status: 'done', after: 600 });
});

test('workspace://bulk/{plan_id} pages the outcomes by contact id, within the result budget; an unknown plan is not found', async () => {
  const world = await startMcp({ fixture: segmentWorld(), maxResultChars: 5000 });
  const plan = await preview(world, { selection: { bot_id: 10 }, action: { type: 'setVariable', name: 'note', value: 'x'.repeat(1500) } });
  const { resourceTemplates } = await world.client.listResourceTemplates();
  expect(resourceTemplates.map((t) => t.uriTemplate)).toContain('workspace://bulk/{plan_id}{?after,limit}');
  const ids: number[] = [];
  let uri: string | null = `workspace://bulk/${plan.plan_id}?limit=4`;
  let pages = 0;
  while (uri) {
    const res = await world.client.readResource({ uri });
    const body = JSON.parse((res.contents[0] as { text: string }).text);
    expect(body.plan).toMatchObject({ id: plan.plan_id, count: 11, action: { type: 'setVariable', name: 'note' } });
    ids.push(...body.data.map((s: any) => s.contact_id));
    uri = body.next;
    pages++;
  }
  expect(ids).toEqual([100, 101, 102, ...Array.from({ length: 8 }, (_, i) => 1000 + i)]);
  expect(pages).toBeGreaterThanOrEqual(3);
  await expect(world.client.readResource({ uri: 'workspace://bulk/no-such-plan' })).rejects.toThrow();
  await expect(world.client.readResource({ uri: `workspace://bulk/${plan.plan_id}?limit=0` })).rejects.toThrow(/limit/);
});

test('two runBulk calls at once on one plan: one carries it out, the other says so; each contact is paid once', async () => {
  // Each move takes a moment, so the two calls overlap.
  const world = await startMcp({
    fixture: segmentWorld(),
    wrap: slowed('addFundsToContactAccount', 30),
  });
  world.client.answer(accept);
  const plan = await preview(world, { selection: { bot_id: 10, tags: ['vip'] }, action: BONUS });
  const start = balances(world);
  const both = await Promise.all([run(world, plan.plan_id), run(world, plan.plan_id)]);
  const warned = both.filter((b) => (b.r.structuredContent as any)?.warnings?.[0]?.startsWith('Another runBulk call'));
  expect(warned).toHaveLength(1);
  expect((await run(world, plan.plan_id)).data).toMatchObject({ done: 6, remaining: 0 });
  for (const id of VIP_ACCOUNTS) expect(balances(world)[id]).toBe(start[id]! + 500);
  expect(Object.values(journal(world, 'VIP bonus'))).toEqual(Array(6).fill(1));
});

test('a long plan is carried out over several calls: each answers with the progress once its time is up, and the next goes on', async () => {
  const world = await startMcp({
    fixture: segmentWorld(),
    bulkCallMs: 50,
    wrap: slowed('addFundsToContactAccount', 30),
  });
  world.client.answer(accept);
  const plan = await preview(world, { selection: { bot_id: 10, tags: ['vip'] }, action: BONUS });
  const start = balances(world);
  const answers: any[] = [];
  for (let i = 0; i < 20; i++) {
    const r = await world.call('runBulk', { plan_id: plan.plan_id });
    answers.push(r.structuredContent);
    if ((r.structuredContent as any).data.remaining === 0) break;
  }
  expect(answers.length).toBeGreaterThan(1);
  expect(answers[0].data.remaining).toBeGreaterThan(0);
  expect(answers[0].warnings).toEqual([expect.stringMatching(/^Still going: call runBulk again/)]);
  expect(answers.at(-1).data).toMatchObject({ done: 6, remaining: 0 });
  for (const id of VIP_ACCOUNTS) expect(balances(world)[id]).toBe(start[id]! + 500);
  expect(Object.values(journal(world, 'VIP bonus'))).toEqual(Array(6).fill(1));
});

test('a money preview that runs out of time leaves the accounts it did not read to be checked as their steps run', async () => {
  const world = await startMcp({
    fixture: segmentWorld(),
    bulkCallMs: 60,
    wrap: slowed('getContactAccounts', 25),
  });
  world.client.answer(accept);
  const r = await world.call('previewBulk', { selection: { bot_id: 10, tags: ['vip'] }, action: BONUS });
  const body = r.structuredContent as any;
  expect(body.data.unchecked).toBeGreaterThan(0);
  expect(body.data.count).toBe(7); // 1002 (no account) among them, unchecked
  expect(body.data.total).toBe(3500);
  expect(body.warnings).toEqual([expect.stringMatching(/^The accounts of \d+ of the 7 contacts were not read in time/)]);
  const start = balances(world);
  let data: any;
  for (let i = 0; i < 20 && data?.remaining !== 0; i++) data = (await run(world, body.data.plan_id)).data;
  expect(data).toMatchObject({ done: 6, skipped: 1, remaining: 0 });
  for (const id of VIP_ACCOUNTS) expect(balances(world)[id]).toBe(start[id]! + 500);
  const report = await outcomes(world, body.data.plan_id);
  expect(report.data.find((s: any) => s.contact_id === 1002)).toMatchObject({ status: 'skipped', reason: 'no USD account' });
});
