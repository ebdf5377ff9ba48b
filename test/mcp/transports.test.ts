/**
 * The built CLI as clients meet it: `node dist/cli/main.js mcp` over stdio (stdout carries only
 * JSON-RPC) and `--http` over Streamable HTTP (Host, Origin and bearer token checked).
 */
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CLI, cliEnv as env, INITIALIZE, runCli, spawnAnnounced, spawnRpc, type Announced } from '../helpers/cli.js';
import { stop } from '../helpers/temp.js';
import { seedDb, tempDir } from '../helpers/world.js';
import { connectHttp, connectStdio, ERAS } from './clients.js';
import { firstJson, mcpFixture } from './harness.js';
import { withinBudget } from '../helpers/budget.js';

let dbFile: string;
beforeAll(() => {
  dbFile = seedDb(mcpFixture());
});

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

describe('stdio', () => {
  test('nothing but JSON-RPC on stdout, through initialize, tools, an error, progress and a resource', async () => {
    const rpc = spawnRpc(['mcp', '--db', join(tempDir(), 'fresh.db')]);
    cleanups.push(() => stop(rpc.proc));
    const { send, answer: waitFor } = rpc;
    send({ ...INITIALIZE, id: 1 });
    expect((await waitFor(1)).result.serverInfo.name).toBe('workspace-mcp');
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'getMe', arguments: {} } });
    send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'getContactAccounts', arguments: { contact_id: 12345 } } });
    send({
      jsonrpc: '2.0',
      id: 5,
      method: 'tools/call',
      params: { name: 'exportContacts', arguments: {}, _meta: { progressToken: 'p1' } },
    });
    send({ jsonrpc: '2.0', id: 6, method: 'resources/list' });
    send({ jsonrpc: '2.0', id: 7, method: 'nonsense/method' });
    expect((await waitFor(2)).result.tools.length).toBeGreaterThan(5);
    // A new database acts as its default owner, announced on stderr.
    expect((await waitFor(3)).result.structuredContent.data.name).toBe('Default owner');
    expect(rpc.stderr()).toMatch(/API key\s+\S+ \(the new default owner's; shown this once\)/);
    const e = await waitFor(4);
    expect(e.result.isError).toBe(true);
    expect(JSON.parse(e.result.content[0].text)).toMatchObject({ status: 404 });
    expect((await waitFor(5)).result.structuredContent.count).toBe(0);
    expect((await waitFor(6)).result.resources.map((r: { uri: string }) => r.uri)).toEqual(['workspace://workspace', 'workspace://audit']);
    expect((await waitFor(7)).error.code).toBe(-32601);
    const lines = rpc.lines();
    for (const l of lines) expect(JSON.parse(l).jsonrpc, l).toBe('2.0');
    expect(lines.some((l) => JSON.parse(l).method === 'notifications/progress')).toBe(true);
  });

  test('the SDK client over stdio: acts as the owner of $WORKSPACE_API_KEY, success and error results', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, '--db', dbFile],
      env: env({ WORKSPACE_API_KEY: 'alice-key' }),
      stderr: 'pipe',
    });
    const client = withinBudget(new Client({ name: 't', version: '1' }));
    await client.connect(transport);
    cleanups.push(() => client.close());
    const me = (await client.callTool({ name: 'getMe', arguments: {} })) as CallToolResult;
    expect((me.structuredContent as any).data.name).toBe('Alice');
    const up = (await client.callTool({
      name: 'addFundsToContactAccount',
      arguments: { account_id: 500, amount: 5, description: 'stdio', idempotency_key: 'stdio-1' },
    })) as CallToolResult;
    const again = (await client.callTool({
      name: 'addFundsToContactAccount',
      arguments: { account_id: 500, amount: 5, description: 'stdio', idempotency_key: 'stdio-1' },
    })) as CallToolResult;
    expect(again.structuredContent).toEqual({ ...(up.structuredContent as object), replayed: true });
    const bad = (await client.callTool({
      name: 'withdrawFundsFromContactAccount',
      arguments: { account_id: 500, amount: 10 ** 9, description: 'x' },
    })) as CallToolResult;
    expect(firstJson(bad)).toMatchObject({ status: 422, code: 'insufficient_funds', errors: { account_id: [expect.any(String)] } });
  });

  test('bad flags: one line on stderr and exit status 2; --remote needs $WORKSPACE_API_KEY', () => {
    const a = runCli(['mcp', '--bogus']);
    expect(a.status).toBe(2);
    expect(a.stdout).toBe('');
    const b = runCli(['mcp', '--db', dbFile, '--tools', 'getMee']);
    expect(b.status).toBe(2);
    expect(b.stderr).toMatch(/unknown tool: getMee/);
    const c = runCli(['mcp', '--remote', 'http://127.0.0.1:9/api/v1']);
    expect(c.status).toBe(2);
    expect(c.stderr).toMatch(/WORKSPACE_API_KEY/);
    const d = runCli(['mcp', '--db', dbFile, '--max-result-chars', '100']);
    expect(d.status).toBe(2);
    expect(d.stderr).toMatch(/--max-result-chars must be a whole number 5000 or more, not 100/);
  });

  test("two owners' servers on one database: workspace://audit shows each only their own entries", async () => {
    const shared = seedDb(mcpFixture());
    const as = async (key: string) => {
      const client = await connectStdio('2025-11-25', {
        command: process.execPath,
        args: [CLI, 'mcp', '--db', shared],
        env: env({ WORKSPACE_API_KEY: key }),
        stderr: 'ignore',
      });
      cleanups.push(() => client.close());
      return client;
    };
    const [alice, bob] = [await as('alice-key'), await as('bob-key')];
    const contact = (bot_id: number, name: string) => ({ bot_id, messenger: 'telegram', telegram_id: 7000 + bot_id, name });
    expect((await alice.callTool({ name: 'createOrUpdateContact', arguments: contact(10, 'Alice Made') })).isError).toBeFalsy();
    expect((await bob.callTool({ name: 'createOrUpdateContact', arguments: contact(20, 'Bob Made') })).isError).toBeFalsy();
    const audit = async (c: typeof alice) =>
      JSON.parse(((await c.readResource({ uri: 'workspace://audit' })).contents[0] as { text: string }).text).data as Array<{
        owner_id: number;
        arguments: { name: string };
      }>;
    expect((await audit(alice)).map((e) => [e.owner_id, e.arguments.name])).toEqual([[1, 'Alice Made']]);
    expect((await audit(bob)).map((e) => [e.owner_id, e.arguments.name])).toEqual([[2, 'Bob Made']]);
  });
});

describe('Streamable HTTP', () => {
  async function startHttp(args: string[], extra: Record<string, string> = {}): Promise<Announced> {
    const started = await spawnAnnounced(
      ['mcp', '--db', dbFile, '--http', '--port', '0', ...args],
      /(http:\/\/\S+\/mcp)/,
      env({ WORKSPACE_API_KEY: 'alice-key', ...extra }),
    );
    cleanups.push(() => stop(started.proc));
    return started;
  }

  /** POST `body` as a JSON-RPC client would, bytes as they are; resolves the status and the answer's text. */
  function post(url: string, headers: Record<string, string>, body: string | Uint8Array): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const req = request(
        url,
        { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers } },
        (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  /** The status of an initialize request sent with `headers`. */
  async function raw(url: string, headers: Record<string, string>): Promise<number> {
    return (await post(url, headers, JSON.stringify({ ...INITIALIZE, id: 1 }))).status;
  }

  test('the SDK client at http://127.0.0.1:N/mcp: tools succeed and fail as over stdio', async () => {
    const { url } = await startHttp([]);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const client = withinBudget(new Client({ name: 't', version: '1' }));
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    cleanups.push(() => client.close());
    const me = (await client.callTool({ name: 'getMe', arguments: {} })) as CallToolResult;
    expect((me.structuredContent as any).data.name).toBe('Alice');
    const bad = (await client.callTool({ name: 'getMe', arguments: { extra: 1 } })) as CallToolResult;
    expect(firstJson(bad)).toMatchObject({ status: 422, errors: { extra: [expect.any(String)] } });
    const progress: number[] = [];
    const exp = (await client.callTool({ name: 'exportContacts', arguments: { bot_id: 10 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    })) as CallToolResult;
    expect((exp.structuredContent as any).count).toBe(3);
    expect(progress).toEqual([3]);
  });

  test('a tool call whose body is not valid UTF-8 is a JSON-RPC parse error and moves no money', async () => {
    const { url } = await startHttp([]);
    const transport = new StreamableHTTPClientTransport(new URL(url));
    const client = withinBudget(new Client({ name: 't', version: '1' }));
    await client.connect(transport);
    cleanups.push(() => client.close());
    const balance = async () =>
      ((await client.callTool({ name: 'getContactAccounts', arguments: { contact_id: 100 } })) as any).structuredContent.data[0]
        .amount as number;
    const before = await balance();
    const call = (description: Buffer) =>
      post(
        url,
        { 'Mcp-Session-Id': transport.sessionId! },
        Buffer.concat([
          Buffer.from(
            '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"addFundsToContactAccount","arguments":{"account_id":500,"amount":5,"description":"',
          ),
          description,
          Buffer.from('"}}}'),
        ]),
      );
    const bad = await call(Buffer.from([0x78, 0xff, 0xfe, 0xc0]));
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).error).toMatchObject({ code: -32700, message: expect.stringMatching(/UTF-8/) });
    expect(await balance()).toBe(before);
    // The same call in valid UTF-8 goes through the same parser: the bytes are what is refused.
    const ok = await call(Buffer.from('x\u00ff'));
    expect(ok.status).toBe(200);
    expect(await balance()).toBe(before + 5);
  });

  test.each(ERAS.flatMap((era) => (['stdio', 'http'] as const).map((how) => [era, how] as const)))(
    '%s over %s: --max-result-chars holds, an answer over it is cut, in both renderings',
    async (era, how) => {
      const args = ['--max-result-chars', '5000'];
      const client =
        how === 'http'
          ? await connectHttp(era, (await startHttp(args)).url, {}, { budget: 5_000 })
          : await connectStdio(
              era,
              {
                command: process.execPath,
                args: [CLI, 'mcp', '--db', dbFile, ...args],
                env: env({ WORKSPACE_API_KEY: 'alice-key' }),
                stderr: 'ignore',
              },
              { budget: 5_000 },
            );
      cleanups.push(() => client.close());
      const tags = Array.from({ length: 100 }, (_, i) => `${i}`.padEnd(200, 't'));
      const r = await client.callTool({
        name: 'createOrUpdateContact',
        arguments: { bot_id: 10, messenger: 'telegram', telegram_id: 5001, name: 'Ann', tags },
      });
      expect(JSON.stringify(r).length).toBeLessThanOrEqual(5_000);
      const body = r.structuredContent as { data: { tags: string[] }; truncated: { cut_strings_at: number } };
      expect(body.data.tags).toHaveLength(100);
      expect(body.data.tags[0]).toBe(`${'0'.padEnd(body.truncated.cut_strings_at, 't')}…`);
      expect(firstJson(r)).toEqual(body);
    },
  );

  test('Host and Origin are checked: another name or a foreign page is refused with 403', async () => {
    const { url } = await startHttp([]);
    const port = new URL(url).port;
    expect(await raw(url, { Host: `evil.example:${port}` })).toBe(403);
    expect(await raw(url, { Origin: 'http://evil.example' })).toBe(403);
    expect(await raw(url, { Origin: `http://localhost:${port}` })).toBe(200);
    expect(await raw(url, { Host: `localhost:${port}` })).toBe(200);
  });

  test('a bearer token from $WORKSPACE_MCP_TOKEN is required when set', async () => {
    const { url } = await startHttp([], { WORKSPACE_MCP_TOKEN: 'tok-123' });
    expect(await raw(url, {})).toBe(401);
    expect(await raw(url, { Authorization: 'Bearer wrong' })).toBe(401);
    const client = withinBudget(new Client({ name: 't', version: '1' }));
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: 'Bearer tok-123' } } }),
    );
    cleanups.push(() => client.close());
    expect(((await client.callTool({ name: 'getMe', arguments: {} })) as CallToolResult).isError).toBeFalsy();
  });

  test('bound beyond loopback with no token set, a token is made and printed on stderr; requests without it get 401', async () => {
    const { url, stderr } = await startHttp(['--host', '0.0.0.0']);
    const port = new URL(url).port;
    const local = `http://127.0.0.1:${port}/mcp`;
    expect(await raw(local, {})).toBe(401);
    const token = /Bearer ([\w-]+)/.exec(stderr())?.[1];
    expect(token).toBeTruthy();
    expect(await raw(local, { Authorization: `Bearer ${token}` })).toBe(200);
  });
});
