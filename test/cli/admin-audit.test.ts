/**
 * The local audit trail in the database, read by the CLI: `admin audit [--since ISO8601]
 * [--contact ID]` "prints the MCP audit trail as JSON lines" (contract); and the operator's view
 * of every person's calls (issue 49): `--owner`, `--client`, `--until`, `--format jsonl|csv`,
 * with the money each call moved and never a key or a message's text, on SQLite and PostgreSQL.
 */
import { describe, expect, it, test } from 'vitest';
import type { AuditEntry } from '../../src/api/backend.js';
import { Store } from '../../src/store/index.js';
import { PgStore } from '../../src/store/pg/index.js';
import { cliEnv, runCli, runCliAsync } from '../helpers/cli.js';
import { usePostgres } from '../helpers/postgres.js';
import { baseFixture, DEMO_FIXTURE, seedDb } from '../helpers/world.js';
import { mcpFixture, useMcp } from '../mcp/harness.js';

const startMcp = useMcp();
const pg = usePostgres();

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

const SECRET_ENV = { WORKSPACE_SECRET: 'ab'.repeat(32) };
const MESSAGE = 'the words of a private message';
const API_KEY = 'sk-live-not-to-be-seen';

/** An entry as the trail keeps one, `at` a day of January 2026. */
function entry(day: number, over: Partial<AuditEntry>): AuditEntry {
  return {
    at: `2026-01-0${day}T00:00:00.000Z`,
    owner_id: 1,
    client: { name: 'cursor', version: '1.2' },
    session: 's',
    tool: 'attachTagToContact',
    arguments: {},
    contact_id: 100,
    status: 200,
    code: null,
    idempotency_key: null,
    replayed: false,
    confirmation: null,
    ...over,
  };
}

/**
 * Several people's calls through several clients: a top-up through an OAuth client (a name to
 * quote in CSV), a message (its text, and a key an older trail might have kept), a debit refused,
 * a replayed top-up, a bulk message plan.
 */
const TRAIL: AuditEntry[] = [
  entry(1, {
    oauth_client: { id: 'client-a', name: 'Acme, "Pro"' },
    grant_scopes: ['workspace:read', 'workspace:money'],
    client: { name: 'claude-ai', version: '0.1' },
    tool: 'addFundsToContactAccount',
    arguments: { account_id: 500, amount: 700, description: 'a refund' },
    idempotency_key: 'k-1',
    confirmation: { how: 'elicitation accepted', by: 'the person' },
  }),
  entry(2, {
    owner_id: 2,
    tool: 'sendMessage',
    arguments: { bot_id: 10, contact_external_id: '5001', text: MESSAGE, api_key: API_KEY },
  }),
  entry(3, {
    tool: 'withdrawFundsFromContactAccount',
    arguments: { account_id: 500, amount: 9, description: 'x' },
    status: 422,
    code: 'insufficient_funds',
  }),
  entry(4, {
    tool: 'addFundsToContactAccount',
    arguments: { account_id: 500, amount: 700, description: 'a refund' },
    idempotency_key: 'k-1',
    replayed: true,
  }),
  entry(5, {
    owner_id: 2,
    tool: 'runBulk',
    arguments: { plan_id: 'p', action: { type: 'sendMessage', text: MESSAGE }, count: 3, total: null },
  }),
];

/** The view's lines (JSON) or rows (CSV, RFC 4180 with no line break inside a field: split on commas outside quotes). */
type Run = (args: string[]) => Promise<{ status: number | null; stdout: string; stderr: string }>;

async function checkViews(run: Run): Promise<void> {
  const ok = async (args: string[]) => {
    const r = await run(['admin', 'audit', ...args]);
    expect(r.status, r.stderr).toBe(0);
    return r.stdout;
  };
  const jsonl = async (args: string[]) =>
    (await ok(args))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, any>);
  const all = await ok([]);
  // No key, no message text, in either format.
  for (const text of [all, await ok(['--format', 'csv'])]) {
    expect(text).not.toContain(MESSAGE);
    expect(text).not.toContain(API_KEY);
  }
  const lines = await jsonl(['--format', 'jsonl']);
  expect(lines.map((e) => e.tool)).toEqual(TRAIL.map((e) => e.tool));
  expect(lines[0]).toMatchObject({
    owner_id: 1,
    oauth_client: { id: 'client-a', name: 'Acme, "Pro"' },
    grant_scopes: ['workspace:read', 'workspace:money'],
    client: { name: 'claude-ai' },
    arguments: { account_id: 500, amount: 700 },
    money: { direction: 'credit', amount: 700, currency: null },
    status: 200,
    code: null,
  });
  expect(lines[1]!.arguments).toEqual({ bot_id: 10, contact_external_id: '5001', text: '[redacted]', api_key: '[redacted]' });
  expect(lines[4]!.arguments.action).toEqual({ type: 'sendMessage', text: '[redacted]' });
  // A refusal, a replay and a message moved no money.
  expect(lines.map((e) => e.money?.amount ?? null)).toEqual([700, null, null, null, null]);
  expect(lines[2]).toMatchObject({ status: 422, code: 'insufficient_funds' });

  // The filters, alone and together.
  const tools = async (args: string[]) => (await jsonl(args)).map((e) => `${e.at.slice(8, 10)} ${e.tool}`);
  expect(await tools(['--owner', '2'])).toEqual(['02 sendMessage', '05 runBulk']);
  expect(await tools(['--client', 'client-a'])).toEqual(['01 addFundsToContactAccount']);
  expect(await tools(['--client', 'Acme, "Pro"'])).toEqual(['01 addFundsToContactAccount']);
  expect(await tools(['--client', 'cursor', '--owner', '1'])).toEqual([
    '03 withdrawFundsFromContactAccount',
    '04 addFundsToContactAccount',
  ]);
  expect(await tools(['--since', '2026-01-02', '--until', '2026-01-04T00:00:00Z'])).toEqual([
    '02 sendMessage',
    '03 withdrawFundsFromContactAccount',
  ]);
  expect(await tools(['--until', '2026-01-01'])).toEqual([]);
  expect(await tools(['--client', 'nobody'])).toEqual([]);

  // CSV: the header, a row an entry, fields quoted as RFC 4180 says, CRLF after each record.
  const csv = await ok(['--format', 'csv', '--owner', '1']);
  const records = csv.split('\r\n');
  expect(records.pop()).toBe('');
  expect(records).toEqual([
    'seq,at,owner_id,oauth_client_id,oauth_client_name,mcp_client,mcp_client_version,grant_scopes,tool,contact_id,account_id,direction,amount,currency,status,code,replayed,confirmed_how',
    `1,2026-01-01T00:00:00.000Z,1,client-a,"Acme, ""Pro""",claude-ai,0.1,workspace:read workspace:money,addFundsToContactAccount,100,500,credit,700,,200,,false,elicitation accepted`,
    `3,2026-01-03T00:00:00.000Z,1,,,cursor,1.2,,withdrawFundsFromContactAccount,100,500,,,,422,insufficient_funds,false,`,
    `4,2026-01-04T00:00:00.000Z,1,,,cursor,1.2,,addFundsToContactAccount,100,500,,,,200,,true,`,
  ]);

  for (const bad of [
    ['--format', 'xml'],
    ['--until', 'soon'],
    ['--client', ''],
    ['--owner', 'x'],
  ]) {
    const r = await run(['admin', 'audit', ...bad]);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
  }
}

describe('the operator view: `admin audit` filters, JSON lines or CSV, never a key or a message', () => {
  it('on SQLite', async () => {
    const dbFile = seedDb(baseFixture());
    const store = Store.open(dbFile);
    try {
      for (const e of TRAIL) store.audit.append(e);
    } finally {
      store.close();
    }
    await checkViews(async (args) => runCli([...args, '--db', dbFile]));
  });

  it('on PostgreSQL', async () => {
    const url = await pg.server().database();
    const seeded = await runCliAsync(['seed', DEMO_FIXTURE, '--db', url], cliEnv(SECRET_ENV));
    expect(seeded.status, seeded.stderr).toBe(0);
    const store = PgStore.open(url);
    try {
      for (const e of TRAIL) store.audit.append(e);
    } finally {
      store.close();
    }
    await checkViews((args) => runCliAsync([...args, '--db', url], cliEnv(SECRET_ENV)));
  });
});
