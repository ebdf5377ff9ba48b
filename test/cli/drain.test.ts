/**
 * The probes and the drain of both HTTP servers through the built CLI (issue 49): `/livez`,
 * `/readyz`, `/healthz` unauthenticated on `serve` and `mcp --http`; on SIGTERM, readiness fails
 * at once, new requests get 503 with Retry-After in the server's own error shape, a request in
 * hand (a money move whose body was still being sent) gets its whole answer and moves the money
 * once, and the process exits 0; with `--drain-timeout 1`, a request that never ends is cut.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { cliEnv, spawnAnnounced, spawnServe, type Announced } from '../helpers/cli.js';
import {
  bulkFixture,
  exited,
  get,
  heldApiTopUp,
  heldResult,
  originOf,
  previewDeposit,
  send,
  session2025,
  sigterm,
  toolCall2025,
} from '../helpers/drain.js';
import { stop } from '../helpers/temp.js';
import { seedDb } from '../helpers/world.js';
import { connectHttp } from '../mcp/clients.js';
import { mcpFixture } from '../mcp/harness.js';

const MCP_URL = /(http:\/\/\S+\/mcp)\b/;
const TOKEN = 'drain-test-token';

let db: string;
const running: Announced[] = [];
beforeEach(() => {
  db = seedDb(mcpFixture());
});
afterEach(async () => {
  for (const r of running.splice(0)) await stop(r.proc);
});

async function started(p: Promise<Announced>): Promise<Announced> {
  const a = await p;
  running.push(a);
  return a;
}

const serve = (...more: string[]) => started(spawnServe(['--db', db, ...more]));
const mcpHttp = (...more: string[]) =>
  started(spawnAnnounced(['mcp', '--http', '--port', '0', '--db', db, ...more], MCP_URL, cliEnv({ WORKSPACE_MCP_TOKEN: TOKEN })));

async function probesAnswer(origin: string): Promise<void> {
  const live = await get(`${origin}/livez`);
  expect([live.status, JSON.parse(live.text)]).toEqual([200, { status: 'ok' }]);
  const ready = await get(`${origin}/readyz`);
  expect([ready.status, JSON.parse(ready.text)]).toEqual([200, { status: 'ok' }]);
  const health = await get(`${origin}/healthz`);
  expect(health.status).toBe(200);
  expect(health.headers['content-type']).toBe('application/json');
  const body = JSON.parse(health.text);
  expect(Object.keys(body).sort()).toEqual(['draining', 'status', 'uptime_s', 'version']);
  expect(body).toMatchObject({ status: 'ok', draining: false });
  expect(Number.isInteger(body.uptime_s)).toBe(true);
  expect(body.version).toMatch(/^\d+\.\d+\.\d+/);
  // Nothing of where the data is or whose it is.
  for (const secret of [db, 'workspace.db', 'alice-key', TOKEN, 'Alice']) expect(health.text).not.toContain(secret);
}

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};
const MCP_HEADERS = {
  Authorization: `Bearer ${TOKEN}`,
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
};

/** Account 500's balance (minor units) read by a new server on the database: 1250 when 2.50 was moved onto 10.00 once. */
async function balanceAfter(): Promise<number> {
  const again = await serve();
  const accounts = await get(`${again.url}/getContactAccounts?contact_id=100`, {
    Authorization: 'Bearer alice-key',
    Accept: 'application/json',
  });
  return JSON.parse(accounts.text).data.find((a: { id: number }) => a.id === 500).amount;
}

describe('probes', () => {
  test('serve: /livez, /readyz, /healthz with no key, JSON and nothing of anyone', async () => {
    const s = await serve();
    await probesAnswer(originOf(s.url));
  });

  test('mcp --http: the probes with no token; the Host check still comes first', async () => {
    const m = await mcpHttp();
    const origin = originOf(m.url);
    await probesAnswer(origin);
    const foreign = await get(`${origin}/healthz`, { Host: 'evil.example' });
    expect(foreign.status).toBe(403);
  });
});

describe('the drain', () => {
  test('serve: a money move whose body is still coming is answered whole, new requests get 503, exit 0', async () => {
    const s = await serve();
    const origin = originOf(s.url);
    const move = heldApiTopUp(s.url);
    const { t0, exit, readyAt } = await sigterm(s);
    const health = JSON.parse((await get(`${origin}/healthz`)).text);
    expect(health).toMatchObject({ status: 'draining', draining: true });
    expect((await get(`${origin}/livez`)).status).toBe(200);
    const refused = await get(`${s.url}/getMe`, { Authorization: 'Bearer alice-key', Accept: 'application/json' });
    expect(refused.status).toBe(503);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(JSON.parse(refused.text)).toEqual({ message: expect.stringMatching(/shutting down/) });
    move.finish();
    const moved = await move.answer;
    const answeredAt = Date.now() - t0;
    expect(moved.status, moved.text).toBe(200);
    expect(JSON.parse(moved.text).data.amount).toBe(1250);
    const { code, ms } = await exit;
    expect(code).toBe(0);
    // The timeline the report quotes.
    console.info(`serve drain: readyz 503 by ${readyAt} ms, move answered at ${answeredAt} ms, exit 0 at ${ms} ms`);
    expect(await balanceAfter()).toBe(1250);
  });

  test('mcp --http: a top-up in hand is answered, new requests get the JSON-RPC 503, the session stream ends, exit 0', async () => {
    const m = await mcpHttp();
    const headers = await session2025(m.url, { Authorization: `Bearer ${TOKEN}` });
    const stream = send(m.url, 'GET', { ...headers, Accept: 'text/event-stream' });
    const call = toolCall2025(2, 'addFundsToContactAccount', {
      account_id: 500,
      amount: 250,
      description: 'drain',
      idempotency_key: 'drain-1',
    });
    const move = send(m.url, 'POST', headers, call, true);
    const { t0, exit, readyAt } = await sigterm(m);
    const refused = await send(m.url, 'POST', MCP_HEADERS, JSON.stringify(INIT)).answer;
    expect(refused.status).toBe(503);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(JSON.parse(refused.text)).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
    const { result, answeredAt } = await heldResult(move, t0);
    expect(JSON.stringify(result.structuredContent)).toContain('1250');
    // The session's GET stream was ended by the drain (its answer is whole).
    expect((await stream.answer).status).toBe(200);
    const { code, ms } = await exit;
    expect(code).toBe(0);
    console.info(`mcp --http drain: readyz 503 by ${readyAt} ms, top-up answered at ${answeredAt} ms, exit 0 at ${ms} ms`);
    expect(await balanceAfter()).toBe(1250);
  });

  test('--drain-timeout 1: a body that never ends and a session stream held open, and still exit 0 within ~2 s', async () => {
    const m = await mcpHttp('--drain-timeout', '1');
    const headers = await session2025(m.url, { Authorization: `Bearer ${TOKEN}` });
    const stream = send(m.url, 'GET', { ...headers, Accept: 'text/event-stream' });
    const stuck = send(m.url, 'POST', headers, JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }), true);
    stuck.answer.catch(() => undefined);
    const { code, ms } = await (await sigterm(m)).exit;
    await stream.answer.catch(() => undefined);
    expect(code).toBe(0);
    expect(ms).toBeGreaterThanOrEqual(900);
    expect(ms).toBeLessThan(2500);
    console.info(`--drain-timeout 1: exit 0 at ${ms} ms with a body never finished`);
  });

  test('serve --drain-timeout 1: a half-sent body is cut after a second; a second SIGTERM exits at once', async () => {
    const s = await serve('--drain-timeout', '1');
    const half = send(`${s.url}/getMe`, 'POST', { Authorization: 'Bearer alice-key', 'Content-Type': 'application/json' }, '{}', true);
    half.answer.catch(() => undefined);
    const { code, ms } = await (await sigterm(s)).exit;
    expect(code).toBe(0);
    expect(ms).toBeLessThan(2500);
    const again = await serve();
    const held = send(`${again.url}/getMe`, 'POST', { Authorization: 'Bearer alice-key', 'Content-Type': 'application/json' }, '{}', true);
    held.answer.catch(() => undefined);
    const second = await sigterm(again);
    again.proc.kill('SIGTERM');
    const out = await second.exit;
    expect(out.code).toBe(1);
    expect(out.ms).toBeLessThan(1000);
  });

  test('mcp --http: a bulk run in hand stops between its steps and answers its progress; runBulk on a new server goes on', async () => {
    const n = 300;
    db = seedDb(bulkFixture(n));
    const bulkServer = () => started(spawnAnnounced(['mcp', '--http', '--port', '0', '--db', db], MCP_URL));
    const first = await bulkServer();
    const c1 = await connectHttp('2025-11-25', first.url);
    c1.answer(() => ({ action: 'accept', content: { confirm: true } }));
    const planId = await previewDeposit(c1, 'Drain bonus');
    const exit = exited(first, Date.now());
    let signalled = false;
    const run = await c1.callTool(
      { name: 'runBulk', arguments: { plan_id: planId } },
      { onprogress: (p) => void (p.progress >= 20 && !signalled && ((signalled = true), first.proc.kill('SIGTERM'))), timeout: 60_000 },
    );
    const stopped = (run.structuredContent as any).data;
    expect(stopped.done).toBeGreaterThanOrEqual(20);
    expect(stopped.remaining).toBeGreaterThan(0);
    expect(JSON.stringify(run.structuredContent)).toMatch(/shutting down: call runBulk again/);
    expect((await exit).code).toBe(0);
    await c1.close().catch(() => undefined);
    const c2 = await connectHttp('2025-11-25', (await bulkServer()).url);
    c2.answer(() => ({ action: 'accept', content: { confirm: true } }));
    const rest = await c2.callTool({ name: 'runBulk', arguments: { plan_id: planId } }, { timeout: 60_000 });
    await c2.close();
    // Every step once: Ann and the n contacts, none failed.
    expect((rest.structuredContent as any).data).toMatchObject({ done: n + 1, failed: 0, remaining: 0 });
    console.info(`bulk drain: stopped at ${stopped.done} of ${n + 1} steps, the rest done by runBulk on a new server`);
  }, 90_000);

  test('--drain-timeout is refused out of range, and without --http', async () => {
    const { runCli } = await import('../helpers/cli.js');
    expect(runCli(['serve', '--drain-timeout', 'x']).status).toBe(2);
    expect(runCli(['mcp', '--drain-timeout', '5']).stderr).toMatch(/--drain-timeout applies to --http only/);
  });
});
