/**
 * What the drain's tests share (test/cli/drain*.test.ts): raw HTTP requests of their own
 * connection (a body held back but for its last byte, to have a request in hand), the probes
 * read, SIGTERM sent and the drain's timeline taken (SIGTERM → /readyz 503 → last answer → exit).
 */
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import type { McpClient } from '../mcp/clients.js';
import { manyContacts } from '../mcp/harness.js';
import type { Announced } from './cli.js';
import type { Fixture } from './store.js';

export interface Answer {
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
export function send(url: string, method: string, headers: Record<string, string> = {}, body?: string, hold = false) {
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

export const get = (url: string, headers: Record<string, string> = {}) => send(url, 'GET', headers).answer;

export const originOf = (url: string) => new URL(url).origin;

/** Resolves with the exit code and how long after `since` the process exited. */
export function exited(a: Announced, since: number): Promise<{ code: number | null; ms: number }> {
  return new Promise((resolve) => a.proc.once('exit', (code) => resolve({ code, ms: Date.now() - since })));
}

export async function until(check: () => Promise<boolean>, ms = 5000, everyMs = 20): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export const readyzIs = (origin: string, status: number) => () =>
  get(`${origin}/readyz`).then(
    (r) => r.status === status,
    () => false,
  );

/**
 * SIGTERM to a server with a request in hand: when it was sent, the exit to come, and how soon
 * /readyz answered 503 (`afterMs` after the last request went out). With `exitsFirst`, a server
 * that may have nothing left to wait for: `readyAt` is undefined when it exited before /readyz
 * could be read.
 */
export async function sigterm(a: Announced, { afterMs = 100, exitsFirst = false } = {}) {
  await new Promise((r) => setTimeout(r, afterMs));
  const t0 = Date.now();
  const exit = exited(a, t0);
  let gone = false;
  void exit.then(() => (gone = true));
  a.proc.kill('SIGTERM');
  const origin = originOf(a.url);
  await until(async () => (exitsFirst && gone) || (await readyzIs(origin, 503)()), 5000, 5);
  return { t0, exit, readyAt: gone ? undefined : Date.now() - t0 };
}

/** The JSON-RPC message of an answer, plain JSON or the last SSE event. */
export const rpcOf = (a: Answer) =>
  JSON.parse(
    a.text.startsWith('{')
      ? a.text
      : a.text
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .at(-1)!
          .slice(6),
  );

/** The `_meta` of a 2026-07-28 request: the revision, the client, what it can do. */
const ENVELOPE_2026 = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
};

/** The headers and body of a raw 2026-07-28 request `method` (a tools/call names its tool in Mcp-Name). */
export function request2026(id: number, method: string, params: Record<string, unknown>, headers: Record<string, string> = {}) {
  return {
    headers: {
      ...headers,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': method,
      ...(method === 'tools/call' ? { 'Mcp-Name': String(params.name) } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: ENVELOPE_2026 } }),
  };
}

/**
 * A raw 2025-era session on `url` (initialize, then initialized, with `headers`: the bearer);
 * the headers of its requests, or an Error naming the answer that was not as expected.
 */
export async function session2025(url: string, headers: Record<string, string> = {}): Promise<Record<string, string>> {
  const base = { ...headers, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  };
  const opened = await send(url, 'POST', base, JSON.stringify(init)).answer;
  const id = opened.headers['mcp-session-id'];
  if (opened.status !== 200 || typeof id !== 'string') throw new Error(`initialize answered ${opened.status}: ${opened.text}`);
  const own = { ...base, 'Mcp-Session-Id': id, 'Mcp-Protocol-Version': '2025-06-18' };
  const done = await send(url, 'POST', own, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })).answer;
  if (done.status !== 202) throw new Error(`notifications/initialized answered ${done.status}: ${done.text}`);
  return own;
}

/** The world of a bulk run: `n` contacts tagged vip (ids 1000 on), each with a USD account of 1.00 (ids 700 on). */
export function bulkFixture(n: number): Fixture {
  const f = manyContacts(n, () => ({ tags: ['vip'] }));
  const accounts = Array.from({ length: n }, (_, i) => ({ id: 700 + i, contact_id: 1000 + i, currency: 'USD', amount: 100 }));
  return { ...f, accounts: [...(f.accounts as unknown[]), ...accounts] };
}

/** previewBulk of a 5.00 deposit to every vip contact of bot 10; the plan's id. */
export async function previewDeposit(c: McpClient, description: string): Promise<string> {
  const preview = await c.callTool({
    name: 'previewBulk',
    arguments: { selection: { bot_id: 10, tags: ['vip'] }, action: { type: 'deposit', currency: 'USD', amount: 500, description } },
  });
  const planId = (preview.structuredContent as { data?: { plan_id?: unknown } } | undefined)?.data?.plan_id;
  if (typeof planId !== 'string') throw new Error(`previewBulk made no plan: ${JSON.stringify(preview)}`);
  return planId;
}

/** The body of a 2025-era `tools/call` of `name` with `args`. */
export const toolCall2025 = (id: number, name: string, args: Record<string, unknown>) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

/**
 * A tool call held in hand (`send(…, hold)`) finished and answered: its result and when, ms after
 * `t0` (SIGTERM); an Error when it was not answered 200 with a result that is no error.
 */
export async function heldResult(held: ReturnType<typeof send>, t0: number): Promise<{ result: any; answeredAt: number }> {
  held.finish();
  const a = await held.answer;
  const answeredAt = Date.now() - t0;
  const result = a.status === 200 ? rpcOf(a).result : undefined;
  if (!result || result.isError) throw new Error(`the call in hand was answered ${a.status}: ${a.text}`);
  return { result, answeredAt };
}

/**
 * runBulk of `planId` (`steps` steps) by `c` on `server`, SIGTERM'd once `atStep` steps are
 * done: its progress data, when it was answered and the server exited (ms after SIGTERM),
 * /readyz's 503 (undefined: the server exited before it was read), the exit code. An Error
 * unless it stopped part-way with the warning to call runBulk again.
 */
export async function bulkStoppedByDrain(c: McpClient, server: Announced, planId: string, atStep: number, steps: number) {
  let signalled: ReturnType<typeof sigterm> | undefined;
  const run = await c.callTool(
    { name: 'runBulk', arguments: { plan_id: planId } },
    {
      onprogress: (p) => void (p.progress >= atStep && !signalled && (signalled = sigterm(server, { afterMs: 0, exitsFirst: true }))),
      timeout: 60_000,
    },
  );
  if (!signalled) throw new Error(`runBulk ended before its step ${atStep}: ${JSON.stringify(run)}`);
  const { t0, exit, readyAt } = await signalled;
  const answeredAt = Date.now() - t0;
  const { code, ms } = await exit;
  const data = (run.structuredContent as { data: { done: number; remaining: number } }).data;
  const said = JSON.stringify(run.structuredContent);
  if (data.done < atStep || data.remaining === 0 || data.done + data.remaining !== steps || !/shutting down: call runBulk again/.test(said))
    throw new Error(`runBulk did not stop part-way for the drain: ${said}`);
  return { data, readyAt, answeredAt, code, exitAt: ms };
}

/** A 2.50 top-up of account 500 as alice-key to `serve` at `baseUrl`, held in hand (all but its last byte sent). */
export const heldApiTopUp = (baseUrl: string) =>
  send(
    `${baseUrl}/addFundsToContactAccount`,
    'POST',
    { Authorization: 'Bearer alice-key', Accept: 'application/json', 'Content-Type': 'application/json' },
    JSON.stringify({ account_id: 500, amount: 250, description: 'drain' }),
    true,
  );
