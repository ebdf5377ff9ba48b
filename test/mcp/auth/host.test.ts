/**
 * DNS rebinding, as an outside page tries it: once its name resolves to 127.0.0.1, a page sends
 * its own name as the Host (and Origin). The contract's rule (Hosted for a team): "Every
 * request's `Host` (and `Origin`, when sent) must name this server exactly: a loopback name
 * (`127.0.0.1`, `localhost`, `[::1]`), the host it was bound to, or the public URL's host […].
 * Anything else — `127.0.0.1.nip.io`, `localhost.example` — is refused with `403` before any
 * work." Held here in every `--auth` mode, both eras, `/mcp` and sign-in's addresses, through the
 * built CLI; and the one loopback rule that also decides whether `--http` runs without a token.
 */
import { request } from 'node:http';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { cliEnv, spawnAnnounced, type Announced } from '../../helpers/cli.js';
import { stop } from '../../helpers/temp.js';
import { seedDb, tempDir } from '../../helpers/world.js';
import { mcpFixture } from '../harness.js';
import { freePort, seedWorld, startOAuth } from '../oauth-flow.js';
import { isLoopbackHost } from '../../../src/common/loopback.js';
import { HostCheck } from '../../../src/mcp/auth/host.js';

/** Names a rebinding page sends, each once its name resolves to this machine. */
const REBINDING = [
  '127.0.0.1.nip.io',
  '127.evil.example',
  'localhost.example',
  '[::1].example',
  '2130706433', // 127.0.0.1 as one decimal number
  '0x7f000001', // and in hex
  '0x7f.0.0.1',
  '127.1',
  '0177.0.0.1',
  'localhost.',
];

describe('the one loopback rule (src/common/loopback.ts)', () => {
  test('a loopback host as written: localhost, ::1, four decimal parts in 127/8', () => {
    for (const h of ['localhost', 'LOCALHOST', '127.0.0.1', '127.8.9.10', '::1', '[::1]']) expect(isLoopbackHost(h), h).toBe(true);
  });

  test('nothing that only begins like one, nor another spelling of 127.0.0.1, nor any other address', () => {
    for (const h of [...REBINDING, '', '128.0.0.1', '0.0.0.0', '::', '10.0.0.1', 'example.com', '::ffff:127.0.0.1'])
      expect(isLoopbackHost(h), h).toBe(false);
  });
});

describe('the Host and Origin allowlist (src/mcp/auth/host.ts)', () => {
  const req = (host: string | undefined, origin?: string, url = '/mcp') => ({
    headers: { host, ...(origin === undefined ? {} : { origin }) },
    rawHeaders: host === undefined ? [] : ['Host', host],
    url,
  });

  test('bound to 127.0.0.1: the loopback names on any port; every rebinding name refused', () => {
    const check = new HostCheck({ bound: '127.0.0.1' });
    for (const h of ['127.0.0.1:8765', 'localhost:8765', '[::1]:8765', 'LocalHost', '127.0.0.1'])
      expect(check.hostAndOrigin(req(h)), h).toBeUndefined();
    for (const name of REBINDING) {
      expect(check.host(req(`${name}:8765`)), name).toMatch(/^Host not allowed/);
      expect(check.hostAndOrigin(req(`${name}:8765`, `http://${name}:8765`)), name).toMatch(/^Host not allowed/);
    }
    expect(check.host(req(undefined))).toBe('Missing Host header');
    // A second Host, or an absolute-form target, is what a proxy may read instead.
    expect(check.host({ ...req('127.0.0.1:8765'), rawHeaders: ['Host', '127.0.0.1:8765', 'host', '127.0.0.1.nip.io'] })).toBe(
      'More than one Host header',
    );
    expect(check.host(req('127.0.0.1:8765', undefined, 'http://127.0.0.1.nip.io:8765/mcp'))).toMatch(/must be a path/);
    expect(check.host(req('127.0.0.2:8765'))).toMatch(/^Host not allowed/);
  });

  test('a foreign Origin with a loopback Host is refused; a loopback origin, or none, is served', () => {
    const check = new HostCheck({ bound: '127.0.0.1' });
    for (const o of [
      'http://evil.example',
      'http://127.0.0.1.nip.io:8765',
      'http://0x7f000001:8765',
      'null',
      'file://',
      'http://localhost.example',
    ])
      expect(check.hostAndOrigin(req('127.0.0.1:8765', o)), o).toMatch(/^Origin not allowed/);
    for (const o of ['http://localhost:6274', 'http://127.0.0.1:8765', 'https://[::1]'])
      expect(check.hostAndOrigin(req('127.0.0.1:8765', o)), o).toBeUndefined();
  });

  test('the bound address, the public URL host and --allowed-hosts are served; bound to every interface, any name unless listed', () => {
    expect(new HostCheck({ bound: '10.1.2.3' }).host(req('10.1.2.3:80'))).toBeUndefined();
    expect(new HostCheck({ bound: '::1' }).host(req('[::1]:80'))).toBeUndefined();
    expect(
      new HostCheck({ bound: '127.0.0.1', publicHost: 'mcp.example.com' }).hostAndOrigin(req('mcp.example.com', 'https://mcp.example.com')),
    ).toBeUndefined();
    const open = new HostCheck({ bound: '0.0.0.0' });
    expect(open.hostAndOrigin(req('anything.example:80', 'http://anything.example:80'))).toBeUndefined();
    expect(open.hostAndOrigin(req('anything.example:80', 'http://evil.example'))).toMatch(/^Origin not allowed/);
    const listed = new HostCheck({ bound: '0.0.0.0', allowedHosts: ['mcp.example.com'] });
    expect(listed.host(req('mcp.example.com:443'))).toBeUndefined();
    expect(listed.host(req('localhost:8765'))).toBeUndefined();
    expect(listed.host(req('other.example'))).toMatch(/^Host not allowed/);
  });
});

/** One raw request with the Host and headers given (fetch cannot set a Host). */
function send(
  url: string,
  o: { method?: string; path?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; text: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const r = request(
      { host: u.hostname, port: u.port, method: o.method ?? 'POST', path: o.path ?? u.pathname, headers: o.headers ?? {} },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    r.on('error', reject);
    r.end(o.body);
  });
}

const JSON_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
/** A 2025-era initialize, and a 2026-07-28 tool call that moves 5.00 to account 500 (the fixture's, Alice's contact's). */
const INIT_2025 = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});
const TOP_UP_2026 = JSON.stringify({
  jsonrpc: '2.0',
  id: 2,
  method: 'tools/call',
  params: { name: 'addFundsToContactAccount', arguments: { account_id: 500, amount: 5, idempotency_key: 'rebind-1' }, _meta: META },
});
const ERA_2026 = { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'addFundsToContactAccount' };
const BALANCE_2026 = JSON.stringify({
  jsonrpc: '2.0',
  id: 3,
  method: 'tools/call',
  params: { name: 'getContactAccounts', arguments: { contact_id: 100 }, _meta: META },
});

let dbFile: string;
beforeAll(() => {
  dbFile = seedDb(mcpFixture());
});
const running: Announced[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) await stop(r.proc);
});

async function startMcp(args: string[], env: Record<string, string> = {}): Promise<{ url: string; port: string }> {
  const started = await spawnAnnounced(
    ['mcp', '--db', dbFile, '--http', '--port', '0', ...args],
    /(http:\/\/\S+\/mcp)/,
    cliEnv({ WORKSPACE_API_KEY: 'alice-key', ...env }),
  );
  running.push(started);
  return { url: started.url, port: new URL(started.url).port };
}

/** Both eras' requests with `host` (and the same Origin): every status. */
async function bothEras(url: string, host: string, auth: Record<string, string> = {}): Promise<number[]> {
  const headers = { ...JSON_HEADERS, ...auth, Host: host, Origin: `http://${host}` };
  const a = await send(url, { headers, body: INIT_2025 });
  const b = await send(url, { headers: { ...headers, ...ERA_2026 }, body: TOP_UP_2026 });
  return [a.status, b.status];
}

/** Alice's account 500 as getContactAccounts answers it over `url`. */
async function balance(url: string, auth: Record<string, string> = {}): Promise<number> {
  const r = await send(url, { headers: { ...JSON_HEADERS, ...auth, ...ERA_2026, 'Mcp-Name': 'getContactAccounts' }, body: BALANCE_2026 });
  expect(r.status).toBe(200);
  const accounts = (JSON.parse(r.text) as { result: { structuredContent: { data: { id: number; amount: number }[] } } }).result
    .structuredContent.data;
  return accounts.find((a) => a.id === 500)!.amount;
}

describe('every mode refuses a rebinding Host with 403 before any work (the built CLI)', () => {
  test('--auth token, no token on 127.0.0.1: both eras refused, no money moved; loopback names and the bound host served', async () => {
    const { url, port } = await startMcp([]);
    const before = await balance(url);
    for (const name of REBINDING) expect(await bothEras(url, `${name}:${port}`), name).toEqual([403, 403]);
    // A foreign page with a loopback Host.
    const foreign = await send(url, {
      headers: { ...JSON_HEADERS, Host: `127.0.0.1:${port}`, Origin: 'http://127.0.0.1.nip.io' },
      body: INIT_2025,
    });
    expect(foreign.status).toBe(403);
    expect(await balance(url)).toBe(before);
    for (const name of ['127.0.0.1', 'localhost', '[::1]'])
      expect((await send(url, { headers: { ...JSON_HEADERS, Host: `${name}:${port}` }, body: INIT_2025 })).status, name).toBe(200);
  });

  test('--auth token bound to every interface with --allowed-hosts: only the listed names and loopback ones', async () => {
    const { port } = await startMcp(['--host', '0.0.0.0', '--allowed-hosts', 'mcp.example.test'], { WORKSPACE_MCP_TOKEN: 'tok-1' });
    const url = `http://127.0.0.1:${port}/mcp`;
    const auth = { Authorization: 'Bearer tok-1' };
    expect((await send(url, { headers: { ...JSON_HEADERS, ...auth, Host: 'mcp.example.test' }, body: INIT_2025 })).status).toBe(200);
    expect((await send(url, { headers: { ...JSON_HEADERS, ...auth, Host: `localhost:${port}` }, body: INIT_2025 })).status).toBe(200);
    expect(await bothEras(url, 'other.example.test', auth)).toEqual([403, 403]);
  });

  test('only a loopback address as written runs without a token: --host 127.1, or --allowed-hosts, makes one', async () => {
    for (const args of [
      ['--host', '127.1'],
      ['--allowed-hosts', 'dev.example.test'],
    ]) {
      const started = await spawnAnnounced(
        ['mcp', '--db', dbFile, '--http', '--port', '0', ...args],
        /(http:\/\/\S+\/mcp)/,
        cliEnv({ WORKSPACE_API_KEY: 'alice-key' }),
      );
      running.push(started);
      const port = new URL(started.url).port;
      const local = `http://127.0.0.1:${port}/mcp`;
      const token = /Bearer ([\w-]+)/.exec(started.stderr())?.[1];
      expect(token, args.join(' ')).toBeTruthy();
      expect((await send(local, { headers: { ...JSON_HEADERS, Host: `127.0.0.1:${port}` }, body: INIT_2025 })).status).toBe(401);
      expect(
        (await send(local, { headers: { ...JSON_HEADERS, Host: `127.0.0.1:${port}`, Authorization: `Bearer ${token}` }, body: INIT_2025 }))
          .status,
      ).toBe(200);
    }
  });

  test('--auth key: a rebinding Host is refused even with a good key', async () => {
    const { url, port } = await startMcp(['--auth', 'key']);
    const auth = { Authorization: 'Bearer alice-key' };
    const before = await balance(url, auth);
    for (const name of ['127.0.0.1.nip.io', 'localhost.example', '2130706433'])
      expect(await bothEras(url, `${name}:${port}`, auth), name).toEqual([403, 403]);
    expect(await balance(url, auth)).toBe(before);
  });

  test('--auth oauth: /mcp and every sign-in address refuse a rebinding Host; the public URL host is served', async () => {
    const run = await startOAuth(await seedWorld());
    running.push(run);
    const port = new URL(run.base).port;
    const paths = [
      ['GET', '/.well-known/oauth-authorization-server'],
      ['GET', '/.well-known/oauth-protected-resource/mcp'],
      ['POST', '/oauth/register'],
      ['GET', '/oauth/authorize?client_id=x'],
      ['POST', '/oauth/token'],
      ['POST', '/mcp'],
    ] as const;
    for (const [method, path] of paths) {
      for (const name of ['127.0.0.1.nip.io', '[::1].example', '0x7f000001']) {
        const r = await send(run.base, {
          method,
          path,
          headers: { ...JSON_HEADERS, Host: `${name}:${port}` },
          body: method === 'POST' ? '{}' : undefined,
        });
        expect([path, name, r.status]).toEqual([path, name, 403]);
      }
    }
    const meta = await send(run.base, {
      method: 'GET',
      path: '/.well-known/oauth-authorization-server',
      headers: { Host: `127.0.0.1:${port}` },
    });
    expect(meta.status).toBe(200);
  });

  test('--auth oauth behind a TLS proxy: the public URL host is served, on /mcp and sign-in alike', async () => {
    const port = await freePort();
    const started = await spawnAnnounced(
      ['mcp', '--http', '--auth', 'oauth', '--public-url', 'https://mcp.example.test', '--port', String(port), '--db', await seedWorld()],
      /(https:\/\/\S+\/mcp)/,
      cliEnv({ WORKSPACE_DATA_DIR: tempDir(), WORKSPACE_SECRET: 'ef'.repeat(32) }),
    );
    running.push(started);
    const url = `http://127.0.0.1:${port}/mcp`;
    const meta = await send(url, { method: 'GET', path: '/.well-known/oauth-authorization-server', headers: { Host: 'mcp.example.test' } });
    expect(meta.status).toBe(200);
    expect(JSON.parse(meta.text).issuer).toBe('https://mcp.example.test');
    const headers = { ...JSON_HEADERS, Host: 'mcp.example.test', Origin: 'https://mcp.example.test' };
    // Past the Host check, to the sign-in's own 401.
    expect((await send(url, { headers, body: INIT_2025 })).status).toBe(401);
    expect((await send(url, { headers: { ...headers, Host: 'mcp.example.test.evil.example' }, body: INIT_2025 })).status).toBe(403);
  });
});
