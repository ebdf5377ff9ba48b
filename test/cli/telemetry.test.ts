/**
 * Telemetry through the built CLI, as an operator runs it: the standard OTEL_* variables point
 * `mcp --http` and `mcp` over stdio (local, and `--remote` against a `serve`) at a real OTLP/HTTP
 * receiver started here (test/helpers/otlp.ts), in http/json and in http/protobuf. The SDK's real
 * clients of both eras make the calls, one trace carried in the HTTP `traceparent` header and one
 * in `params._meta.traceparent`. Asserted on what the receiver got: a SERVER span per MCP request
 * named `{method} {target}` with the MCP semantic conventions' attributes, its parent the
 * caller's; a child span per backend call (the built-in service's, or the remote API's HTTP
 * requests without their query); the metrics (operation and session durations, refusals, money
 * moved, bulk steps); and a sweep of every body for keys, tokens, a contact's fields and a
 * message's text. Without OTEL_* set no OpenTelemetry module is loaded at all.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, test } from 'vitest';
import { CLI, cliEnv, collect, INITIALIZE, runCliAsync, spawnAnnounced, spawnServe } from '../helpers/cli.js';
import { startReceiver, otelEnv, SPAN_KIND, type Receiver, type ReceivedSpan } from '../helpers/otlp.js';
import { stop, track } from '../helpers/temp.js';
import { DEMO_FIXTURE, tempDir } from '../helpers/world.js';
import { connectHttp, connectStdio, type McpClient } from '../mcp/clients.js';
import { firstJson } from '../mcp/harness.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Dana (owner 1, key demo-dana-key) and her contact Anna Smith: USD account 501 of 25.00. */
const KEY = 'demo-dana-key';
const TOKEN = 'telemetry-test-token-4f9c2e71b3a8';
/** What must never be exported: the key, the token, Anna's and Dana's fields, a message's text. */
const NEVER = [
  KEY,
  TOKEN,
  'Bearer',
  'Anna Smith',
  'Anna',
  '447700900123',
  'anna@example.com',
  'anna_s',
  '700100',
  'Dana Brook',
  'dana@example.com',
  'flat white',
];
const MESSAGE = 'Your order QX-7731 is ready for pickup';

/** A W3C trace context of the caller's: its trace and span ids. */
function traceparent(): { header: string; traceId: string; spanId: string } {
  const traceId = [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');
  const spanId = [...crypto.getRandomValues(new Uint8Array(8))].map((b) => b.toString(16).padStart(2, '0')).join('');
  return { header: `00-${traceId}-${spanId}-01`, traceId, spanId };
}

async function seeded(): Promise<string> {
  const db = join(tempDir(), 'demo.db');
  const r = await runCliAsync(['seed', DEMO_FIXTURE, '--db', db], cliEnv());
  expect(r.status, r.stderr).toBe(0);
  return db;
}

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  cleanups.push(() => r.close());
  return r;
}

/** Resolves once `check` holds of what the receiver has (the exporters send in batches). */
async function until<T>(what: string, check: () => T | undefined, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const named = (spans: ReceivedSpan[], name: string) => spans.filter((s) => s.name === name);
const childrenOf = (spans: ReceivedSpan[], parent: ReceivedSpan) =>
  spans.filter((s) => s.parentSpanId === parent.spanId && s.traceId === parent.traceId);

/**
 * The SERVER span `name` (`tools/call <tool>`) in the caller's trace, its parent the caller's
 * span, with `attributes` and the method's and tool's; once it arrived. With every span received.
 */
async function callerSpan(
  r: Receiver,
  name: string,
  caller: { traceId: string; spanId: string },
  attributes: Record<string, unknown>,
): Promise<[ReceivedSpan, ReceivedSpan[]]> {
  const span = await until(name, () => named(r.spans(), name).find((s) => s.traceId === caller.traceId));
  expect(span).toMatchObject({ kind: SPAN_KIND.SERVER, parentSpanId: caller.spanId });
  const [method, tool] = name.split(' ');
  expect(span.attributes).toMatchObject({ 'mcp.method.name': method, 'gen_ai.tool.name': tool, ...attributes });
  return [span, r.spans()];
}

/** Nothing that must stay private in anything exported. */
function sweep(r: Receiver, more: string[] = []): void {
  expect(r.errors()).toEqual([]);
  const all = r.everything();
  expect(all.length).toBeGreaterThan(0);
  for (const secret of [...NEVER, ...more]) {
    // A number (a phone, an id) as a token of its own: the same digits inside a timestamp or a span id are chance, not a leak.
    const found = /^\d+$/.test(secret) ? new RegExp(`(?<![0-9A-Za-z.])${secret}(?![0-9A-Za-z.])`).test(all) : all.includes(secret);
    expect(found, `"${secret}" was exported`).toBe(false);
  }
}

/** The metric's data points, once it arrived. */
function pointsOf(r: Receiver, name: string) {
  return r
    .metrics()
    .filter((m) => m.name === name)
    .flatMap((m) => m.points);
}

describe.each(['http/json', 'http/protobuf'] as const)('telemetry over OTLP %s', (protocol) => {
  test('mcp --http: a SERVER span per request in both eras, parents from the header and from _meta, a child per service call, the metrics on exit', async () => {
    const db = await seeded();
    const r = await receiver();
    const env = cliEnv({ ...otelEnv(r, protocol), WORKSPACE_API_KEY: KEY, WORKSPACE_MCP_TOKEN: TOKEN });
    const server = await spawnAnnounced(
      ['mcp', '--db', db, '--http', '--port', '0', '--max-amount', '5.00', '--max-daily', '100.00'],
      /(http:\/\/\S+\/mcp)/,
      env,
    );
    cleanups.push(() => stop(server.proc));
    const auth = { Authorization: `Bearer ${TOKEN}` };

    // 2025-11-25, a session: the caller's trace in the HTTP traceparent header of every request.
    const viaHeader = traceparent();
    const old = await connectHttp('2025-11-25', server.url, { ...auth, traceparent: viaHeader.header }, { elicitation: false });
    await old.listTools();
    expect((await old.callTool({ name: 'getMe', arguments: {} })).isError).toBeFalsy();
    // With caps on, a move needs the account read first (its currency).
    expect((await old.callTool({ name: 'getContactAccounts', arguments: { contact_id: 1001 } })).isError).toBeFalsy();
    const moved = await old.callTool({ name: 'addFundsToContactAccount', arguments: { account_id: 501, amount: 250, description: 'tip' } });
    expect(moved.isError, JSON.stringify(moved)).toBeFalsy();
    // Over --max-amount, and this client cannot ask its person: refused by the cap.
    const capped = await old.callTool({ name: 'addFundsToContactAccount', arguments: { account_id: 501, amount: 900, description: 'x' } });
    expect(capped.isError).toBe(true);
    const notFound = await old.callTool({ name: 'getContactAccounts', arguments: { contact_id: 999999 } });
    expect(firstJson(notFound)).toMatchObject({ status: 404 });
    const sent = await old.callTool({ name: 'sendMessage', arguments: { contact_id: 1001, text: MESSAGE } });
    expect(sent.isError, JSON.stringify(sent)).toBeFalsy();
    await old.callTool({ name: 'findContacts', arguments: { query: 'Anna Smith' } });
    // A JSON-RPC error: its code is the error's type.
    await expect(old.readResource({ uri: 'workspace://lists/nope' })).rejects.toThrow(/not found/);
    await old.close();

    // A bulk deposit of 1.00 to Dana's vip contacts of bot 11, confirmed by the person.
    const bulk = await connectHttp('2025-11-25', server.url, auth);
    bulk.answer(() => ({ action: 'accept', content: { confirm: true } }));
    const preview = await bulk.callTool({
      name: 'previewBulk',
      arguments: {
        selection: { bot_id: 11, tags: ['vip'] },
        action: { type: 'deposit', currency: 'USD', amount: 100, description: 'bonus' },
      },
    });
    const planId = (preview.structuredContent as { data: { plan_id: string } }).data.plan_id;
    const ran = (await bulk.callTool({ name: 'runBulk', arguments: { plan_id: planId } })).structuredContent as {
      data: { done: number; failed: number; skipped: number; remaining: number };
    };
    expect(ran.data.done).toBeGreaterThanOrEqual(1);
    expect(ran.data.remaining).toBe(0);
    await bulk.close();

    // The read-only door withholds the money tools: a call of one is refused by its scope.
    const readOnly = await connectHttp('2025-11-25', server.url.replace(/\/mcp$/, '/mcp/read-only'), auth);
    const scoped = await readOnly.callTool({
      name: 'addFundsToContactAccount',
      arguments: { account_id: 501, amount: 1, description: 'x' },
    });
    expect(firstJson(scoped)).toMatchObject({ code: 'insufficient_scope' });
    await readOnly.close();

    // 2026-07-28, stateless: the caller's trace in the request's _meta.
    const viaMeta = traceparent();
    const modern = await connectHttp('2026-07-28', server.url, auth);
    const call = {
      name: 'getContacts',
      arguments: { bot_id: 11, count: 5 },
      _meta: { traceparent: viaMeta.header, tracestate: 'caller=1' },
    };
    expect((await modern.callTool(call as { name: string; arguments: Record<string, unknown> })).isError).toBeFalsy();
    await modern.close();

    // The spans come in batches; the rest (and every metric) when the process ends.
    await stop(server.proc);
    const [me, spans] = await callerSpan(r, 'tools/call getMe', viaHeader, {
      'gen_ai.operation.name': 'execute_tool',
      'mcp.protocol.version': '2025-11-25',
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
      'jsonrpc.request.id': expect.any(String),
      'mcp.session.id': expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(r.contentTypes()).toEqual(new Set([protocol === 'http/json' ? 'json' : 'protobuf']));
    expect(me.attributes['error.type']).toBeUndefined();
    expect(me.resource).toMatchObject({ 'service.name': 'workspace-mcp-test', 'deployment.environment.name': 'test' });
    const init = named(spans, 'initialize').find((s) => s.traceId === viaHeader.traceId)!;
    expect(init).toMatchObject({ kind: SPAN_KIND.SERVER, parentSpanId: viaHeader.spanId });
    expect(init.attributes['mcp.protocol.version']).toBe('2025-11-25');
    expect(named(spans, 'tools/list').some((s) => s.traceId === viaHeader.traceId)).toBe(true);
    // The built-in service's call: a CLIENT span under the tools/call span.
    expect(childrenOf(spans, me)).toEqual([
      expect.objectContaining({
        name: 'getMe',
        kind: SPAN_KIND.CLIENT,
        attributes: expect.objectContaining({ 'db.system.name': 'sqlite', 'db.operation.name': 'getMe' }),
      }),
    ]);
    const [deposit, cappedSpan] = named(spans, 'tools/call addFundsToContactAccount').filter((s) => s.traceId === viaHeader.traceId);
    expect(childrenOf(spans, deposit!).map((s) => s.name)).toContain('addFundsToContactAccount');
    // Failures: the tool's error code, the span's status an error.
    expect(cappedSpan!.attributes['error.type']).toBeDefined();
    expect(cappedSpan!.status).toBe(2);
    const [read, nf] = named(spans, 'tools/call getContactAccounts');
    expect(read!.attributes['error.type']).toBeUndefined();
    expect(read!.status).toBe(0);
    // The API's 404 names no code: its status.
    expect(nf!.attributes['error.type']).toBe('404');
    expect(nf!.status).toBe(2);
    expect(named(spans, 'tools/call sendMessage')).toHaveLength(1);
    const missing = named(spans, 'resources/read')[0]!;
    expect(missing).toMatchObject({ kind: SPAN_KIND.SERVER, traceId: viaHeader.traceId, status: 2 });
    expect(missing.attributes).toMatchObject({ 'error.type': '-32602', 'rpc.response.status_code': '-32602' });
    // The resource's URI is left out (a list's id, an export's filter).
    expect(missing.attributes['mcp.resource.uri']).toBeUndefined();
    const scopedSpan = named(spans, 'tools/call addFundsToContactAccount').find((s) => s.traceId !== viaHeader.traceId)!;
    expect(scopedSpan.attributes['error.type']).toBe('insufficient_scope');

    // The 2026-07-28 request: its parent from _meta, its own revision, no session.
    const [listed] = await callerSpan(r, 'tools/call getContacts', viaMeta, { 'mcp.protocol.version': '2026-07-28' });
    expect(listed.attributes['mcp.session.id']).toBeUndefined();
    expect(childrenOf(spans, listed).map((s) => s.name)).toEqual(['getContacts']);

    // The metrics, sent by the flush on exit (the export interval is far longer than the test).
    const ops = await until('mcp.server.operation.duration', () => {
      const p = pointsOf(r, 'mcp.server.operation.duration');
      return p.length > 0 ? p : undefined;
    });
    expect(r.metrics().find((m) => m.name === 'mcp.server.operation.duration')!.unit).toBe('s');
    expect(ops).toContainEqual(
      expect.objectContaining({
        attributes: expect.objectContaining({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'getMe' }),
        count: 1,
      }),
    );
    expect(ops).toContainEqual(
      expect.objectContaining({ attributes: expect.objectContaining({ 'gen_ai.tool.name': 'getContactAccounts', 'error.type': '404' }) }),
    );
    const sessions = pointsOf(r, 'mcp.server.session.duration');
    expect(sessions).toContainEqual(
      expect.objectContaining({ attributes: { 'network.transport': 'tcp', 'network.protocol.name': 'http' } }),
    );
    expect(sessions.reduce((n, p) => n + (p.count ?? 0), 0)).toBeGreaterThanOrEqual(2);
    const refused = pointsOf(r, 'workspace_mcp.requests.refused');
    expect(refused).toContainEqual({ attributes: { reason: 'cap' }, value: 1 });
    expect(refused).toContainEqual({ attributes: { reason: 'scope' }, value: 1 });
    // The one move of 2.50 and the bulk run's of 1.00 each: by currency and direction, never by whom.
    const credit = { currency: 'USD', direction: 'credit' };
    expect(pointsOf(r, 'workspace_mcp.money.moves')).toEqual([{ attributes: credit, value: 1 + ran.data.done }]);
    expect(pointsOf(r, 'workspace_mcp.money.amount')).toEqual([{ attributes: credit, value: 250 + 100 * ran.data.done }]);
    const steps = pointsOf(r, 'workspace_mcp.bulk.steps');
    expect(steps).toContainEqual({ attributes: { status: 'done' }, value: ran.data.done });
    expect(steps.reduce((n, p) => n + (p.value ?? 0), 0)).toBe(ran.data.done + ran.data.failed + ran.data.skipped);

    sweep(r, [MESSAGE, 'QX-7731']);
  });
});

describe.each(['http/protobuf', 'http/json'] as const)('telemetry over OTLP %s, stdio', (protocol) => {
  test("mcp --remote over stdio: the tools/call span under _meta.traceparent, the remote API requests as CLIENT spans without their query, serve's spans under them", async () => {
    const db = await seeded();
    const r = await receiver();
    // The remote API is `serve`, sending its own spans to the same receiver: the trace goes on there.
    const api = await spawnServe(['--db', db], { ...otelEnv(r, protocol), OTEL_SERVICE_NAME: 'workspace-api-test' });
    cleanups.push(() => stop(api.proc));
    const env = cliEnv({ ...otelEnv(r, protocol), WORKSPACE_API_KEY: KEY });
    const client = await connectStdio('2025-11-25', {
      command: process.execPath,
      args: [CLI, 'mcp', '--remote', api.baseUrl],
      env,
      stderr: 'pipe',
    });
    const caller = traceparent();
    const call = { name: 'getContacts', arguments: { bot_id: 11, count: 3 }, _meta: { traceparent: caller.header } };
    expect((await client.callTool(call as { name: string; arguments: Record<string, unknown> })).isError).toBeFalsy();
    // stdin's end stops the server, which sends what it holds before it exits; serve sends its own on SIGTERM.
    await client.close();
    // A 2026-07-28 client over stdio: its trace in the request's _meta too.
    const modern = await connectStdio('2026-07-28', {
      command: process.execPath,
      args: [CLI, 'mcp', '--remote', api.baseUrl],
      env,
      stderr: 'pipe',
    });
    const caller2026 = traceparent();
    const me = { name: 'getMe', arguments: {}, _meta: { traceparent: caller2026.header } };
    expect((await modern.callTool(me as { name: string; arguments: Record<string, unknown> })).isError).toBeFalsy();
    await modern.close();
    await stop(api.proc);

    const [listed, spans] = await callerSpan(r, 'tools/call getContacts', caller, {
      'network.transport': 'pipe',
      'mcp.protocol.version': '2025-11-25',
    });
    expect(listed.attributes['network.protocol.name']).toBeUndefined();
    expect(listed.attributes['mcp.session.id']).toBeUndefined();
    // The remote API's request: undici's CLIENT span under it, its URL without the query it was sent with.
    const requests = childrenOf(spans, listed);
    expect(requests.length).toBeGreaterThanOrEqual(1);
    const get = requests.find((s) => String(s.attributes['url.full']).endsWith('/api/v1/getContacts'))!;
    expect(get, JSON.stringify(requests)).toBeDefined();
    expect(get).toMatchObject({ kind: SPAN_KIND.CLIENT, traceId: caller.traceId });
    expect(get.attributes).toMatchObject({ 'http.request.method': 'GET', 'http.response.status_code': 200 });
    expect(get.attributes['url.query']).toBeUndefined();
    expect(String(get.attributes['url.full'])).not.toContain('?');
    expect(named(spans, 'initialize')[0]!.attributes['network.transport']).toBe('pipe');
    const [me2026] = await callerSpan(r, 'tools/call getMe', caller2026, {
      'network.transport': 'pipe',
      'mcp.protocol.version': '2026-07-28',
    });
    // The remote backend's own first getMe (its key's check) and the tool's: each a CLIENT span under it.
    const calls = childrenOf(r.spans(), me2026);
    expect(calls.length).toBeGreaterThanOrEqual(1);
    for (const c of calls)
      expect(c).toMatchObject({ kind: SPAN_KIND.CLIENT, attributes: { 'url.full': expect.stringMatching(/\/api\/v1\/getMe$/) } });
    // serve's SERVER span of that request: its parent the MCP server's request (undici sent the trace context along).
    const served = await until("serve's span", () => spans.concat(r.spans()).find((s) => s.parentSpanId === get.spanId));
    expect(served).toMatchObject({ name: 'GET /api/v1/getContacts', kind: SPAN_KIND.SERVER, traceId: caller.traceId });
    expect(served.resource['service.name']).toBe('workspace-api-test');
    expect(served.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/api/v1/getContacts',
      'url.path': '/api/v1/getContacts',
      'http.response.status_code': 200,
    });
    expect(served.attributes['url.query']).toBeUndefined();
    const apiDurations = await until('http.server.request.duration', () => {
      const p = pointsOf(r, 'http.server.request.duration');
      return p.length > 0 ? p : undefined;
    });
    expect(apiDurations).toContainEqual(
      expect.objectContaining({
        attributes: expect.objectContaining({ 'http.route': '/api/v1/getContacts', 'http.response.status_code': 200 }),
      }),
    );

    const sessions = await until('mcp.server.session.duration', () => {
      const p = pointsOf(r, 'mcp.server.session.duration');
      return p.length > 0 ? p : undefined;
    });
    // One stdio session a process: the 2025 client's, the 2026-07-28 client's probe and its own.
    expect(sessions).toHaveLength(3);
    for (const p of sessions) expect(p).toMatchObject({ attributes: { 'network.transport': 'pipe' }, count: 1 });
    sweep(r);
  });
});

test('mcp --http --auth key: a request past --person-rate is counted refused by rate; the bearer key is in nothing exported', async () => {
  const db = await seeded();
  const r = await receiver();
  const server = await spawnAnnounced(
    ['mcp', '--db', db, '--http', '--port', '0', '--auth', 'key', '--person-rate', '2'],
    /(http:\/\/\S+\/mcp)/,
    cliEnv(otelEnv(r, 'http/json')),
  );
  cleanups.push(() => stop(server.proc));
  const post = () =>
    fetch(server.url, {
      method: 'POST',
      headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ ...INITIALIZE, id: 1 }),
    });
  const statuses = [];
  for (let i = 0; i < 3; i++) statuses.push((await post()).status);
  expect(statuses).toEqual([200, 200, 429]);
  await stop(server.proc);
  const refused = await until('workspace_mcp.requests.refused', () => {
    const p = pointsOf(r, 'workspace_mcp.requests.refused');
    return p.length > 0 ? p : undefined;
  });
  expect(refused).toEqual([{ attributes: { reason: 'rate' }, value: 1 }]);
  expect(named(r.spans(), 'initialize')).toHaveLength(2);
  sweep(r);
});

/** The @opentelemetry modules a run of the CLI resolves, seen by a module hook in the child itself. */
async function otelModulesLoaded(db: string, env: Record<string, string>): Promise<string[]> {
  const dir = tempDir();
  const hook = join(dir, 'hook.mjs');
  writeFileSync(
    hook,
    `import { writeSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (r.url.includes('/@opentelemetry/')) writeSync(2, 'OTEL-LOADED ' + r.url + '\\n');
  return r;
}
`,
  );
  const register = join(dir, 'register.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hook).href)});\n`);
  const proc = track(
    spawn(process.execPath, ['--import', pathToFileURL(register).href, CLI, 'mcp', '--db', db], { env, stdio: ['pipe', 'pipe', 'pipe'] }),
  );
  const out = collect(proc.stdout);
  const err = collect(proc.stderr);
  proc.stdin.write(JSON.stringify({ ...INITIALIZE, id: 1 }) + '\n');
  await out.wait(/"id":1/);
  proc.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'getMe', arguments: {} } }) + '\n');
  await out.wait(/"id":2/);
  proc.stdin.end();
  await new Promise((resolve) => proc.once('close', resolve));
  return [...err.text().matchAll(/OTEL-LOADED (\S+)/g)].map((m) => m[1]!);
}

test('with no OTEL_* variable no OpenTelemetry module is loaded; with them, the SDK is', async () => {
  const db = await seeded();
  expect(await otelModulesLoaded(db, cliEnv({ WORKSPACE_API_KEY: KEY }))).toEqual([]);
  // OTEL_SDK_DISABLED wins over the rest.
  const r = await receiver();
  expect(await otelModulesLoaded(db, cliEnv({ ...otelEnv(r, 'http/json'), OTEL_SDK_DISABLED: 'true', WORKSPACE_API_KEY: KEY }))).toEqual(
    [],
  );
  // The same hook sees the SDK when the variables ask for it: the check above can fail. (A metric
  // export interval under the default export timeout starts too.)
  const loaded = await otelModulesLoaded(
    db,
    cliEnv({ ...otelEnv(r, 'http/json'), OTEL_METRIC_EXPORT_INTERVAL: '1000', WORKSPACE_API_KEY: KEY }),
  );
  expect(loaded.some((u) => u.includes('/@opentelemetry/api/'))).toBe(true);
  expect(loaded.some((u) => u.includes('/@opentelemetry/sdk-trace/'))).toBe(true);
  await until('the spans', () => (named(r.spans(), 'tools/call getMe').length > 0 ? true : undefined));
});
