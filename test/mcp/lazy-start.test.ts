/**
 * The stdio server answers its opening message before its tools and the service under them are
 * loaded (src/mcp/serve/instance.ts): the built CLI over a pipe, in raw JSON-RPC. What it answers must
 * not change by a byte for that: the instructions are the ones instructions.ts makes for the
 * tools tools/list then lists, with and without the tool flags, and a request sent at once,
 * before anything was loaded, is answered as a later one is. The database is opened and checked
 * only after the first answer: a check that fails still ends the start with one line and exit
 * status 2, with nothing created.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { METHODS } from '../../src/api/catalog.js';
import { isMoney, type MethodDef } from '../../src/api/define.js';
import { instructionsFor } from '../../src/mcp/serve/instructions.js';
import { RESULT_BUDGET } from '../../src/mcp/result/budget.js';
import { cliEnv, INITIALIZE, spawnRpc } from '../helpers/cli.js';
import { tempDir } from '../helpers/world.js';

const DISCOVER = {
  jsonrpc: '2.0',
  method: 'server/discover',
  params: {
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
};

async function opening(flags: string[]): Promise<{ instructions: string; tools: string[] }> {
  const rpc = spawnRpc(['mcp', '--db', join(tempDir(), 'w.db'), ...flags]);
  try {
    // Sent together: tools/list reaches a server whose tools are still to be loaded.
    rpc.send({ ...INITIALIZE, id: 1 });
    rpc.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    rpc.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const [init, list] = await Promise.all([rpc.answer(1), rpc.answer(2)]);
    return { instructions: init.result.instructions, tools: list.result.tools.map((t: { name: string }) => t.name) };
  } finally {
    rpc.proc.kill();
  }
}

test('initialize carries the instructions of the tools tools/list lists: every tool, no flags', async () => {
  const { instructions, tools } = await opening([]);
  expect(tools).toContain('findContacts');
  expect(tools).toContain('getWorkspace');
  expect(tools).toContain('exportContacts');
  expect(instructions).toBe(instructionsFor(tools, RESULT_BUDGET));
});

test('initialize carries the instructions of the tools tools/list lists: --read-only, --tools, --max-result-chars', async () => {
  const readOnly = await opening(['--read-only', '--max-result-chars', '50000']);
  expect(readOnly.tools).not.toContain('withdrawFundsFromContactAccount');
  expect(readOnly.instructions).toBe(instructionsFor(readOnly.tools, 50_000));
  const some = await opening(['--tools', 'getMe,getContacts,withdrawFundsFromContactAccount']);
  expect([...some.tools].sort()).toEqual(['getContacts', 'getMe', 'withdrawFundsFromContactAccount']);
  expect(some.instructions).toBe(instructionsFor(some.tools, RESULT_BUDGET));
});

test('a 2026-07-28 server/discover answers with the same instructions, and a tool call right after it is answered', async () => {
  const { instructions, tools } = await opening([]);
  const rpc = spawnRpc(['mcp', '--db', join(tempDir(), 'w.db')]);
  try {
    rpc.send({ ...DISCOVER, id: 1 });
    rpc.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'getMe', arguments: {}, _meta: DISCOVER.params._meta },
    });
    const [discover, call] = await Promise.all([rpc.answer(1), rpc.answer(2)]);
    expect(discover.result.instructions).toBe(instructions);
    expect(tools).toContain('getMe');
    expect(call.result.isError).toBeFalsy();
    expect(call.result.structuredContent.data.name).toBe('Default owner');
  } finally {
    rpc.proc.kill();
  }
});

test('the instructions name every tool of the catalog that moves money, and no other, for its idempotency_key', () => {
  const money = (METHODS as readonly MethodDef[]).filter(isMoney).map((m) => m.name);
  expect(money.length).toBeGreaterThan(0);
  const all = instructionsFor(() => true, RESULT_BUDGET);
  expect(all).toContain(`Give ${money.join(' and ')} an idempotency_key,`);
  expect(instructionsFor((name) => name !== money[0], RESULT_BUDGET)).toContain(`Give ${money.slice(1).join(' and ')} an idempotency_key,`);
});

test('initialize is answered before the database is checked; a check that fails then ends the start: one line, exit 2, nothing created', async () => {
  const dir = tempDir();
  const rpc = spawnRpc(['mcp', '--db', join(dir, 'new.db')], cliEnv({ WORKSPACE_API_KEY: 'no-such-key' }));
  const exited = new Promise<number | null>((r) => rpc.proc.once('exit', r));
  rpc.send({ ...INITIALIZE, id: 1 });
  const init = await rpc.answer(1);
  expect(init.result.serverInfo.name).toBe('workspace-mcp');
  expect(await exited).toBe(2);
  const lines = rpc.stderr().split('\n').filter(Boolean);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^workspace-mcp: .*does not exist yet, so no owner has that key/);
  expect(rpc.lines()).toHaveLength(1);
  expect(readdirSync(dir)).toEqual([]);
});
