/**
 * MCP tasks (2025-11-25) on the built CLI: offered over stdio and `--http` (the server acts with
 * its own key, which outlives a request), with runBulk the one tool that runs as a task; a
 * 2026-07-28 client is offered none. (`--auth key` offers none: test/mcp/auth-key.test.ts.)
 */
import { afterEach, expect, test } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CLI, cliEnv, spawnAnnounced } from '../helpers/cli.js';
import { stop } from '../helpers/temp.js';
import { accountFixture, seedDb, tempDir } from '../helpers/world.js';
import { connectHttp } from './clients.js';

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const TASKS = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

async function offered(client: Client) {
  const tools = (await client.listTools()).tools;
  return { tasks: client.getServerCapabilities()?.tasks, runAsTask: tools.filter((t) => t.execution).map((t) => [t.name, t.execution]) };
}

test('over stdio and --http: tasks offered, runBulk runs as one', async () => {
  const env = cliEnv({ WORKSPACE_API_KEY: 'alice-key', WORKSPACE_DATA_DIR: tempDir() });
  const stdio = new Client({ name: 'tasks-cli', version: '1.0.0' });
  await stdio.connect(
    new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--db', seedDb(accountFixture())], env, stderr: 'ignore' }),
  );
  cleanups.push(() => stdio.close());
  const want = { tasks: TASKS, runAsTask: [['runBulk', { taskSupport: 'optional' }]] };
  expect(await offered(stdio)).toEqual(want);

  const started = await spawnAnnounced(['mcp', '--db', seedDb(accountFixture()), '--http', '--port', '0'], /(http:\/\/\S+\/mcp)/, env);
  cleanups.push(() => stop(started.proc));
  const http = new Client({ name: 'tasks-cli', version: '1.0.0' });
  await http.connect(new StreamableHTTPClientTransport(new URL(started.url)));
  cleanups.push(() => http.close());
  expect(await offered(http)).toEqual(want);
  const modern = await connectHttp('2026-07-28', started.url);
  cleanups.push(() => modern.close());
  expect((await modern.listTools()).tools.some((t) => 'execution' in t)).toBe(false);
});
