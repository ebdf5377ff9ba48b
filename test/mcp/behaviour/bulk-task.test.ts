/**
 * runBulk as an MCP task (issue 32; protocol revision 2025-11-25, the SDK's v1 client and its
 * experimental tasks API): the person is asked once in the call, the call answers at once with
 * the task, and the whole plan is carried out behind it however many of runBulk's own time
 * limits it takes; tasks/get shows it, tasks/result gives runBulk's answer, tasks/cancel stops
 * it between steps and a later runBulk goes on; a declined plan makes no task work. On every
 * backend. A 2026-07-28 client is offered no tasks (the revision moved them out of the core).
 */
import { afterEach, expect, test } from 'vitest';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport as V1InMemory } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { Backend } from '../../../src/api/backend.js';
import { queryRows } from '../../helpers/store.js';
import { connectInMemory } from '../clients.js';
import { manyContacts, useMcp, type McpWorld } from '../harness.js';

const startMcp = useMcp();
const closing: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of closing.splice(0).reverse()) await c();
});

const N = 12;
const BONUS = { type: 'deposit', currency: 'USD', amount: 500, description: 'Task bonus' };

/** Bot 10 of Alice with N more contacts tagged vip, each with a USD account (700+i) holding 100. */
function world() {
  const f = manyContacts(N, () => ({ tags: ['vip'] }));
  const accounts = Array.from({ length: N }, (_, i) => ({ id: 700 + i, contact_id: 1000 + i, currency: 'USD', amount: 100 }));
  return { ...f, accounts: [...(f.accounts as unknown[]), ...accounts] };
}

/** A backend whose top-ups each take `ms` longer. */
const slowed =
  (ms: number) =>
  (b: Backend): Backend => ({
    call: async (m, p, o) => {
      if (m === 'addFundsToContactAccount') await new Promise((resolve) => setTimeout(resolve, ms));
      return b.call(m, p, o);
    },
    close: () => b.close(),
  });

/** A 2025-11-25 client of the SDK's v1 line on the world's server, answering each question with `answer`. */
async function v1(w: McpWorld, answer: 'accept' | 'decline'): Promise<{ client: V1Client; asked: string[] }> {
  const [clientSide, serverSide] = V1InMemory.createLinkedPair();
  const served = serveStdio((rc) => w.factory(rc), { transport: serverSide as never });
  const client = new V1Client({ name: 'tasks-test', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
  const asked: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, (req) => {
    asked.push(req.params.message);
    return answer === 'accept' ? { action: 'accept', content: { confirm: true } } : { action: 'decline' };
  });
  await client.connect(clientSide);
  closing.push(() => client.close().then(() => served.close()));
  return { client, asked };
}

async function plan(w: McpWorld): Promise<string> {
  const r = await w.call('previewBulk', { selection: { bot_id: 10, tags: ['vip'] }, action: BONUS });
  return (r.structuredContent as { data: { plan_id: string } }).data.plan_id;
}

function journal(w: McpWorld): number[] {
  const rows = queryRows<{ account_id: number; n: number }>(
    w.store,
    "SELECT account_id, count(*) AS n FROM account_journal WHERE description = 'Task bonus' AND account_id >= 700 GROUP BY account_id ORDER BY account_id",
  );
  return rows.map((r) => Number(r.n));
}

function balances(w: McpWorld): number[] {
  const rows = queryRows<{ amount: number }>(w.store, 'SELECT amount FROM contact_accounts WHERE id >= 700 ORDER BY id');
  return rows.map((r) => Number(r.amount));
}

/** Every message of a task-augmented runBulk, in order. */
async function runAsTask(client: V1Client, planId: string) {
  const seen: Array<{ type: string; [k: string]: any }> = [];
  const stream = client.experimental.tasks.callToolStream({ name: 'runBulk', arguments: { plan_id: planId } }, CallToolResultSchema, {
    task: { ttl: 120_000 },
  });
  for await (const m of stream) seen.push(m as never);
  return seen;
}

test('the plan as a task: asked once, answered at once with the task, carried out whole beyond one call\u2019s time; its result is runBulk\u2019s', async () => {
  // 12 steps of 40 ms against calls of 100 ms: runBulk by itself would answer after 3 and ask to be called again.
  const w = await startMcp({ fixture: world(), wrap: slowed(40), bulkCallMs: 100 });
  const { client, asked } = await v1(w, 'accept');
  expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
  const tools = (await client.listTools()).tools;
  expect(tools.find((t) => t.name === 'runBulk')?.execution).toEqual({ taskSupport: 'optional' });
  expect(tools.filter((t) => t.execution !== undefined).map((t) => t.name)).toEqual(['runBulk']);
  const planId = await plan(w);
  const seen = await runAsTask(client, planId);
  expect(asked).toHaveLength(1);
  expect(asked[0]).toContain(`Top up the USD accounts of ${N + 1} contacts by 5.00 USD each`);
  expect(seen[0]).toMatchObject({ type: 'taskCreated', task: { status: 'working', pollInterval: 5000 } });
  const taskId = seen[0]!.task.taskId as string;
  const last = seen.at(-1)!;
  expect(last.type).toBe('result');
  expect(last.result.structuredContent).toMatchObject({ data: { plan_id: planId, done: N + 1, failed: 0, remaining: 0 } });
  expect(last.result._meta).toEqual({ 'io.modelcontextprotocol/related-task': { taskId } });
  expect(journal(w)).toEqual(Array(N).fill(1));
  expect(balances(w)).toEqual(Array(N).fill(600));
  const got = await client.experimental.tasks.getTask(taskId);
  expect(got).toMatchObject({ taskId, status: 'completed' });
  expect((await client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).toContain(taskId);
  // Once more as a task: nothing left, nothing moved again.
  const again = await runAsTask(client, planId);
  expect(again.at(-1)!.result.structuredContent).toMatchObject({ data: { done: N + 1, remaining: 0 } });
  expect(journal(w)).toEqual(Array(N).fill(1));
  await expect(client.experimental.tasks.getTask('no-such-task')).rejects.toThrow(/Task not found/);
  await expect(client.experimental.tasks.cancelTask(taskId)).rejects.toThrow(/already ended/);
});

test('tasks/cancel stops the plan between steps; a later runBulk goes on and pays no one twice', async () => {
  const w = await startMcp({ fixture: world(), wrap: slowed(150) });
  const { client } = await v1(w, 'accept');
  const planId = await plan(w);
  const created = await client.request(
    { method: 'tools/call', params: { name: 'runBulk', arguments: { plan_id: planId }, task: { ttl: 60_000 } } },
    // The CreateTaskResult: its task.
    CallToolResultSchema.passthrough(),
  );
  const taskId = (created as unknown as { task: { taskId: string } }).task.taskId;
  while (journal(w).length < 2) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(await client.experimental.tasks.cancelTask(taskId)).toMatchObject({ taskId, status: 'cancelled' });
  const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
  const cut = (result.structuredContent as { data: { done: number; remaining: number } }).data;
  expect(cut.remaining).toBeGreaterThan(0);
  expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
  const paid = journal(w).length;
  expect(paid).toBeLessThan(N);
  const rest = await w.call('runBulk', { plan_id: planId });
  expect(rest.structuredContent).toMatchObject({ data: { done: N + 1, remaining: 0 } });
  expect(journal(w)).toEqual(Array(N).fill(1));
  expect(balances(w)).toEqual(Array(N).fill(600));
});

test('a declined plan: the task ends failed with the refusal, and nothing moves', async () => {
  const w = await startMcp({ fixture: world() });
  const { client } = await v1(w, 'decline');
  const seen = await runAsTask(client, await plan(w));
  // A tool result with isError is a failed task; this client says so without the result, which tasks/result gives.
  expect([seen[0]!.type, seen[0]!.task.status, seen.at(-1)!.type]).toEqual(['taskCreated', 'working', 'error']);
  const taskId = seen[0]!.task.taskId as string;
  expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ status: 'failed' });
  const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
  expect(result.isError).toBe(true);
  expect(JSON.parse((result.content[0] as { text: string }).text)).toMatchObject({ code: 'confirmation_declined' });
  expect(journal(w)).toEqual([]);
});

test('a tool that does not run as a task says so; a 2026-07-28 client is offered no tasks', async () => {
  const w = await startMcp({ fixture: world() });
  const { client } = await v1(w, 'accept');
  await expect(
    client.request({ method: 'tools/call', params: { name: 'getMe', arguments: {}, task: {} } }, CallToolResultSchema),
  ).rejects.toThrow(/does not run as a task/);
  const modern = await connectInMemory('2026-07-28', w.factory);
  closing.push(() => modern.close());
  expect((await modern.listTools()).tools.some((t) => 'execution' in t)).toBe(false);
});
