/**
 * The local audit trail in the database, read by the CLI: `admin audit [--since ISO8601]
 * [--contact ID]` "prints the MCP audit trail as JSON lines" (contract).
 */
import { expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { seedDb } from '../helpers/world.js';
import { mcpFixture, useMcp } from '../mcp/harness.js';

const startMcp = useMcp();

test('the rows are in the database, read by `admin audit [--since] [--contact]` as JSON lines, oldest first', async () => {
  const dbFile = seedDb(mcpFixture());
  const world = await startMcp({ dbFile });
  await world.call('getContactAccounts', { contact_id: 100 });
  await world.call('addFundsToContactAccount', { account_id: 500, amount: 7, description: 'a' });
  await world.call('attachTagToContact', { contact_id: 101, name: 'gold' });
  await world.call('addFundsToContactAccount', { account_id: 500, amount: 8, description: 'b' });
  const lines = (args: string[]) => {
    const r = runCli(['admin', 'audit', '--db', dbFile, ...args]);
    expect(r.status, r.stderr).toBe(0);
    return r.stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  };
  expect(lines([]).map((e) => e.tool)).toEqual(['addFundsToContactAccount', 'attachTagToContact', 'addFundsToContactAccount']);
  expect(lines(['--contact', '100']).map((e) => e.arguments.amount)).toEqual([7, 8]);
  expect(lines(['--since', '2999-01-01T00:00:00Z'])).toEqual([]);
  expect(runCli(['admin', 'audit', '--db', dbFile, '--since', 'yesterday']).status).toBe(2);
});
