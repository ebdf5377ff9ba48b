/**
 * The probes and the drain of both HTTP servers through the built CLI (issue 49): `/livez`,
 * `/readyz`, `/healthz` unauthenticated on `serve` and `mcp --http`; on SIGTERM, readiness fails
 * at once, new requests get 503 with Retry-After in the server's own error shape, a request in
 * hand (a money move whose body was still being sent) gets its whole answer and moves the money
 * once, and the process exits 0; with `--drain-timeout 1`, a request that never ends is cut.
 */
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { cliEnv, spawnAnnounced, spawnServe, type Announced } from '../helpers/cli.js';
import { stop } from '../helpers/temp.js';
import { seedDb } from '../helpers/world.js';
import { connectHttp } from '../mcp/clients.js';
import { manyContacts, mcpFixture } from '../mcp/harness.js';

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

const originOf = (url: string) => new URL(url).origin;

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  text: string;
}

function answerOf(req: ClientRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    req.once('error', reject);
    req.once('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.once('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      res.once('error', reject);
    });
  });
}

/** A request of its own connection: `body` sent whole, or (`hold`) all but its last byte, which `finish()` sends. */
function send(url: string, method: string, headers: Record<string, string> = {}, body?: string, hold = false) {
  const req = request(url, {
    method,
    agent: false,
    headers: body === undefined ? headers : { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
  });
  const answer = answerOf(req);
  if (body === undefined) req.end();
  else if (!hold) req.end(body);
  else {
    req.write(body.slice(0, -1));
    req.flushHeaders();
  }
  return { req, answer, finish: () => req.end(body!.slice(-1)) };
}

const get = (url: string, headers: Record<string, string> = {}) => send(url, 'GET', headers).answer;

/** Resolves with the exit code and how long after `since` the process exited. */
function exited(a: Announced, since: number): Promise<{ code: number | null; ms: number }> {
  return new Promise((resolve) => a.proc.once('exit', (code) => resolve({ code, ms: Date.now() - since })));
}

async function until(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** SIGTERM to a server with a request in hand: when it was sent, the exit to come, and how soon /readyz answered 503. */
async function sigterm(a: Announced) {
  await new Promise((r) => setTimeout(r, 100));
  const t0 = Date.now();
  const exit = exited(a, t0);
  a.proc.kill('SIGTERM');
  await until(readyzIs(originOf(a.url), 503));
  return { t0, exit, readyAt: Date.now() - t0 };
}

const readyzIs = (origin: string, status: number) => () => get(`${origin}/readyz`).then((r) => r.status === status);

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

/** A 2025-era session: initialize, then initialized; its id. */
async function session(url: string): Promise<string> {
  const init = await send(url, 'POST', MCP_HEADERS, JSON.stringify(INIT)).answer;
  expect(init.status).toBe(200);
  const id = init.headers['mcp-session-id'] as string;
  const headers = { ...MCP_HEADERS, 'Mcp-Session-Id': id, 'Mcp-Protocol-Version': '2025-06-18' };
  const done = await send(url, 'POST', headers, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })).answer;
  expect(done.status).toBe(202);
  return id;
}

/** The JSON-RPC message of an answer, plain JSON or one SSE event. */
const rpcOf = (a: Answer) => JSON.parse(a.text.startsWith('{') ? a.text : /^data: (.*)$/m.exec(a.text)![1]!);

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
    const move = send(
      `${s.url}/addFundsToContactAccount`,
      'POST',
      { Authorization: 'Bearer alice-key', Accept: 'application/json', 'Content-Type': 'application/json' },
      JSON.stringify({ account_id: 500, amount: 250, description: 'drain' }),
      true,
    );
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
    const id = await session(m.url);
    const headers = { ...MCP_HEADERS, 'Mcp-Session-Id': id, 'Mcp-Protocol-Version': '2025-06-18' };
    const stream = send(m.url, 'GET', { ...headers, Accept: 'text/event-stream' });
    const call = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: {
        name: 'addFundsToContactAccount',
        arguments: { account_id: 500, amount: 250, description: 'drain', idempotency_key: 'drain-1' },
      },
    };
    const move = send(m.url, 'POST', headers, JSON.stringify(call), true);
    const { t0, exit, readyAt } = await sigterm(m);
    const refused = await send(m.url, 'POST', MCP_HEADERS, JSON.stringify(INIT)).answer;
    expect(refused.status).toBe(503);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(JSON.parse(refused.text)).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
    move.finish();
    const moved = await move.answer;
    const answeredAt = Date.now() - t0;
    expect(moved.status, moved.text).toBe(200);
    const result = rpcOf(moved).result;
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
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
    const id = await session(m.url);
    const headers = { ...MCP_HEADERS, 'Mcp-Session-Id': id, 'Mcp-Protocol-Version': '2025-06-18' };
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
    const f = manyContacts(n, () => ({ tags: ['vip'] }));
    const accounts = Array.from({ length: n }, (_, i) => ({ id: 700 + i, contact_id: 1000 + i, currency: 'USD', amount: 100 }));
    db = seedDb({ ...f, accounts: [...(f.accounts as unknown[]), ...accounts] } as typeof f);
    const bulkServer = () => started(spawnAnnounced(['mcp', '--http', '--port', '0', '--db', db], MCP_URL));
    const first = await bulkServer();
    const c1 = await connectHttp('2025-11-25', first.url);
    c1.answer(() => ({ action: 'accept', content: { confirm: true } }));
    const preview = await c1.callTool({
      name: 'previewBulk',
      arguments: {
        selection: { bot_id: 10, tags: ['vip'] },
        action: { type: 'deposit', currency: 'USD', amount: 500, description: 'Drain bonus' },
      },
    });
    const planId = (preview.structuredContent as any).data.plan_id as string;
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
