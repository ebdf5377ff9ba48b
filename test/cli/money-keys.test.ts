/**
 * The built CLI's MCP server resolves who it acts for once, at start-up, and keeps idempotency
 * keys in its own state file: with getMe past its sunset (`admin deprecate --method getMe`), a
 * money call with an idempotency_key still moves the money once and replays, on the local
 * backend and over --remote, and the API database holds no MCP state.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Store } from '../../src/store/index.js';
import { CLI, cliEnv, runCli, spawnServe } from '../helpers/cli.js';
import { accountFixture, seedDb, tempDir } from '../helpers/world.js';
import { withinBudget } from '../helpers/budget.js';

const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

/** A seeded database (Alice, key alice-key, account 500 of 10.00 USD) whose getMe is switched off. */
function sunsetDb(): string {
  const db = seedDb(accountFixture());
  const r = runCli(['admin', 'deprecate', '--method', 'getMe', '--sunset', '2020-01-01T00:00:00Z', '--db', db]);
  expect(r.status, r.stderr).toBe(0);
  return db;
}

async function client(args: string[], env: Record<string, string>): Promise<Client> {
  const c = withinBudget(new Client({ name: 't', version: '1' }));
  await c.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, ...args], env: cliEnv(env), stderr: 'pipe' }));
  clients.push(c);
  return c;
}

async function topUpTwice(c: Client): Promise<void> {
  const me = (await c.callTool({ name: 'getMe', arguments: {} })) as CallToolResult;
  expect(JSON.parse((me.content[0] as { text: string }).text)).toMatchObject({ status: 410, code: 'method_removed' });
  // The way to an account_id; with --remote it also shows the money caps the account's currency.
  await c.callTool({ name: 'getContactAccounts', arguments: { contact_id: 100 } });
  const args = { account_id: 500, amount: 250, description: 'Bonus', idempotency_key: 'sunset-1' };
  const first = (await c.callTool({ name: 'addFundsToContactAccount', arguments: args })) as CallToolResult;
  expect(first.isError, JSON.stringify(first.content)).toBeFalsy();
  expect((first.structuredContent as { data: { amount: number } }).data.amount).toBe(1250);
  const again = (await c.callTool({ name: 'addFundsToContactAccount', arguments: args })) as CallToolResult;
  expect(again.structuredContent).toEqual({ ...(first.structuredContent as object), replayed: true });
  const accounts = (await c.callTool({ name: 'getContactAccounts', arguments: { contact_id: 100 } })) as CallToolResult;
  expect((accounts.structuredContent as { data: Array<{ amount: number }> }).data[0]!.amount).toBe(1250);
}

test('local backend: getMe past its sunset, a keyed top-up moves the money once and replays', async () => {
  const db = sunsetDb();
  await topUpTwice(await client(['mcp', '--db', db], { WORKSPACE_API_KEY: 'alice-key' }));
  // The keys live in the MCP server's own file beside the database, not in the API database.
  expect(existsSync(join(dirname(db), 'mcp-state.sqlite'))).toBe(true);
  const store = Store.open(db);
  try {
    expect(store.db.prepare("SELECT name FROM sqlite_master WHERE name LIKE '%idempotency%' OR name LIKE '%money_moves%'").all()).toEqual(
      [],
    );
  } finally {
    store.close();
  }
});

test('--remote: getMe past its sunset, a keyed top-up moves the money once and replays', async () => {
  const served = await spawnServe(['--db', sunsetDb()]);
  const dataDir = tempDir();
  await topUpTwice(await client(['mcp', '--remote', served.baseUrl], { WORKSPACE_API_KEY: 'alice-key', WORKSPACE_DATA_DIR: dataDir }));
  expect(existsSync(join(dataDir, 'mcp-state.sqlite'))).toBe(true);
});

test('--remote caps money calls by default: above 100.00 a call needs confirmation, and nothing moves', async () => {
  const served = await spawnServe(['--db', sunsetDb()]);
  const c = await client(['mcp', '--remote', served.baseUrl], { WORKSPACE_API_KEY: 'alice-key', WORKSPACE_DATA_DIR: tempDir() });
  await c.callTool({ name: 'getContactAccounts', arguments: { contact_id: 100 } });
  const big = (await c.callTool({
    name: 'addFundsToContactAccount',
    arguments: { account_id: 500, amount: 10_001, description: 'Big' },
  })) as CallToolResult;
  expect(JSON.parse((big.content[0] as { text: string }).text)).toMatchObject({ status: 422, code: 'confirmation_required' });
  const ok = (await c.callTool({
    name: 'addFundsToContactAccount',
    arguments: { account_id: 500, amount: 10_000, description: 'At the cap' },
  })) as CallToolResult;
  expect((ok.structuredContent as { data: { amount: number } }).data.amount).toBe(11_000);
});
