/**
 * A client that starts one stdio server process per call (the MCP Inspector's CLI does) moves
 * money under caps: the built CLI keeps which contact holds which account in its state file, per
 * owner, so a getContactAccounts in one process lets a money call in the next read the account
 * live and apply the caps. The caps still apply (over one: the person is asked, or the call is
 * refused); an account no answer showed is refused as `account_not_seen`; another owner's account
 * is never reached, even with its holder written into the state by hand. Local database and
 * --remote, each call by the SDK's real client over stdio.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { CLI, cliEnv, spawnServe } from '../helpers/cli.js';
import { baseFixture, seedDb, tempDir, type Fixture } from '../helpers/world.js';
import { connectStdio, TEST_ERA, type ConnectOptions, type McpClient } from '../mcp/clients.js';
import { Store } from '../../src/store/index.js';

/** Alice's Ann (account 500) and Bob's Ben (account 600), 10.00 USD each; Alice is no member of Bob's project. */
function world(): Fixture {
  const { members: _, ...base } = baseFixture();
  return {
    ...base,
    contacts: [
      { id: 100, bot_id: 10, messenger: 'telegram', name: 'Ann', telegram_id: '5001' },
      { id: 200, bot_id: 20, messenger: 'telegram', name: 'Ben', telegram_id: '5002' },
    ],
    accounts: [
      { id: 500, contact_id: 100, currency: 'USD', amount: 1000 },
      { id: 600, contact_id: 200, currency: 'USD', amount: 1000 },
    ],
  };
}

interface Setup {
  /** The server's arguments before the caps. */
  args: string[];
  /** The data folder whose state file every process of the test shares. */
  dataDir: string;
  db: string;
}

async function local(): Promise<Setup> {
  const db = seedDb(world());
  return { args: ['mcp', '--db', db], dataDir: join(db, '..'), db };
}

async function remote(): Promise<Setup> {
  const db = seedDb(world());
  const served = await spawnServe(['--db', db]);
  return { args: ['mcp', '--remote', served.baseUrl], dataDir: tempDir(), db };
}

/** One call in a process of its own, as the Inspector's CLI makes it: start, initialize, call, exit. */
async function once(
  s: Setup,
  key: string,
  name: string,
  args: Record<string, unknown>,
  o: ConnectOptions & { accept?: boolean } = {},
): Promise<{ status?: number; code?: string; message?: string; data?: { amount?: number } }> {
  const c: McpClient = await connectStdio(
    TEST_ERA,
    {
      command: process.execPath,
      args: [CLI, ...s.args, '--max-amount', '5.00'],
      env: cliEnv({ WORKSPACE_API_KEY: key, WORKSPACE_DATA_DIR: s.dataDir }),
      stderr: 'pipe',
    },
    o,
  );
  try {
    if (o.accept) c.answer(() => ({ action: 'accept', content: { confirm: true } }));
    const r = await c.callTool({ name, arguments: args });
    return JSON.parse((r.content[0] as { text: string }).text);
  } finally {
    await c.close();
  }
}

function balances(db: string): Record<number, number> {
  const store = Store.open(db);
  try {
    const rows = store.db.prepare('SELECT id, amount FROM contact_accounts ORDER BY id').all() as Array<{ id: number; amount: number }>;
    return Object.fromEntries(rows.map((r) => [r.id, r.amount]));
  } finally {
    store.close();
  }
}

const topUp = (account_id: number, amount: number) => ({ account_id, amount, description: 'Bonus' });

describe.each([
  ['local database', local],
  ['--remote', remote],
])('one server process per call, caps on (%s)', (_, setup) => {
  test('a read in one process lets the next move money under the cap; over it, no way to ask is a refusal and asking is a question', async () => {
    const s = await setup();
    // No answer showed account 500 yet: refused with its own code and the next step, nothing moved.
    const unseen = await once(s, 'alice-key', 'addFundsToContactAccount', topUp(500, 250), { elicitation: false });
    expect(unseen).toMatchObject({ status: 422, code: 'account_not_seen' });
    expect(unseen.message).toMatch(/getContactAccounts/);
    expect(unseen.message).not.toMatch(/confirm/i);
    expect(balances(s.db)[500]).toBe(1000);

    expect((await once(s, 'alice-key', 'getContactAccounts', { contact_id: 100 })).data).toBeDefined();
    // The next process: under the cap of 5.00, the money moves.
    const moved = await once(s, 'alice-key', 'addFundsToContactAccount', topUp(500, 250), { elicitation: false });
    expect(moved.data?.amount).toBe(1250);
    // Over the cap with no way to ask: the caps' refusal, nothing moved.
    const over = await once(s, 'alice-key', 'addFundsToContactAccount', topUp(500, 600), { elicitation: false });
    expect(over).toMatchObject({ status: 422, code: 'confirmation_required' });
    expect(balances(s.db)[500]).toBe(1250);
    // Over the cap in a client that asks its person, who says yes: it moves.
    const confirmed = await once(s, 'alice-key', 'addFundsToContactAccount', topUp(500, 600), { accept: true });
    expect(confirmed.data?.amount).toBe(1850);
    expect(balances(s.db)).toEqual({ 500: 1850, 600: 1000 });
  });

  test("another owner's account is never reached: not through their reads, nor a holder written into the state by hand", async () => {
    const s = await setup();
    // Each reads their own: kept under each one's scope.
    expect((await once(s, 'alice-key', 'getContactAccounts', { contact_id: 100 })).data).toBeDefined();
    expect((await once(s, 'bob-key', 'getContactAccounts', { contact_id: 200 })).data).toBeDefined();
    expect(await once(s, 'alice-key', 'addFundsToContactAccount', topUp(600, 100), { elicitation: false })).toMatchObject({
      code: 'account_not_seen',
    });
    // Alice's scope now names account 600's holder too; the live read (Ben is not Alice's) still refuses her.
    const state = new Database(join(s.dataDir, 'mcp-state.sqlite'));
    try {
      expect(state.prepare('SELECT count(DISTINCT scope) AS n FROM account_holders').get()).toEqual({ n: 2 });
      const { scope } = state.prepare('SELECT scope FROM account_holders WHERE account_id = 500').get() as { scope: string };
      state.prepare('INSERT INTO account_holders (scope, account_id, contact_id) VALUES (?, 600, 200)').run(scope);
      // Only the two ids are kept: no name, no balance.
      expect(Object.keys(state.prepare('SELECT * FROM account_holders LIMIT 1').get() as object).sort()).toEqual([
        'account_id',
        'contact_id',
        'scope',
      ]);
    } finally {
      state.close();
    }
    expect(await once(s, 'alice-key', 'addFundsToContactAccount', topUp(600, 100), { elicitation: false })).toMatchObject({
      code: 'account_not_seen',
    });
    expect(await once(s, 'alice-key', 'addFundsToContactAccount', topUp(600, 100), { accept: true })).toMatchObject({
      code: 'account_not_seen',
    });
    expect(balances(s.db)).toEqual({ 500: 1000, 600: 1000 });
  });
});
