/**
 * The MCP server on a local database with no key acts as the database's default owner, and is
 * held to the same rules as a key: "Without [the Pro plan]: 402", "A blocked account gives
 * 403". The owner is changed while the server runs, through the built CLI's admin commands, as
 * the dashboard would.
 */
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CLI, cliEnv, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/world.js';
import { firstJson } from './harness.js';
import { withinBudget } from '../helpers/budget.js';

test('no key: the default owner, blocked → 403 on every tool, on a Free plan → 402 pro_required; lifted, the tools answer again', async () => {
  const db = join(tempDir(), 'keyless.db');
  const client = withinBudget(new Client({ name: 't', version: '1' }));
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--db', db], env: cliEnv(), stderr: 'pipe' }),
  );
  try {
    const call = async (name: string, args: Record<string, unknown> = {}) =>
      (await client.callTool({ name, arguments: args })) as CallToolResult;
    const me = await call('getMe');
    expect(me.isError, JSON.stringify(me.content)).toBeFalsy();
    const owner = String((me.structuredContent as { data: { id: number } }).data.id);
    const admin = (...args: string[]) => expect(runCli(['admin', ...args, '--owner', owner, '--db', db]).status).toBe(0);
    const tools: Array<[string, Record<string, unknown>]> = [
      ['getMe', {}],
      ['getContacts', {}],
      ['getListSchemas', {}],
    ];

    admin('block-owner');
    for (const [name, args] of tools)
      expect(firstJson(await call(name, args)), name).toMatchObject({ status: 403, error: expect.any(String) });
    admin('unblock-owner');
    expect((await call('getMe')).isError).toBeFalsy();

    admin('set-plan', '--plan', 'free');
    for (const [name, args] of tools) expect(firstJson(await call(name, args)), name).toMatchObject({ status: 402, code: 'pro_required' });
    admin('set-plan', '--plan', 'pro');
    expect((await call('getContacts')).isError).toBeFalsy();
  } finally {
    await client.close();
  }
});
