/**
 * The Streamable HTTP endpoint as the open internet meets it (issue 31): malformed, deeply
 * nested and oversized JSON-RPC, wrong types in every tool's arguments, resource URIs that
 * climb out of their folder, odd headers and protocol versions, thousands of sessions opened
 * and abandoned. Every answer is under 500 and names no path of the machine, no stack and no
 * token; sessions are bounded (a cap answers 503 with Retry-After, idle ones expire). The
 * server's real HTTP layer in-process over a real SQLite world, raw requests on 127.0.0.1.
 * FUZZ_RUNS sets fast-check's runs (each tool's, each property's).
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { serveMcpHttp, serveMcpHttpByKey, type HttpOptions, type McpHttpServer } from '../../src/mcp/serve/http.js';
import { startMcp, type McpWorld } from './harness.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 8);
const TOKEN = `fuzz-token-${randomUUID()}`;
const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';
const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'fuzz', version: '0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
/** In a file beside the database, named as an export is: no resource URI may reach it. */
const MARKER = `marker-${randomUUID()}`;

let world: McpWorld;
let http: McpHttpServer;
beforeAll(async () => {
  // As the CLI serves HTTP: answers name no path of the server's machine.
  world = await startMcp({ backend: 'local', localPaths: false });
  writeFileSync(join(world.dir, 'contacts-secret.jsonl'), `{"secret":"${MARKER}"}\n`);
  http = await serveMcpHttp(world.context, world.tools, { host: '127.0.0.1', port: 0, token: TOKEN });
});
afterAll(async () => {
  await http?.close();
  await world?.close();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One raw request (headers as given, an array sends the header once per value). */
function send(
  url: string,
  o: { method?: string; headers?: Record<string, string | string[]>; body?: string | Buffer } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: o.method ?? 'POST', headers: o.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

const JSON_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
const AUTH = { ...JSON_HEADERS, Authorization: `Bearer ${TOKEN}` };

/** An ASCII header value for Mcp-Name (the spec's Base64 form for any other). */
function nameHeader(v: string): string {
  return /^[\x20-\x7e]*$/.test(v) && v.trim() === v ? v : `=?base64?${Buffer.from(v).toString('base64')}?=`;
}

/** A 2026-07-28 request (stateless): the envelope in `_meta` and the standard headers. */
function modern(method: string, params: Record<string, unknown>, name?: string): { headers: Record<string, string>; body: string } {
  return {
    headers: {
      ...AUTH,
      'MCP-Protocol-Version': MODERN,
      'Mcp-Method': method,
      ...(name !== undefined ? { 'Mcp-Name': nameHeader(name) } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: META } }),
  };
}

/** A 2025-era session: its id, and the headers of a request in it. */
async function openSession(
  url = http.url,
  headers: Record<string, string> = AUTH,
): Promise<{ id: string; headers: Record<string, string> }> {
  const init = await send(url, {
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'fuzz', version: '0' } },
    }),
  });
  expect(init.status, init.text).toBe(200);
  const id = init.headers['mcp-session-id'] as string;
  const inSession = { ...headers, 'Mcp-Session-Id': id, 'MCP-Protocol-Version': LEGACY };
  const initialized = await send(url, {
    headers: inSession,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  expect(initialized.status).toBe(202);
  return { id, headers: inSession };
}

/** The JSON-RPC messages of an answer, as JSON or as an event stream. */
function messagesOf(a: Answer): any[] {
  const type = String(a.headers['content-type'] ?? '');
  if (type.startsWith('text/event-stream')) {
    return a.text
      .split('\n')
      .filter((l) => l.startsWith('data:') && l.length > 5)
      .map((l) => JSON.parse(l.slice(5)));
  }
  return a.text ? [JSON.parse(a.text)].flat() : [];
}

/**
 * Every answer: under 500 (but the 503 of a session cap, with Retry-After, where `atCap`), and
 * no path of this machine, no stack trace, no token, no file it must not serve.
 */
function sane(a: Answer, where: string, atCap = false): void {
  if (atCap) expect([a.status, Number(a.headers['retry-after']) >= 1], where).toEqual([503, true]);
  else expect(a.status, `${where}: ${a.text.slice(0, 300)}`).toBeLessThan(500);
  const text = a.text;
  for (const secret of [TOKEN, MARKER, world.dir, dirname(world.dir), process.cwd()]) {
    expect(text.includes(secret), `${where} names ${secret}: ${text.slice(0, 300)}`).toBe(false);
  }
  expect(text, where).not.toMatch(/\.(?:[cm]?js|ts):\d+:\d+|node:internal|node_modules/);
}

/** A JSON-RPC answer (HTTP 200 or a refusal): an error, or a result, never neither. */
function answered(a: Answer, where: string): any {
  sane(a, where);
  // A stream may carry notifications (a log line, progress) before the answer.
  const m = messagesOf(a).find((x) => 'result' in x || 'error' in x) ?? messagesOf(a)[0];
  expect(m?.jsonrpc, `${where}: ${a.text.slice(0, 300)}`).toBe('2.0');
  expect('error' in m || 'result' in m, where).toBe(true);
  return m;
}

const leaf = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 10 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom('', '__proto__', '-1', '1e400', '../../etc/passwd', 'x'.repeat(20_000), '%00', '\u0000', 'NaN', '0x10'),
);
const junk: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    leaf,
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('__proto__', 'constructor', 'id')), tie('v'), { maxKeys: 3 }),
  ),
})).v;

describe('malformed and oversized bodies', () => {
  test('a body nested 5 000 levels deep is a 400 invalid request, in either era, not a 500', async () => {
    const deep = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
    const legacyInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"${LEGACY}","capabilities":{},"clientInfo":{"name":"x","version":"0"},"x":${deep(5000)}}}`;
    const call = modern('tools/call', { name: 'getMe', arguments: { x: 'DEEP' } }, 'getMe');
    for (const [where, headers, body] of [
      ['legacy', AUTH, legacyInit],
      ['modern', call.headers, call.body.replace('"DEEP"', deep(5000))],
      ['batch', AUTH, `[${deep(5000)}]`],
      ['arrays', AUTH, '['.repeat(100_000) + ']'.repeat(100_000)],
    ] as const) {
      const a = await send(http.url, { headers, body });
      sane(a, where);
      expect(a.status, where).toBe(400);
      expect(JSON.parse(a.text).error, where).toEqual({ code: -32600, message: 'Invalid Request: the body nests deeper than 64 levels' });
    }
    // At the bound it is served.
    const at = modern('tools/call', { name: 'getMe', arguments: {} }, 'getMe');
    const ok = await send(http.url, { headers: at.headers, body: at.body.replace('"arguments":{}', `"arguments":{"x":${deep(60)}}`) });
    expect(answered(ok, 'at the bound').error).toBeUndefined();
  });

  test('over the size limit is a 413', async () => {
    const a = await send(http.url, { headers: AUTH, body: Buffer.alloc(4 * 1024 * 1024 + 1, 0x20) });
    sane(a, 'oversized');
    expect(a.status).toBe(413);
  });

  test('any text as a body is refused under 500', async () => {
    const body = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
      junk.map((v) => JSON.stringify(v) ?? ''),
      fc.constantFrom('', '{', '{"jsonrpc":"2.0"', '[]', '[[]]', 'null', '"x"', '1', '{"__proto__":{"x":1}}', '\uFEFF{}', '\xff\xfe'),
    );
    await fc.assert(
      fc.asyncProperty(body, async (b) => sane(await send(http.url, { headers: AUTH, body: b }), `body ${String(b).slice(0, 80)}`)),
      { numRuns: RUNS * 10 },
    );
  });

  test('wrong JSON-RPC shapes in either era are JSON-RPC errors under 500', async () => {
    const session = await openSession();
    const message = fc.record(
      {
        jsonrpc: fc.oneof(fc.constant('2.0'), junk),
        id: fc.oneof(fc.integer(), fc.string({ maxLength: 5 }), junk),
        method: fc.oneof(
          fc.constantFrom(
            'tools/call',
            'tools/list',
            'resources/read',
            'initialize',
            'ping',
            'server/discover',
            'x/y',
            'subscriptions/listen',
          ),
          junk,
        ),
        params: fc.oneof(junk, fc.record({ name: junk, arguments: junk, uri: junk, _meta: fc.oneof(fc.constant(META), junk) })),
      },
      { requiredKeys: [] },
    );
    const headers = fc.constantFrom<Record<string, string>>(AUTH, session.headers, {
      ...AUTH,
      'MCP-Protocol-Version': MODERN,
      'Mcp-Method': 'tools/call',
    });
    await fc.assert(
      fc.asyncProperty(fc.oneof(message, fc.array(message, { maxLength: 3 })), headers, async (m, h) => {
        sane(await send(http.url, { headers: h, body: JSON.stringify(m) }), `message ${JSON.stringify(m).slice(0, 200)}`);
      }),
      { numRuns: RUNS * 10 },
    );
  });

  test('a batch is served in a 2025-era session as the SDK does (at most 100), refused clearly otherwise', async () => {
    const session = await openSession();
    const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });
    const two = await send(http.url, { headers: session.headers, body: JSON.stringify([ping(1), ping(2)]) });
    expect(
      messagesOf(two)
        .map((m) => m.id)
        .sort(),
    ).toEqual([1, 2]);
    const many = await send(http.url, { headers: session.headers, body: JSON.stringify(Array.from({ length: 101 }, (_, i) => ping(i))) });
    expect([many.status, JSON.parse(many.text).error.code]).toEqual([400, -32600]);
    const noSession = await send(http.url, {
      headers: AUTH,
      body: JSON.stringify([
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'x', version: '0' } },
        },
      ]),
    });
    expect([noSession.status, JSON.parse(noSession.text).error.message]).toEqual([
      400,
      'Invalid Request: a JSON-RPC batch needs a session; send initialize alone first',
    ]);
    const modernInBatch = await send(http.url, { headers: session.headers, body: JSON.stringify([JSON.parse(modern('ping', {}).body)]) });
    expect(modernInBatch.status).toBe(400);
    const empty = await send(http.url, { headers: AUTH, body: '[]' });
    expect(empty.status).toBe(400);
    for (const a of [two, many, noSession, modernInBatch, empty]) sane(a, 'batch');
  });
});

describe('every tool with wrong arguments', () => {
  test('tools/list, then each tool called with garbage in both eras: a result with isError or a JSON-RPC error, never a 500', async () => {
    const session = await openSession();
    // Each era's list, and the tools a list does not show (confirmMoneyMove, the Account view's only).
    const listed = new Map<string, { properties?: Record<string, unknown> }>();
    for (const list of [modern('tools/list', {}), { headers: session.headers, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' }]) {
      for (const t of answered(await send(http.url, list), 'tools/list').result.tools) listed.set(t.name, t.inputSchema);
    }
    expect(world.tools.map((t) => t.name)).toEqual(expect.arrayContaining([...listed.keys()]));
    let results = 0;
    for (const tool of world.tools) {
      const schema = listed.get(tool.name) ?? (tool.inputSchema as { properties?: Record<string, unknown> });
      const names = Object.keys(schema.properties ?? {});
      const args = fc.oneof(
        names.length > 0 ? fc.dictionary(fc.constantFrom(...names), junk, { maxKeys: names.length, minKeys: 1 }) : fc.constant({}),
        fc.dictionary(fc.string({ maxLength: 8 }), junk, { maxKeys: 3 }),
        junk,
      );
      await fc.assert(
        fc.asyncProperty(args, fc.boolean(), async (a, inSession) => {
          const where = `${tool.name}(${JSON.stringify(a)?.slice(0, 200)}) ${inSession ? LEGACY : MODERN}`;
          const call = modern('tools/call', { name: tool.name, arguments: a }, tool.name);
          const answer = inSession
            ? await send(http.url, {
                headers: session.headers,
                body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool.name, arguments: a } }),
              })
            : await send(http.url, call);
          const m = answered(answer, where);
          if ('result' in m) results++;
        }),
        { numRuns: RUNS },
      );
    }
    // Some garbage reached the tools themselves (not every call refused by the protocol's schema check).
    expect(results).toBeGreaterThan(0);
  }, 120_000);
});

describe('resource URIs that climb out of their folder', () => {
  const CLIMBS = [
    'workspace://lists/../../etc/passwd',
    'workspace://lists/..%2f..%2fetc%2fpasswd',
    'workspace://lists/%2e%2e/%2e%2e/etc/passwd',
    'workspace://lists/%E0%A4%A',
    'workspace://lists/%',
    'workspace://exports/../contacts-secret.jsonl',
    'workspace://exports/..%2fcontacts-secret.jsonl',
    'workspace://exports/..%2f..%2f..%2fetc%2fpasswd',
    'workspace://exports/%2e%2e%2fcontacts-secret.jsonl',
    'workspace://exports/%252e%252e%252fcontacts-secret.jsonl',
    'workspace://exports/contacts-..%2f..%2fcontacts-secret.jsonl',
    'workspace://exports/contacts-x.jsonl%00.txt',
    'workspace://exports/..\\contacts-secret.jsonl',
    'workspace://exports/..%5ccontacts-secret.jsonl',
    'workspace://exports//etc/passwd',
    'workspace://exports/' + encodeURIComponent(join('..', 'contacts-secret.jsonl')),
    'workspace://exports/contacts-x.jsonl?offset=-1',
    'workspace://exports/contacts-x.jsonl?offset=99999999999999999999&limit=0',
    'workspace://exports@evil/contacts-secret.jsonl',
    'workspace://EXPORTS/../contacts-secret.jsonl',
    'workspace://audit?limit=-1',
    'workspace://audit?since=..%2f..',
    'workspace://audit/../../etc/passwd',
    'ui://workspace/../../etc/passwd',
    'ui://workspace/%2e%2e%2fcontacts-secret.jsonl',
    'file:///etc/passwd',
    '',
    'x'.repeat(10_000),
  ];

  async function read(uri: string, inSession?: Record<string, string>): Promise<any> {
    const answer = inSession
      ? await send(http.url, {
          headers: inSession,
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri } }),
        })
      : await send(http.url, modern('resources/read', { uri }, uri));
    const m = answered(answer, `read ${uri.slice(0, 100)}`);
    expect(m.error, `read ${uri.slice(0, 100)}: ${answer.text.slice(0, 200)}`).toBeDefined();
    expect(answer.text).not.toContain('root:');
  }

  test('each known climb is a JSON-RPC error, in either era', async () => {
    const session = await openSession();
    for (const uri of CLIMBS) {
      await read(uri);
      await read(uri, session.headers);
    }
  });

  test('generated climbs are JSON-RPC errors', async () => {
    const segment = fc.oneof(
      fc.constantFrom(
        '..',
        '%2e%2e',
        '%2E%2E',
        '.%2e',
        '..%2f',
        '..%5c',
        '%252e%252e',
        '.',
        '',
        'contacts-secret.jsonl',
        'etc',
        'passwd',
        '%00',
      ),
      fc.string({ maxLength: 6 }).map(encodeURIComponent),
    );
    const uri = fc
      .tuple(
        fc.constantFrom('workspace://lists/', 'workspace://exports/', 'workspace://audit/', 'ui://workspace/'),
        fc.array(segment, { minLength: 1, maxLength: 6 }),
        fc.constantFrom('/', '%2f', '%2F', '\\'),
      )
      .map(([prefix, parts, sep]) => prefix + parts.join(sep));
    await fc.assert(
      fc.asyncProperty(uri, async (u) => {
        const answer = await send(http.url, modern('resources/read', { uri: u }, u));
        sane(answer, `read ${u}`);
        expect(answer.text).not.toContain('root:');
      }),
      { numRuns: RUNS * 10 },
    );
  });
});

describe('odd headers and protocol versions', () => {
  test('each is refused under 500, and a refusal names no token', async () => {
    const session = await openSession();
    const call = modern('tools/call', { name: 'getMe', arguments: {} }, 'getMe');
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'x', version: '0' } },
    });
    // [what, headers, body, the status when one is wanted (else any under 500)]
    const cases: [string, Record<string, string | string[]>, string, number?][] = [
      ['no Accept', { ...call.headers, Accept: '' }, call.body],
      ['Accept text/html', { ...call.headers, Accept: 'text/html' }, call.body],
      [
        'Accept text/html, legacy',
        { ...session.headers, Accept: 'text/html' },
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
        406,
      ],
      ['initialize Accept text/html', { ...AUTH, Accept: 'text/html' }, initialize, 406],
      ['Content-Type text/plain', { ...call.headers, 'Content-Type': 'text/plain' }, call.body, 415],
      ['no Content-Type', { Accept: AUTH.Accept, Authorization: AUTH.Authorization }, call.body, 415],
      ['Content-Type json latin1', { ...call.headers, 'Content-Type': 'application/json; charset=latin1' }, call.body],
      ['version 1999-01-01', { ...call.headers, 'MCP-Protocol-Version': '1999-01-01' }, call.body],
      ['version garbage', { ...call.headers, 'MCP-Protocol-Version': '../../\u0001'.replace('\u0001', 'x') }, call.body],
      ['version modern on initialize', { ...AUTH, 'MCP-Protocol-Version': MODERN }, initialize],
      [
        'version unsupported in session',
        { ...session.headers, 'MCP-Protocol-Version': '2024-01-01' },
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
        400,
      ],
      ['version long', { ...call.headers, 'MCP-Protocol-Version': 'v'.repeat(4000) }, call.body],
      ['Mcp-Method mismatch', { ...call.headers, 'Mcp-Method': 'tools/list' }, call.body],
      ['Mcp-Name mismatch', { ...call.headers, 'Mcp-Name': 'deleteContact' }, call.body],
      ['Mcp-Name bad base64', { ...call.headers, 'Mcp-Name': '=?base64?***?=' }, call.body],
      [
        'session id twice',
        { ...session.headers, 'Mcp-Session-Id': [session.id, session.id] },
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
        404,
      ],
      [
        'session id two',
        { ...session.headers, 'Mcp-Session-Id': [session.id, randomUUID()] },
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
        404,
      ],
      [
        'session id unknown',
        { ...session.headers, 'Mcp-Session-Id': randomUUID() },
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
        404,
      ],
      [
        'session id huge',
        { ...session.headers, 'Mcp-Session-Id': 's'.repeat(8000) },
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
        404,
      ],
      ['header over 16 KB', { ...call.headers, 'X-Junk': 'j'.repeat(20_000) }, call.body, 431],
      ['no token', { ...call.headers, Authorization: '' }, call.body, 401],
      ['wrong token', { ...call.headers, Authorization: `Bearer ${TOKEN}x` }, call.body, 401],
      ['token twice', { ...call.headers, Authorization: `Bearer ${TOKEN} ${TOKEN}` }, call.body, 401],
      ['Basic', { ...call.headers, Authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` }, call.body, 401],
      ['Host elsewhere', { ...call.headers, Host: 'evil.example' }, call.body, 403],
      ['Origin elsewhere', { ...call.headers, Origin: 'https://evil.example' }, call.body, 403],
      ['Origin garbage', { ...call.headers, Origin: '::::' }, call.body, 403],
    ];
    for (const [where, headers, body, status] of cases) {
      const a = await send(http.url, { headers, body });
      sane(a, where);
      if (status !== undefined) expect(a.status, `${where}: ${a.text.slice(0, 200)}`).toBe(status);
    }
    for (const method of ['PUT', 'PATCH', 'OPTIONS', 'HEAD', 'GET', 'DELETE']) {
      const a = await send(http.url, { method, headers: AUTH });
      sane(a, method);
      expect(a.status, method).toBeGreaterThanOrEqual(400);
    }
    for (const path of ['/', '/mcp/', '/MCP', '/mcp/../etc/passwd', '/%2e%2e/etc/passwd', `/mcp/${'x'.repeat(5000)}`]) {
      const a = await send(http.url.replace('/mcp', path), { headers: AUTH, body: call.body });
      sane(a, path);
    }
    // The session lives on through all of it.
    const ping = await send(http.url, { headers: session.headers, body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' }) });
    expect(messagesOf(ping)[0].result).toEqual({});
  });

  test('any header value is refused or served under 500', async () => {
    const name = fc.constantFrom(
      'Accept',
      'Content-Type',
      'MCP-Protocol-Version',
      'Mcp-Session-Id',
      'Mcp-Method',
      'Mcp-Name',
      'Authorization',
      'Origin',
    );
    const value = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.constantFrom('', MODERN, LEGACY, '2025-03-26', '2024-11-05', '*/*', 'application/json'),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(
          name,
          value.map((v) => v.replace(/[^\x20-\x7e]/g, '')),
          { maxKeys: 4 },
        ),
        fc.boolean(),
        async (odd, inModern) => {
          const base = inModern
            ? modern('tools/call', { name: 'getMe', arguments: {} }, 'getMe')
            : { headers: AUTH, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) };
          sane(await send(http.url, { headers: { ...base.headers, ...odd }, body: base.body }), `headers ${JSON.stringify(odd)}`);
        },
      ),
      { numRuns: RUNS * 10 },
    );
  });
});

describe('sessions opened and abandoned', () => {
  const servers: McpHttpServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });
  async function serve(sessions: HttpOptions['sessions']): Promise<McpHttpServer> {
    const s = await serveMcpHttp(world.context, world.tools, { host: '127.0.0.1', port: 0, token: TOKEN, sessions });
    servers.push(s);
    return s;
  }
  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'fuzz', version: '0' } },
  });
  /** The server instances listening for list changes: one a session open (what an abandoned session holds). */
  const listening = () => (world.context['listeners'] as Set<unknown>).size;

  test('at the cap a new session is a 503 with Retry-After (when the first idle one expires); an idle one expires and frees its place', async () => {
    let clock = 0;
    const s = await serve({ max: 5, now: () => clock });
    const open = [];
    for (let i = 0; i < 5; i++) open.push(await openSession(s.url));
    const refused = await Promise.all(Array.from({ length: 50 }, () => send(s.url, { headers: AUTH, body: initialize })));
    for (const a of refused) {
      sane(a, 'at the cap', true);
      expect([JSON.parse(a.text).error.message, a.headers['retry-after']]).toEqual(['Too many sessions open; try again later', '1800']);
    }
    clock += 10 * 60_000;
    expect((await send(s.url, { headers: AUTH, body: initialize })).headers['retry-after']).toBe('1200');
    // One is in use (its GET stream open) past the idle time (30 minutes by default): it stays.
    const stream = new AbortController();
    const listen = await fetch(s.url, { headers: { ...open[0]!.headers, Accept: 'text/event-stream' }, signal: stream.signal });
    expect(listen.status).toBe(200);
    clock += 30 * 60_000;
    const after = await send(s.url, { headers: AUTH, body: initialize });
    expect(after.status, after.text).toBe(200);
    for (const o of open.slice(1)) {
      const gone = await send(s.url, { headers: o.headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) });
      expect(gone.status).toBe(404);
    }
    const kept = await send(s.url, { headers: open[0]!.headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) });
    expect(messagesOf(kept)[0].result).toEqual({});
    stream.abort();
  });

  test('thousands opened and abandoned: at most the cap held, all expire, and what they held is let go', async () => {
    let clock = 0;
    const s = await serve({ max: 500, idleMs: 60_000, now: () => clock });
    const before = listening();
    // Initializations refused by the transport (not acceptable) hold nothing.
    for (let i = 0; i < 50; i++) {
      const a = await send(s.url, { headers: { ...AUTH, Accept: 'application/json' }, body: initialize });
      expect(a.status).toBe(406);
    }
    expect(listening()).toBe(before);
    const ids: string[] = [];
    let refused = 0;
    const total = Math.max(2000, RUNS * 250);
    for (let i = 0; i < total; i += 25) {
      const batch = await Promise.all(Array.from({ length: 25 }, () => send(s.url, { headers: AUTH, body: initialize })));
      for (const a of batch) {
        if (a.status === 200) ids.push(a.headers['mcp-session-id'] as string);
        else {
          sane(a, 'opening', true);
          refused++;
        }
      }
    }
    expect([ids.length, refused]).toEqual([500, total - 500]);
    expect(listening() - before).toBe(500);
    // A minute without a request: all expire at the next one, and let go of what they held.
    clock += 60_000;
    const fresh = await send(s.url, { headers: AUTH, body: initialize });
    expect(fresh.status).toBe(200);
    expect(listening() - before).toBe(1);
    for (const id of ids.slice(-50)) {
      const gone = await send(s.url, {
        headers: { ...AUTH, 'Mcp-Session-Id': id, 'MCP-Protocol-Version': LEGACY },
        body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      });
      expect(gone.status).toBe(404);
    }
  }, 60_000);

  test('--auth key: one owner at their own cap gets a 503, another still opens', async () => {
    const owners: Record<string, number> = { 'alice-key': 1, 'bob-key': 2 };
    const s = await serveMcpHttpByKey(
      {
        owner: async (key) => (owners[key] ? { id: owners[key]! } : { status: 401, message: 'Unauthenticated.' }),
        served: async () => ({ ctx: world.context, tools: world.tools }),
      },
      { host: '127.0.0.1', port: 0, sessions: { perOwner: 2, max: 10 } },
    );
    servers.push(s);
    const as = (key: string) => ({ ...JSON_HEADERS, Authorization: `Bearer ${key}` });
    await openSession(s.url, as('alice-key'));
    await openSession(s.url, as('alice-key'));
    const third = await send(s.url, { headers: as('alice-key'), body: initialize });
    sane(third, 'alice at her cap', true);
    await openSession(s.url, as('bob-key'));
  });
});
