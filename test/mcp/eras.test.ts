/**
 * Both protocol eras on every transport. The built CLI over stdio and over Streamable HTTP
 * gives the v1 SDK's client (2025-11-25: initialize, a session) and the v2 SDK's pinned to
 * 2026-07-28 (server/discover, stateless requests, no fallback) the same tools, results,
 * errors, resources and prompts; progress, cancellation, logging and list changes work in
 * both, each the era's way. Elicitation through the project's one API (elicit.ts), by a
 * test-only tool, in both eras, in-memory and over HTTP; the 2026-07-28 wire seen raw.
 */
import { readdirSync } from 'node:fs';
import Database from 'better-sqlite3';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { serveMcpHttp } from '../../src/mcp/serve/http.js';
import type { ToolSpec } from '../../src/mcp/tool-spec.js';
import { CLI, cliEnv, collect, INITIALIZE, spawnAnnounced, spawnRpc } from '../helpers/cli.js';
import { rawWithinBudget } from '../helpers/budget.js';
import { stop } from '../helpers/temp.js';
import { seedDb, serveDb, tempDir, type World } from '../helpers/world.js';
import { connectHttp, connectInMemory, connectStdio, ERAS, type Era, type McpClient, type Negotiation } from './clients.js';
import { firstJson, manyContacts, mcpFixture, useMcp } from './harness.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function keep(client: McpClient): McpClient {
  cleanups.push(() => client.close());
  return client;
}

type Transport = 'stdio' | 'http';

/** The `_meta` every raw 2026-07-28 request carries: the revision, who asks, what it can do. */
function envelope(clientCapabilities: Record<string, unknown> = {}) {
  return {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
    'io.modelcontextprotocol/clientCapabilities': clientCapabilities,
  };
}

/** A raw server/discover request of 2026-07-28, id 1. */
const DISCOVER = { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope() } };

/** `v` without the `_meta` keys of its objects. */
function withoutMeta<T>(v: T): T {
  if (Array.isArray(v)) return v.map(withoutMeta) as T;
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k]) => k !== '_meta')
      .map(([k, x]) => [k, withoutMeta(x)]),
  ) as T;
}

type Backend = 'local' | 'remote';
const SETUPS = (['local', 'remote'] as const).flatMap((backend) =>
  (['stdio', 'http'] as const).map((transport) => [backend, transport] as [Backend, Transport]),
);

describe.each(SETUPS)('the built CLI on the %s backend over %s', (backend, transport) => {
  let dbFile: string;
  /** The backend's flags: the database itself, or a Workspace API serving it over HTTP. */
  let backendArgs: string[];
  let api: World | undefined;
  beforeAll(async () => {
    // 5003 contacts in Alice's bot 10: an export of six pages.
    dbFile = seedDb(manyContacts(5000));
    if (backend === 'remote') api = await serveDb(dbFile);
    backendArgs = api ? ['--remote', api.baseUrl] : ['--db', dbFile];
  });
  afterAll(() => api?.close());

  /** Serve the database (a data folder of its own for exports); `connect(era)` gives a client. */
  async function serve(): Promise<{ connect: (era: Negotiation) => Promise<McpClient>; exports: string }> {
    const dataDir = tempDir();
    const env = cliEnv({ WORKSPACE_API_KEY: 'alice-key', WORKSPACE_DATA_DIR: dataDir });
    const exports = join(dataDir, 'exports');
    if (transport === 'stdio') {
      return {
        exports,
        connect: async (era) =>
          keep(await connectStdio(era, { command: process.execPath, args: [CLI, 'mcp', ...backendArgs], env, stderr: 'pipe' })),
      };
    }
    const started = await spawnAnnounced(['mcp', ...backendArgs, '--http', '--port', '0'], /(http:\/\/\S+\/mcp)/, env);
    cleanups.push(() => stop(started.proc));
    return { exports, connect: async (era) => keep(await connectHttp(era, started.url)) };
  }

  test('both eras get the same tools, results, errors, resources and prompts', async () => {
    const { connect } = await serve();
    const seen = [];
    for (const era of ERAS) {
      const c = await connect(era);
      expect(c.serverName()).toBe('workspace-mcp');
      // The v1 client puts "MCP error <code>: " before the server's message.
      const missing = await c.readResource({ uri: 'workspace://lists/nope' }).then(
        () => 'read',
        (e: Error & { code?: number }) => ({ code: e.code, message: e.message.replace(/^MCP error -?\d+: /, '') }),
      );
      seen.push({
        // runBulk's `execution` (2025-11-25 tasks) is the one difference: test/mcp/tool-budget.test.ts holds it.
        tools: (await c.listTools()).tools.map(({ execution: _, ...t }) => t),
        me: await c.callTool({ name: 'getMe', arguments: {} }),
        unknownArgument: await c.callTool({ name: 'getMe', arguments: { extra: 1 } }),
        notFound: await c.callTool({ name: 'getContactAccounts', arguments: { contact_id: 12345 } }),
        unknownTool: await c.callTool({ name: 'nope', arguments: {} }),
        resources: (await c.listResources()).resources,
        templates: (await c.listResourceTemplates()).resourceTemplates,
        completion: (
          await c.complete({
            ref: { type: 'ref/resource', uri: 'workspace://lists/{schema_id}' },
            argument: { name: 'schema_id', value: 'x' },
          })
        ).completion,
        prompts: (await c.listPrompts()).prompts,
        prompt: (await c.getPrompt({ name: 'exportBotContacts', arguments: { bot_id: '10' } })).messages,
        missing,
      });
    }
    // The same answers; a 2026-07-28 result also carries the server's name in its _meta.
    const [old, modern] = seen.map(withoutMeta);
    expect((old!.me.structuredContent as any).data.name).toBe('Alice');
    expect(firstJson(old!.unknownArgument)).toMatchObject({ status: 422, errors: { extra: [expect.any(String)] } });
    expect(firstJson(old!.notFound)).toMatchObject({ status: 404 });
    expect(old!.missing).toEqual({ code: -32602, message: 'Resource not found: workspace://lists/nope' });
    expect(old!.tools.map((t) => t.name)).toContain('exportContacts');
    expect(modern).toEqual(old);
  });

  test.each(ERAS)(
    '%s: exportContacts reports progress, logs its start and end at the level asked for, and can be cancelled',
    async (era) => {
      const { connect, exports } = await serve();
      const c = await connect(era);
      const logs: Array<{ level: string; logger?: string; data: any }> = [];
      c.onLog((m) => logs.push(m));
      await c.setLogLevel('info');
      const progress: number[] = [];
      const done = await c.callTool(
        { name: 'exportContacts', arguments: { bot_id: 10 } },
        { onprogress: (p) => progress.push(p.progress) },
      );
      expect((done.structuredContent as any).count).toBe(5003);
      // One a page, in order. The last ones may be lost by the client: both SDKs' clients hand a
      // notification to its handler a tick later but settle a response at once, so progress read
      // in the same chunk as the answer comes after its handler is gone (features.test.ts counts
      // every page in-memory, where messages arrive one at a time).
      expect(progress.length).toBeGreaterThanOrEqual(1);
      expect(progress).toEqual([1000, 2000, 3000, 4000, 5000, 5003].slice(0, progress.length));
      expect(logs.map((l) => [l.level, l.logger, l.data.message])).toEqual([
        ['info', 'workspace-mcp', 'exportContacts started'],
        ['info', 'workspace-mcp', 'exportContacts written'],
      ]);
      expect(logs[1]!.data.count).toBe(5003);

      // Cancelled after its first page: the call fails and no file is kept.
      const ac = new AbortController();
      const call = c.callTool({ name: 'exportContacts', arguments: {} }, { signal: ac.signal, onprogress: () => ac.abort() });
      await expect(call).rejects.toThrow();
      await vi.waitFor(() => expect(readdirSync(exports)).toHaveLength(1));
      // The server is still there for the next call; at "error" (logging/setLevel; on 2026-07-28
      // the level in the request's _meta) the export's info lines are no longer sent.
      await c.setLogLevel('error');
      const heard = logs.length;
      const quiet = await c.callTool({
        name: 'exportContacts',
        arguments: { bot_id: 10, date_to: Date.parse('2026-01-03T00:00:00Z') / 1000 },
      });
      expect((quiet.structuredContent as any).count).toBe(3);
      expect(logs.slice(heard)).toEqual([]);
    },
  );

  test.each(ERAS)('%s: a list created or deleted by a tool is announced (2026-07-28: on subscriptions/listen)', async (era) => {
    const { connect } = await serve();
    const c = await connect(era);
    let changes = 0;
    await c.onResourcesChanged(() => void changes++);
    const made = await c.callTool({
      name: 'createListSchema',
      arguments: { name: `By ${era} over ${transport} (${backend})`, bot_id: 10, fields: [{ name: 'A', slug: 'a', type: 'string' }] },
    });
    await vi.waitFor(() => expect(changes).toBe(1));
    await c.callTool({ name: 'deleteListSchema', arguments: { schema_id: (made.structuredContent as any).data.id } });
    await vi.waitFor(() => expect(changes).toBe(2));
  });

  // The era is the MCP layer's, not the backend's: once is enough.
  if (backend === 'local')
    test('a client that negotiates (server/discover first; over HTTP within 600 ms) chooses 2026-07-28', async () => {
      const { connect } = await serve();
      const c = await connect('auto');
      expect(c.era).toBe('2026-07-28');
      expect((await c.callTool({ name: 'getMe', arguments: {} })).isError).toBeFalsy();
    });
});

/** A test-only tool on elicit.ts: asks to confirm `amount`, and answers with what it got. */
const confirmTool: ToolSpec = {
  name: 'confirmTest',
  title: 'Confirm (test only)',
  description: 'Asks the user to confirm an amount.',
  inputSchema: { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'], additionalProperties: false },
  annotations: { readOnlyHint: true },
  scopes: ['workspace:read'],
  async run(args, extra) {
    const reply = extra.elicit.reply('confirm');
    if (!reply) {
      return extra.elicit.ask(
        {
          id: 'confirm',
          message: `Move ${String(args.amount)} USD?`,
          requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean', title: 'Confirm' } }, required: ['confirm'] },
        },
        { amount: args.amount },
      );
    }
    const body = { ...reply, state: extra.elicit.state() };
    return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
  },
};

describe('elicitation: one API of this project for both eras (src/mcp/money/elicit.ts)', () => {
  const start = useMcp();

  async function connect(era: Era, how: 'in-memory' | 'http'): Promise<McpClient> {
    const world = await start({ extraTools: [confirmTool] });
    if (how === 'in-memory') return keep(await connectInMemory(era, (rc, o) => world.factory(rc, o)));
    const http = await serveMcpHttp(world.context, world.tools, { host: '127.0.0.1', port: 0 });
    cleanups.push(() => http.close());
    return keep(await connectHttp(era, http.url));
  }

  const cases = ERAS.flatMap((era) => (['in-memory', 'http'] as const).map((how) => [era, how] as const));

  test.each(cases)(
    '%s over %s: the question reaches the user; accepted, the tool gets the answer and its sealed data',
    async (era, how) => {
      const c = await connect(era, how);
      const asked: string[] = [];
      c.answer((q) => {
        asked.push(q.message);
        return { action: 'accept', content: { confirm: true } };
      });
      const r = await c.callTool({ name: 'confirmTest', arguments: { amount: 5 } });
      expect(asked).toEqual(['Move 5 USD?']);
      expect(r.structuredContent).toEqual({ action: 'accept', content: { confirm: true }, state: { amount: 5 } });
    },
  );

  test.each(cases)('%s over %s: declined, the tool is told so', async (era, how) => {
    const c = await connect(era, how);
    c.answer(() => ({ action: 'decline' }));
    const r = await c.callTool({ name: 'confirmTest', arguments: { amount: 7 } });
    expect(r.structuredContent).toEqual({ action: 'decline', state: { amount: 7 } });
  });
});

describe('the HTTP guards stand in front of both eras', () => {
  const start = useMcp();

  /** The status of `era`'s first message (initialize; server/discover) sent raw with `headers`. */
  function probe(url: string, era: Era, headers: Record<string, string>): Promise<number> {
    const first = era === '2025-11-25' ? { ...INITIALIZE, id: 1 } : DISCOVER;
    const eraHeaders: Record<string, string> = era === '2025-11-25' ? {} : { 'MCP-Protocol-Version': era, 'Mcp-Method': 'server/discover' };
    return new Promise((resolve, reject) => {
      // node:http, not fetch: fetch will not send a Host header of our choosing.
      const req = request(
        url,
        {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...eraHeaders, ...headers },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(first));
    });
  }

  test.each(ERAS)('%s: a foreign Host or Origin is a 403, no bearer token a 401; the real client with the token gets in', async (era) => {
    const world = await start();
    const http = await serveMcpHttp(world.context, world.tools, { host: '127.0.0.1', port: 0, token: 'tok-2' });
    cleanups.push(() => http.close());
    const port = new URL(http.url).port;
    const auth = { Authorization: 'Bearer tok-2' };
    expect(await probe(http.url, era, {})).toBe(401);
    expect(await probe(http.url, era, { Authorization: 'Bearer wrong' })).toBe(401);
    expect(await probe(http.url, era, { ...auth, Host: `evil.example:${port}` })).toBe(403);
    expect(await probe(http.url, era, { ...auth, Origin: 'http://evil.example' })).toBe(403);
    expect(await probe(http.url, era, { ...auth, Origin: `http://localhost:${port}`, Host: `localhost:${port}` })).toBe(200);
    await expect(connectHttp(era, http.url)).rejects.toThrow();
    const c = keep(await connectHttp(era, http.url, auth));
    expect((await c.callTool({ name: 'getMe', arguments: {} })).isError).toBeFalsy();
  });
});

describe('logging: the client chooses what it hears', () => {
  const start = useMcp();

  test.each(ERAS)('%s: at "error" the export\'s info lines are not sent, at "info" they are', async (era) => {
    const world = await start();
    const c = keep(await connectInMemory(era, (rc, o) => world.factory(rc, o)));
    const heard: string[] = [];
    c.onLog((m) => heard.push((m.data as { message: string }).message));
    await c.setLogLevel('error');
    await c.callTool({ name: 'exportContacts', arguments: {} });
    expect(heard).toEqual([]);
    await c.setLogLevel('info');
    await c.callTool({ name: 'exportContacts', arguments: {} });
    expect(heard).toEqual(['exportContacts started', 'exportContacts written']);
  });

  test.each(ERAS)("%s: a failing tool's line reaches the client of the call, and no other", async (era) => {
    // "whatever the process logs while a request's handler runs … is sent through that request's context"
    const failing: ToolSpec = {
      name: 'failTest',
      title: 'Fail (test only)',
      description: 'Throws.',
      inputSchema: { type: 'object' },
      annotations: { readOnlyHint: true },
      scopes: ['workspace:read'],
      run: () => Promise.reject(new Error('boom')),
    };
    const world = await start({ extraTools: [failing], backend: 'local' });
    const c = keep(await connectInMemory(era, (rc, o) => world.factory(rc, o)));
    const other = keep(await connectInMemory(era, (rc, o) => world.factory(rc, o)));
    const heard: Array<{ level: string; data: any }> = [];
    const overheard: unknown[] = [];
    c.onLog((m) => heard.push(m));
    other.onLog((m) => overheard.push(m));
    await c.setLogLevel('error');
    await other.setLogLevel('debug');
    expect(firstJson(await c.callTool({ name: 'failTest', arguments: {} }))).toMatchObject({ status: 500, message: 'Server Error' });
    expect(heard.map((l) => [l.level, l.data.message, l.data.tool, l.data.err])).toEqual([
      ['error', 'tool failed', 'failTest', { name: 'Error', message: 'boom' }],
    ]);
    expect(overheard).toEqual([]);
  });
});

test("over stdio the service's unexpected error in a call is a log line to that call's client (2025-11-25, no level set: all)", async () => {
  // "whatever the process logs while a request's handler runs (… the service's unexpected error …) is sent through that request's context"
  const file = join(tempDir(), 'fresh.db');
  const rpc = spawnRpc(['mcp', '--db', file]);
  cleanups.push(() => stop(rpc.proc));
  rpc.send({ ...INITIALIZE, id: 1 });
  await rpc.answer(1);
  rpc.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const getBotTags = (id: number) => rpc.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'getBotTags', arguments: {} } });
  getBotTags(2);
  expect((await rpc.answer(2)).result.isError).toBeFalsy();
  // Another connection takes the table away under the server.
  const other = new Database(file);
  other.exec('DROP TABLE bot_tags');
  other.close();
  getBotTags(3);
  expect(JSON.parse((await rpc.answer(3)).result.content[0].text)).toMatchObject({ status: 500, message: 'Server Error' });
  const logged = rpc
    .lines()
    .map((l) => JSON.parse(l))
    .filter((m) => m.method === 'notifications/message');
  expect(logged.map((m) => [m.params.level, m.params.logger, m.params.data.message, m.params.data.method])).toEqual([
    ['error', 'workspace-mcp', 'unexpected error', 'getBotTags'],
  ]);
});

test('over stdio a 2026-07-28 session is protocol only on stdout: discover, then requests that carry the revision', async () => {
  const rpc = spawnRpc(['mcp', '--db', join(tempDir(), 'fresh.db')]);
  cleanups.push(() => stop(rpc.proc));
  const meta = envelope();
  rpc.send({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta } });
  expect((await rpc.answer(1)).result.supportedVersions).toContain('2026-07-28');
  rpc.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'getMe', arguments: {}, _meta: meta } });
  rpc.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'getMe', arguments: { extra: 1 }, _meta: meta } });
  rpc.send({ jsonrpc: '2.0', id: 4, method: 'resources/list', params: { _meta: meta } });
  expect((await rpc.answer(2)).result.structuredContent.data.name).toBe('Default owner');
  expect(JSON.parse((await rpc.answer(3)).result.content[0].text)).toMatchObject({ status: 422 });
  expect((await rpc.answer(4)).result.resources.map((r: { uri: string }) => r.uri)).toContain('workspace://workspace');
  for (const l of rpc.lines()) expect(JSON.parse(l).jsonrpc, l).toBe('2.0');
});

describe('the 2026-07-28 wire over HTTP, raw', () => {
  const start = useMcp();
  const V = '2026-07-28';
  const ENVELOPE = envelope({ elicitation: { form: {} } });

  async function serve(token?: string) {
    const world = await start({ extraTools: [confirmTool] });
    const http = await serveMcpHttp(world.context, world.tools, { host: '127.0.0.1', port: 0, token });
    cleanups.push(() => http.close());
    let id = 0;
    const post = async (
      method: string,
      params: Record<string, unknown>,
      headers: Record<string, string> = {},
      meta: Record<string, unknown> = {},
    ) => {
      const res = await fetch(http.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': V,
          'Mcp-Method': method,
          ...(typeof params.name === 'string' ? { 'Mcp-Name': params.name } : {}),
          ...headers,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params: { ...params, _meta: { ...ENVELOPE, ...meta } } }),
      });
      const text = await res.text();
      // One JSON body, or an SSE stream whose last event is the answer.
      const json = res.headers.get('content-type')?.includes('text/event-stream')
        ? JSON.parse(
            text
              .split('\n')
              .filter((l) => l.startsWith('data: '))
              .at(-1)!
              .slice(6),
          )
        : JSON.parse(text);
      rawWithinBudget(json.result);
      return { status: res.status, json, text };
    };
    return { http, post };
  }

  test('server/discover offers 2026-07-28 with our capabilities, no session', async () => {
    const { post } = await serve();
    const { status, json } = await post('server/discover', {});
    expect(status).toBe(200);
    expect(json.result.supportedVersions).toContain(V);
    expect(json.result.capabilities).toMatchObject({
      tools: {},
      resources: { listChanged: true },
      prompts: {},
      completions: {},
      logging: {},
    });
    expect(json.result._meta['io.modelcontextprotocol/serverInfo'].name).toBe('workspace-mcp');
  });

  test('a question is an input_required result with a sealed state; a changed or forged state does not count', async () => {
    const { post } = await serve();
    const first = (await post('tools/call', { name: 'confirmTest', arguments: { amount: 5 } })).json.result;
    expect(first.resultType).toBe('input_required');
    expect(first.inputRequests.confirm).toMatchObject({ method: 'elicitation/create', params: { message: 'Move 5 USD?' } });
    const yes = { confirm: { action: 'accept', content: { confirm: true } } };
    // The "yes" given for 5 is not one for 500: the tool asks again.
    const other = await post('tools/call', {
      name: 'confirmTest',
      arguments: { amount: 500 },
      requestState: first.requestState,
      inputResponses: yes,
    });
    expect(other.json.result.resultType).toBe('input_required');
    // A state not sealed here is refused before the tool runs.
    const forged = first.requestState.slice(0, -4) + (first.requestState.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    const bad = await post('tools/call', { name: 'confirmTest', arguments: { amount: 5 }, requestState: forged, inputResponses: yes });
    expect(bad.json.error).toMatchObject({ code: -32602, message: 'Invalid or expired requestState' });
    const ok = await post('tools/call', {
      name: 'confirmTest',
      arguments: { amount: 5 },
      requestState: first.requestState,
      inputResponses: yes,
    });
    expect(ok.json.result.structuredContent).toEqual({ action: 'accept', content: { confirm: true }, state: { amount: 5 } });
  });

  test('the era is read from the headers as well as the body: a 2026-07-28 header with a 2025 body is refused, never served as 2025', async () => {
    const { http } = await serve();
    const raw = async (body: object) => {
      const res = await fetch(http.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': V },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...body }),
      });
      return { status: res.status, session: res.headers.get('mcp-session-id'), text: await res.text() };
    };
    // A request without the envelope its header promises: the 2026-07-28 path names what is missing.
    const call = await raw({ method: 'tools/call', params: { name: 'getMe', arguments: {} } });
    expect(call.status).toBe(400);
    expect(call.text).toMatch(/MCP-Protocol-Version header names protocol revision 2026-07-28.*envelope/);
    // A 2025 handshake under a 2026-07-28 header opens no session.
    const init = await raw({
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    expect(init.status).toBe(400);
    expect(init.session).toBeNull();
  });

  test('no log lines unless the request names a level', async () => {
    const { post } = await serve();
    const quiet = await post('tools/call', { name: 'exportContacts', arguments: {} });
    expect(quiet.json.result.structuredContent.count).toBeGreaterThan(0);
    expect(quiet.text).not.toMatch(/notifications\/message/);
    const told = await post('tools/call', { name: 'exportContacts', arguments: {} }, {}, { 'io.modelcontextprotocol/logLevel': 'info' });
    expect(told.text.match(/notifications\/message/g)).toHaveLength(2);
  });

  test('the guards stand in front of a 2026-07-28 request: token, and a body that is not UTF-8', async () => {
    const { http, post } = await serve('tok-1');
    expect((await post('server/discover', {})).status).toBe(401);
    expect((await post('server/discover', {}, { Authorization: 'Bearer tok-1' })).status).toBe(200);
    const bad = await fetch(http.url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: 'Bearer tok-1',
        'MCP-Protocol-Version': V,
        'Mcp-Method': 'tools/call',
      },
      body: Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"getMe","arguments":{"x":"'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"}}}'),
      ]),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: unknown }).error).toMatchObject({ code: -32700, message: expect.stringMatching(/UTF-8/) });
  });
});
