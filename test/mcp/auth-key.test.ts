/**
 * `mcp --http --auth key`: one server for many people, each request acting as the owner of the
 * Workspace API key it carries as its bearer. The built CLI on a seeded database (Alice: owner
 * 1, bot 10, account 500; Bob: owner 2, bot 20, account 600), real SDK clients of both eras.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { cliEnv, INITIALIZE, runCli, runCliAsync, spawnAnnounced, spawnServe, type Announced } from '../helpers/cli.js';
import { usePostgres } from '../helpers/postgres.js';
import { stop } from '../helpers/temp.js';
import { seedDb, tempDir, type Fixture } from '../helpers/world.js';
import { connectHttp, ERAS, type McpClient } from './clients.js';
import { firstJson, manyContacts, mcpFixture } from './harness.js';
import { openStore } from '../helpers/store.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** The MCP fixture, with an account of Bob's: 600, of his contact 200. */
function twoOwners(): Fixture {
  const f = mcpFixture();
  return { ...f, accounts: [...(f.accounts as unknown[]), { id: 600, contact_id: 200, currency: 'USD', amount: 1000 }] };
}

async function startKeyed(args: string[], extra: Record<string, string> = {}): Promise<Announced> {
  const started = await spawnAnnounced(
    ['mcp', '--http', '--port', '0', '--auth', 'key', ...args],
    /(http:\/\/\S+\/mcp)/,
    cliEnv({ WORKSPACE_DATA_DIR: tempDir(), ...extra }),
  );
  cleanups.push(() => stop(started.proc));
  return started;
}

async function connectAs(era: (typeof ERAS)[number], url: string, key: string): Promise<McpClient> {
  const client = await connectHttp(era, url, { Authorization: `Bearer ${key}` });
  cleanups.push(() => client.close());
  return client;
}

/** POST `body` with `headers`; the status, the WWW-Authenticate header and the answer's text. */
async function post(url: string, headers: Record<string, string>, body: object): Promise<{ status: number; auth?: string; text: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  // An SSE answer stays open for the session's later messages: its first event is enough.
  const reader = res.body!.getReader();
  const first = await reader.read();
  await reader.cancel();
  return { status: res.status, auth: res.headers.get('www-authenticate') ?? undefined, text: new TextDecoder().decode(first.value) };
}

const initialize = (url: string, headers: Record<string, string>) => post(url, headers, { ...INITIALIZE, id: 1 });
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
const data = (r: CallToolResult) => (r.structuredContent as { data: any }).data;

describe('mcp --http --auth key on the built-in service', () => {
  test("no key, an unknown key, a free or blocked owner's key: 401 with WWW-Authenticate: Bearer, nothing answered", async () => {
    const { url } = await startKeyed(['--db', seedDb(twoOwners())]);
    for (const headers of [{}, bearer('nobody-key'), bearer('fran-key'), bearer('blocked-key'), { Authorization: 'Basic YWxpY2Uta2V5' }]) {
      const r = await initialize(url, headers);
      expect(r.status, JSON.stringify(headers)).toBe(401);
      expect(r.auth).toBe('Bearer');
      expect(r.text).not.toMatch(/serverInfo/);
    }
    expect((await initialize(url, bearer('alice-key'))).status).toBe(200);
  });

  test.each(ERAS)('%s: Alice and Bob at once on one server, each as themselves', async (era) => {
    const { url } = await startKeyed(['--db', seedDb(twoOwners())]);
    const [alice, bob] = await Promise.all([connectAs(era, url, 'alice-key'), connectAs(era, url, 'bob-key')]);
    const rounds = await Promise.all(
      Array.from({ length: 4 }, (_, i) => (i % 2 ? bob : alice).callTool({ name: 'getMe', arguments: {} }).then((r) => data(r).name)),
    );
    expect(rounds).toEqual(['Alice', 'Bob', 'Alice', 'Bob']);
    // Each one's default bot and contacts: their own.
    const ws = await bob.callTool({ name: 'getWorkspace', arguments: {} });
    expect(firstJson(ws)).toMatchObject({ owner: { id: 2 }, default_bot_id: 20 });
    expect(firstJson(await alice.callTool({ name: 'getWorkspace', arguments: {} }))).toMatchObject({
      owner: { id: 1 },
      default_bot_id: 10,
    });
    const found = await bob.callTool({ name: 'findContacts', arguments: { query: 'Ann' } });
    expect(JSON.stringify(firstJson(found))).not.toMatch(/"Ann"/);
    // Each one's search finds their own contacts (each owner's context has a backend acting as them).
    expect(JSON.stringify(firstJson(await bob.callTool({ name: 'findContacts', arguments: { query: 'fan' } })))).toMatch(/Bob fan/);
    expect(JSON.stringify(firstJson(await alice.callTool({ name: 'findContacts', arguments: { query: 'Ann' } })))).toMatch(/"Ann"/);
    const own = await alice.callTool({ name: 'getContactAccounts', arguments: { contact_id: 100 } });
    expect(data(own)[0].id).toBe(500);
    const other = await bob.callTool({ name: 'getContactAccounts', arguments: { contact_id: 100 } });
    expect(other.isError).toBe(true);
  });

  test('no MCP tasks are offered: work that went on after its request would have no key', async () => {
    const { url } = await startKeyed(['--db', seedDb(twoOwners())]);
    const init = await initialize(url, bearer('alice-key'));
    expect(init.text).toContain('"capabilities"');
    expect(init.text).not.toContain('"tasks"');
    const alice = await connectAs('2025-11-25', url, 'alice-key');
    expect((await alice.listTools()).tools.find((t) => t.name === 'runBulk')).not.toHaveProperty('execution');
  });

  test.each(ERAS)("%s: an idempotency key of Alice's never replays to Bob", async (era) => {
    const { url } = await startKeyed(['--db', seedDb(twoOwners())]);
    const [alice, bob] = await Promise.all([connectAs(era, url, 'alice-key'), connectAs(era, url, 'bob-key')]);
    const topUp = { account_id: 500, amount: 250, description: 'Bonus', idempotency_key: 'order-1' };
    const first = await alice.callTool({ name: 'addFundsToContactAccount', arguments: topUp });
    expect(first.isError).toBeFalsy();
    // Bob, the same key and arguments: refused by the API as not his account, never Alice's answer.
    const stolen = await bob.callTool({ name: 'addFundsToContactAccount', arguments: topUp });
    expect(stolen.isError).toBe(true);
    expect([403, 404]).toContain(firstJson(stolen).status);
    expect(JSON.stringify(stolen)).not.toMatch(/replayed|1250/);
    // Bob, the same key on his own account: his move, made (no conflict with Alice's key).
    const his = await bob.callTool({ name: 'addFundsToContactAccount', arguments: { ...topUp, account_id: 600 } });
    expect(his.isError).toBeFalsy();
    expect(his.structuredContent).not.toHaveProperty('replayed');
    expect(JSON.stringify(his.structuredContent)).toMatch(/1250/);
    // Alice again: her own answer, replayed.
    const again = await alice.callTool({ name: 'addFundsToContactAccount', arguments: topUp });
    expect(again.structuredContent).toEqual({ ...(first.structuredContent as object), replayed: true });
    // Each one's audit trail holds their own calls only.
    const audit = async (c: McpClient) =>
      JSON.parse(((await c.readResource({ uri: 'workspace://audit' })).contents[0] as { text: string }).text).data as Array<{
        owner_id: number;
      }>;
    expect((await audit(bob)).map((e) => e.owner_id)).toEqual([2, 2]);
    expect((await audit(alice)).map((e) => e.owner_id)).toEqual([1, 1]);
  });

  test('a 2025-era session answers only the person who opened it', async () => {
    const { url } = await startKeyed(['--db', seedDb(twoOwners())]);
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: bearer('alice-key') } });
    const client = new Client({ name: 't', version: '1' });
    await client.connect(transport);
    cleanups.push(() => client.close());
    const sid = transport.sessionId!;
    expect(sid).toBeTruthy();
    const list = { jsonrpc: '2.0', id: 5, method: 'tools/list', params: {} };
    const session = { 'Mcp-Session-Id': sid, 'Mcp-Protocol-Version': '2025-11-25' };
    expect((await post(url, { ...session, ...bearer('bob-key') }, list)).status).toBe(404);
    expect((await post(url, { ...session, ...bearer('nobody-key') }, list)).status).toBe(401);
    const me = (await client.callTool({ name: 'getMe', arguments: {} })) as CallToolResult;
    expect(data(me).name).toBe('Alice');
  });

  test.each(ERAS)("%s: Alice's export is not Bob's to read", async (era) => {
    const { url } = await startKeyed(['--db', seedDb(twoOwners())]);
    const [alice, bob] = await Promise.all([connectAs(era, url, 'alice-key'), connectAs(era, url, 'bob-key')]);
    const exp = await alice.callTool({ name: 'exportContacts', arguments: { bot_id: 10 } });
    const uri = (exp.structuredContent as { uri: string }).uri;
    expect(uri).toMatch(/^workspace:\/\/exports\//);
    expect(((await alice.readResource({ uri })).contents[0] as { text: string }).text).toMatch(/Ann/);
    await expect(bob.readResource({ uri })).rejects.toThrow();
    expect(JSON.stringify(await bob.listResources())).not.toContain(uri);
  });

  // "`admin regenerate-key --owner ID` prints the new key; the old one answers 401 at once."
  test('a key regenerated with admin regenerate-key stops working at once', async () => {
    const dbFile = seedDb(twoOwners());
    const { url } = await startKeyed(['--db', dbFile]);
    const alice = await connectAs('2026-07-28', url, 'alice-key');
    expect(data(await alice.callTool({ name: 'getMe', arguments: {} })).name).toBe('Alice');
    const regenerated = runCli(['admin', 'regenerate-key', '--owner', '1', '--db', dbFile]);
    expect(regenerated.status).toBe(0);
    const fresh = regenerated.stdout.trim();
    await expect(alice.callTool({ name: 'getMe', arguments: {} })).rejects.toThrow();
    expect((await initialize(url, bearer('alice-key'))).status).toBe(401);
    expect((await initialize(url, bearer(fresh))).status).toBe(200);
    const again = await connectAs('2026-07-28', url, fresh);
    expect(data(await again.callTool({ name: 'getMe', arguments: {} })).name).toBe('Alice');
  });

  test('a key regenerated while its request is under way: the rest of that work is refused, and the sessions it opened end', async () => {
    // 40 000 contacts of Alice's: her export reads 40 pages, and the key is regenerated after the first.
    const f = manyContacts(40_000);
    const dbFile = seedDb({ ...f, accounts: twoOwners().accounts });
    const { url } = await startKeyed(['--db', dbFile]);
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: bearer('alice-key') } });
    const client = new Client({ name: 't', version: '1' });
    await client.connect(transport);
    cleanups.push(() => client.close());
    expect(transport.sessionId).toBeTruthy();
    const store = openStore(dbFile);
    cleanups.push(() => store.close());
    let fresh: string | undefined;
    const exported = (await client.callTool({ name: 'exportContacts', arguments: { bot_id: 10 } }, undefined, {
      onprogress: () => void (fresh ??= store.owners.regenerateKey(1)),
    })) as CallToolResult;
    expect(fresh).toMatch(/\S/);
    // Its next page was refused: the export stopped there, not at its end.
    expect(exported.isError, JSON.stringify(exported)).toBe(true);
    expect(JSON.stringify(exported.content)).toMatch(/unauthorized/i);
    // The 2025-era session opened with the old key is gone, for the new key too.
    const list = { jsonrpc: '2.0', id: 5, method: 'tools/list', params: {} };
    const session = { 'Mcp-Session-Id': transport.sessionId!, 'Mcp-Protocol-Version': '2025-11-25' };
    expect((await post(url, { ...session, ...bearer(fresh!) }, list)).status).toBe(404);
    const again = await connectAs('2026-07-28', url, fresh!);
    expect(data((await again.callTool({ name: 'getMe', arguments: {} })) as CallToolResult).name).toBe('Alice');
  });

  test('a request let in with a key regenerated before its body came: 401, no session opened', async () => {
    const dbFile = seedDb(twoOwners());
    const { url } = await startKeyed(['--db', dbFile]);
    expect((await initialize(url, bearer('alice-key'))).status).toBe(200);
    // Its headers (the key, checked then) now; its body after the key changed and the new key was used.
    const slow = () => {
      const req = request(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...bearer('alice-key') },
      });
      req.flushHeaders();
      const answered = new Promise<number>((resolve, reject) => {
        req.on('response', (res) => (res.resume(), resolve(res.statusCode!)));
        req.on('error', reject);
      });
      return { answered, send: () => req.end(JSON.stringify({ ...INITIALIZE, id: 1 })) };
    };
    const legacy = slow();
    await new Promise((r) => setTimeout(r, 300));
    const store = openStore(dbFile);
    cleanups.push(() => store.close());
    const fresh = store.owners.regenerateKey(1)!;
    expect((await initialize(url, bearer(fresh))).status).toBe(200);
    legacy.send();
    expect(await legacy.answered).toBe(401);
  });

  test("--auth is checked at start: key and oauth need --http and no one person's bot; oauth an https origin (http only on loopback)", () => {
    const dbFile = seedDb(twoOwners());
    const secret = { WORKSPACE_SECRET: 'ab'.repeat(32) };
    const cases: Array<[string[], RegExp, Record<string, string>?]> = [
      [['--auth', 'key'], /--auth key needs --http/],
      [['--auth', 'oauth', '--public-url', 'https://mcp.example.com'], /--auth oauth needs --http/, secret],
      [['--http', '--auth', 'oauth'], /--auth oauth needs --public-url URL/, secret],
      // Without WORKSPACE_SECRET a SQLite database's own secret seals the keys (test/cli/first-hits.test.ts); plain http only on loopback.
      [
        ['--http', '--auth', 'oauth', '--public-url', 'http://127.0.0.1:8765', '--host', '0.0.0.0'],
        /is plain http, and --host 0\.0\.0\.0 listens beyond/,
      ],
      [['--http', '--auth', 'oauth', '--public-url', 'http://mcp.example.com'], /must be https:\/\//, secret],
      [['--http', '--auth', 'oauth', '--public-url', 'https://mcp.example.com/team'], /an origin alone/, secret],
      [['--http', '--auth', 'key', '--public-url', 'https://mcp.example.com'], /--public-url needs --auth oauth/],
      [['--http', '--person-rate', '10'], /--person-rate needs --auth key or --auth oauth/],
      [['--http', '--auth', 'sesame'], /--auth must be token, key or oauth, not sesame/],
      [['--http', '--auth', 'key', '--bot', '10'], /--bot names one person's bot/],
      [['--http', '--auth', 'oauth', '--public-url', 'https://mcp.example.com', '--bot', '10'], /--bot names one person's bot/, secret],
    ];
    for (const [args, message, env] of cases) {
      const r = runCli(['mcp', '--db', dbFile, ...args], env);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  });
});

describe('mcp --http --auth key on a remote API', () => {
  test('each request upstream with its own key: getMe is its owner', async () => {
    const served = await spawnServe(['--db', seedDb(twoOwners())]);
    cleanups.push(() => stop(served.proc));
    const { url } = await startKeyed(['--remote', served.baseUrl]);
    expect((await initialize(url, bearer('nobody-key'))).status).toBe(401);
    expect((await initialize(url, {})).status).toBe(401);
    for (const era of ERAS) {
      const [alice, bob] = await Promise.all([connectAs(era, url, 'alice-key'), connectAs(era, url, 'bob-key')]);
      const names = await Promise.all([alice, bob, alice].map(async (c) => data(await c.callTool({ name: 'getMe', arguments: {} })).name));
      expect(names).toEqual(['Alice', 'Bob', 'Alice']);
      const other = await bob.callTool({ name: 'getContactAccounts', arguments: { contact_id: 100 } });
      expect(other.isError).toBe(true);
      // Each one's own search index, synced with their own key, request after request.
      for (let i = 0; i < 2; i++) {
        const found = await bob.callTool({ name: 'findContacts', arguments: { query: 'fan' } });
        expect(found.isError, JSON.stringify(found)).toBeFalsy();
        expect(JSON.stringify(found.structuredContent)).toMatch(/Bob fan/);
        const none = await alice.callTool({ name: 'findContacts', arguments: { query: 'fan' } });
        expect(JSON.stringify(none.structuredContent)).not.toMatch(/Bob fan/);
      }
    }
  });
});

describe('mcp --http --auth key: no AsyncLocalStorage on the built-in service', () => {
  // On Node 20 an AsyncLocalStorage in use turns on promise hooks for the whole process (a
  // seventh of a tool call's CPU, docs/BENCHMARKS.md): the built-in service needs none, the
  // remote API keeps it for the key of each call upstream. A preload says when one is first run.
  const preload = (): string => {
    const file = join(tempDir(), 'als-said.cjs');
    writeFileSync(
      file,
      `const { AsyncLocalStorage } = require('node:async_hooks');
for (const m of ['run', 'enterWith']) {
  const was = AsyncLocalStorage.prototype[m];
  AsyncLocalStorage.prototype[m] = function (...a) {
    if (!globalThis.alsSaid) { globalThis.alsSaid = true; process.stderr.write('AsyncLocalStorage in use\\n'); }
    return was.apply(this, a);
  };
}
`,
    );
    return `--require ${file}`;
  };
  const used = async (args: string[]) => {
    const server = await startKeyed(args, { NODE_OPTIONS: preload() });
    const alice = await connectAs('2025-11-25', server.url, 'alice-key');
    expect(data(await alice.callTool({ name: 'getMe', arguments: {} })).name).toBe('Alice');
    expect((await alice.callTool({ name: 'findContacts', arguments: { query: 'Ann' } })).isError).toBeFalsy();
    return server.stderr().includes('AsyncLocalStorage in use');
  };

  test('--db: none run; --remote: one', async () => {
    expect(await used(['--db', seedDb(twoOwners())])).toBe(false);
    const served = await spawnServe(['--db', seedDb(twoOwners())]);
    cleanups.push(() => stop(served.proc));
    expect(await used(['--remote', served.baseUrl])).toBe(true);
  });
});

describe('mcp --http --auth key on PostgreSQL', () => {
  const pg = usePostgres();

  test("each key's owner, on the service threads; idempotency keys per owner in the shared state", async () => {
    const url = await pg.server().database();
    const fixture = join(tempDir(), 'two-owners.json');
    writeFileSync(fixture, JSON.stringify(twoOwners()));
    const seeded = await runCliAsync(['seed', fixture, '--db', url], cliEnv());
    expect(seeded.status, seeded.stderr).toBe(0);
    const started = await startKeyed(['--db', url], { WORKSPACE_SECRET: 'cd'.repeat(32) });
    expect((await initialize(started.url, bearer('nobody-key'))).status).toBe(401);
    const [alice, bob] = await Promise.all([
      connectAs('2026-07-28', started.url, 'alice-key'),
      connectAs('2025-11-25', started.url, 'bob-key'),
    ]);
    const names = await Promise.all([alice, bob].map(async (c) => data(await c.callTool({ name: 'getMe', arguments: {} })).name));
    expect(names).toEqual(['Alice', 'Bob']);
    const topUp = { account_id: 500, amount: 250, description: 'Bonus', idempotency_key: 'order-1' };
    expect((await alice.callTool({ name: 'addFundsToContactAccount', arguments: topUp })).isError).toBeFalsy();
    const his = await bob.callTool({ name: 'addFundsToContactAccount', arguments: { ...topUp, account_id: 600 } });
    expect(his.isError).toBeFalsy();
    expect(JSON.stringify(his.structuredContent)).not.toMatch(/replayed/);
  }, 60_000);
});
