/**
 * The drain of `mcp --http` through the built CLI on SQLite, for what test/cli/drain.test.ts
 * leaves to the eras and backends (issue 49): a 2025-11-25 money move waiting on its question
 * when SIGTERM comes gets its answer taken and moves the money once; a 2026-07-28 money move in
 * hand is answered whole and a `subscriptions/listen` stream ends with its closing result; a
 * 2026-07-28 runBulk in hand stops between its steps and goes on, each step once, on a new
 * server; over `--remote`, the drain answers the call in hand and the `serve` behind it stays
 * up; `--remote --auth key` is not ready until the remote URL answers.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { cliEnv, spawnAnnounced, spawnServe, type Announced } from '../helpers/cli.js';
import {
  bulkFixture,
  bulkStoppedByDrain,
  get,
  heldResult,
  originOf,
  previewDeposit,
  readyzIs,
  request2026,
  rpcOf,
  send,
  session2025,
  sigterm,
  toolCall2025,
  until,
} from '../helpers/drain.js';
import { freePort } from '../helpers/postgres.js';
import { openStore, queryRows } from '../helpers/store.js';
import { stop } from '../helpers/temp.js';
import { seedDb } from '../helpers/world.js';
import { connectHttp, type McpClient } from '../mcp/clients.js';
import { mcpFixture } from '../mcp/harness.js';

const MCP_URL = /(http:\/\/\S+\/mcp)\b/;
const ALICE = { WORKSPACE_API_KEY: 'alice-key' };

const running: Announced[] = [];
const clients: McpClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  for (const r of running.splice(0)) await stop(r.proc);
});

async function started(p: Promise<Announced>): Promise<Announced> {
  const a = await p;
  running.push(a);
  return a;
}

const mcpHttp = (args: string[], env: Record<string, string> = ALICE) =>
  started(spawnAnnounced(['mcp', '--http', '--port', '0', ...args], MCP_URL, cliEnv(env)));

/** Account `id`'s balance and how many journal entries it has, read from the SQLite file. */
function ledger(db: string, id: number): { amount: number; entries: number } {
  const store = openStore(db);
  try {
    return queryRows<{ amount: number; entries: number }>(
      store,
      'SELECT (SELECT amount FROM contact_accounts WHERE id = ?) AS amount, (SELECT count(*) FROM account_journal WHERE account_id = ?) AS entries',
      [id, id],
    )[0]!;
  } finally {
    store.close();
  }
}

/** The bulk plan's accounts (700 on): each one's balance and journal entries. */
function bulkLedger(db: string): Array<{ id: number; amount: number; entries: number }> {
  const store = openStore(db);
  try {
    return queryRows(
      store,
      'SELECT a.id AS id, a.amount AS amount, (SELECT count(*) FROM account_journal j WHERE j.account_id = a.id) AS entries FROM contact_accounts a WHERE a.id >= 700',
    );
  } finally {
    store.close();
  }
}

const TOP_UP = { account_id: 500, amount: 250, description: 'drain' };

describe('2025-11-25', () => {
  test('a money move waiting on its question when SIGTERM comes: the answer is taken, the money moves once, exit 0', async () => {
    const db = seedDb(mcpFixture());
    const before = ledger(db, 500);
    // 2.50 is over the 1.00 cap a call: the move asks the person first (elicitation/create on the session).
    const m = await mcpHttp(['--db', db, '--max-amount', '1.00']);
    const c = await connectHttp('2025-11-25', m.url);
    clients.push(c);
    // The question is answered only once the drain has begun and a new request was refused.
    let drainSeen: (Awaited<ReturnType<typeof sigterm>> & { refused: number }) | undefined;
    c.answer(
      () =>
        sigterm(m).then(async (s) => {
          const refused = await send(m.url, 'POST', { 'Content-Type': 'application/json', Accept: 'application/json' }, '{}').answer;
          drainSeen = { ...s, refused: refused.status };
          return { action: 'accept', content: { confirm: true } };
        }) as never,
    );
    // With caps, the account is read first: the server then knows its holder and currency.
    expect((await c.callTool({ name: 'getContactAccounts', arguments: { contact_id: 100 } })).isError).toBeFalsy();
    const moved = await c.callTool({ name: 'addFundsToContactAccount', arguments: { ...TOP_UP, idempotency_key: 'asked-1' } });
    expect(drainSeen, JSON.stringify(moved)).toBeDefined();
    const answeredAt = Date.now() - drainSeen!.t0;
    expect(moved.isError, JSON.stringify(moved.content)).toBeFalsy();
    expect((moved.structuredContent as any).data.amount).toBe(before.amount + 250);
    expect(drainSeen!.refused).toBe(503);
    const { code, ms } = await drainSeen!.exit;
    expect(code).toBe(0);
    console.info(`2025 question in hand: readyz 503 by ${drainSeen!.readyAt} ms, move answered at ${answeredAt} ms, exit 0 at ${ms} ms`);
    expect(ledger(db, 500)).toEqual({ amount: before.amount + 250, entries: before.entries + 1 });
  });
});

describe('2026-07-28', () => {
  test('a money move in hand is answered whole, a subscriptions/listen stream ends with its closing result, exit 0', async () => {
    const db = seedDb(mcpFixture());
    const before = ledger(db, 500);
    const m = await mcpHttp(['--db', db]);
    const listen = request2026(1, 'subscriptions/listen', { notifications: { resourcesListChanged: true } });
    const stream = send(m.url, 'POST', listen.headers, listen.body);
    const call = request2026(2, 'tools/call', { name: 'addFundsToContactAccount', arguments: { ...TOP_UP, idempotency_key: 'new-1' } });
    const move = send(m.url, 'POST', call.headers, call.body, true);
    const { t0, exit, readyAt } = await sigterm(m);
    const again = request2026(3, 'tools/call', { name: 'getMe', arguments: {} });
    const refused = await send(m.url, 'POST', again.headers, again.body).answer;
    expect(refused.status).toBe(503);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    const { result, answeredAt } = await heldResult(move, t0);
    expect(result.structuredContent.data.amount).toBe(before.amount + 250);
    // The subscription ended as the spec's graceful close: its (empty) result, naming the subscription.
    const closed = await stream.answer;
    expect(closed.status).toBe(200);
    expect(rpcOf(closed)).toMatchObject({ id: 1, result: { _meta: { 'io.modelcontextprotocol/subscriptionId': expect.anything() } } });
    const { code, ms } = await exit;
    expect(code).toBe(0);
    console.info(`2026 move in hand: readyz 503 by ${readyAt} ms, move answered at ${answeredAt} ms, exit 0 at ${ms} ms`);
    expect(ledger(db, 500)).toEqual({ amount: before.amount + 250, entries: before.entries + 1 });
  });

  test('a runBulk in hand stops between its steps and answers its progress; runBulk on a new server goes on, each step once', async () => {
    const n = 120;
    const db = seedDb(bulkFixture(n));
    const seeded = new Map(bulkLedger(db).map((r) => [r.id, r.entries]));
    expect(seeded.size).toBe(n);
    const first = await mcpHttp(['--db', db]);
    const c1 = await connectHttp('2026-07-28', first.url);
    clients.push(c1);
    c1.answer(() => ({ action: 'accept', content: { confirm: true } }));
    const planId = await previewDeposit(c1, 'Drain');
    const { data: stopped, readyAt, answeredAt, code, exitAt } = await bulkStoppedByDrain(c1, first, planId, 10, n + 1);
    expect(code).toBe(0);
    console.info(
      `2026 bulk in hand: readyz 503 by ${readyAt ?? '(exited first)'} ms, runBulk answered at ${answeredAt} ms (${stopped.done} of ${n + 1} steps), exit 0 at ${exitAt} ms`,
    );
    const c2 = await connectHttp('2026-07-28', (await mcpHttp(['--db', db])).url);
    clients.push(c2);
    c2.answer(() => ({ action: 'accept', content: { confirm: true } }));
    const rest = await c2.callTool({ name: 'runBulk', arguments: { plan_id: planId } }, { timeout: 60_000 });
    expect((rest.structuredContent as any).data).toMatchObject({ done: n + 1, failed: 0, remaining: 0 });
    // Every contact's deposit once: 1.00 + 5.00 on each account, one journal entry more than seeded.
    expect(bulkLedger(db).filter((r) => r.amount !== 600 || r.entries !== seeded.get(r.id)! + 1)).toEqual([]);
  }, 60_000);
});

describe('--remote', () => {
  test('mcp --http --remote drains: the call in hand is answered through it, and the serve behind it stays up', async () => {
    const db = seedDb(mcpFixture());
    const before = ledger(db, 500);
    const upstream = await started(spawnServe(['--db', db]));
    const m = await mcpHttp(['--remote', upstream.url]);
    const headers = await session2025(m.url);
    // --remote caps money calls by default: the account is read first.
    const read = toolCall2025(1, 'getContactAccounts', { contact_id: 100 });
    expect(rpcOf(await send(m.url, 'POST', headers, read).answer).result.isError).toBeFalsy();
    const move = send(
      m.url,
      'POST',
      headers,
      toolCall2025(2, 'addFundsToContactAccount', { ...TOP_UP, idempotency_key: 'remote-1' }),
      true,
    );
    const { t0, exit, readyAt } = await sigterm(m);
    const { result, answeredAt } = await heldResult(move, t0);
    expect(result.structuredContent.data.amount).toBe(before.amount + 250);
    const { code, ms } = await exit;
    expect(code).toBe(0);
    console.info(`--remote move in hand: readyz 503 by ${readyAt} ms, move answered at ${answeredAt} ms, exit 0 at ${ms} ms`);
    // The serve behind it was never drained.
    expect((await get(`${originOf(upstream.url)}/readyz`)).status).toBe(200);
    const me = await get(`${upstream.url}/getMe`, { Authorization: 'Bearer alice-key', Accept: 'application/json' });
    expect(me.status).toBe(200);
    expect(ledger(db, 500)).toEqual({ amount: before.amount + 250, entries: before.entries + 1 });
  });

  test('--remote --auth key: /readyz answers 503 "starting" until the remote URL first answers, then 200', async () => {
    const port = await freePort();
    const m = await mcpHttp(['--remote', `http://127.0.0.1:${port}/api/v1`, '--auth', 'key'], {});
    const origin = originOf(m.url);
    const early = await get(`${origin}/readyz`);
    expect([early.status, JSON.parse(early.text)]).toEqual([503, { status: 'starting' }]);
    expect(JSON.parse((await get(`${origin}/healthz`)).text)).toMatchObject({ status: 'starting', draining: false });
    expect((await get(`${origin}/livez`)).status).toBe(200);
    await started(spawnAnnounced(['serve', '--port', String(port), '--db', seedDb(mcpFixture())], /(http:\/\/\S+\/api\/v1)/));
    await until(readyzIs(origin, 200), 10_000);
    expect(JSON.parse((await get(`${origin}/readyz`)).text)).toEqual({ status: 'ok' });
  });
});
