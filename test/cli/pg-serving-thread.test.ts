/**
 * Issue 50: on PostgreSQL the MCP server's serving thread, the one that serves every session,
 * never waits on the database once it serves. Its own connection logs each kind of statement
 * sent on it after start-up (`PgConnection.watchServing`); a person signs in through OAuth and
 * does in both eras what the tools do (search, the workspace, a money move under the cap and one
 * over it that they confirm, a bulk plan previewed, confirmed and run, the audit trail and the
 * plan's outcomes read, a refresh, a revocation), on the built CLI, and not one statement is
 * logged. The watch itself is shown to log what it should.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { PgConnection } from '../../src/store/pg/connection.js';
import { tapLog } from '../../src/common/log.js';
import { usePostgres } from '../helpers/postgres.js';
import { connectHttp, type Era, type McpClient } from '../mcp/clients.js';
import { exchange, form, http, seedWorld, signIn, startOAuth, type OAuthRun } from '../mcp/oauth-flow.js';

const pg = usePostgres();
const HELD = 'a PostgreSQL statement held the serving thread';

let run: OAuthRun;

beforeAll(async () => {
  const db = await seedWorld(await pg.server().database());
  // Caps of 5.00 a call: a 7.00 top-up asks the person.
  run = await startOAuth(db, ['--max-amount', '5', '--max-daily', '50']);
}, 120_000);

afterAll(async () => {
  await run?.close();
});

const data = (r: { structuredContent?: unknown; content?: unknown }) =>
  ((r.structuredContent ?? JSON.parse((r.content as Array<{ text: string }>)[0]!.text)) as { data: Record<string, unknown> }).data;

async function workAs(era: Era, token: string): Promise<void> {
  const c: McpClient = await connectHttp(era, run.mcp, { Authorization: `Bearer ${token}` });
  try {
    c.answer(() => ({ action: 'accept', content: { confirm: true } }));
    const found = await c.callTool({ name: 'findContacts', arguments: { query: 'Ann' } });
    expect(found.isError, JSON.stringify(found.content)).toBeFalsy();
    expect(JSON.stringify(found.structuredContent)).toContain('"id":100');
    const ws = await c.callTool({ name: 'getWorkspace', arguments: {} });
    expect(ws.isError, JSON.stringify(ws.content)).toBeFalsy();
    const accounts = await c.callTool({ name: 'getContactAccounts', arguments: { contact_id: 100 } });
    expect(accounts.isError, JSON.stringify(accounts.content)).toBeFalsy();
    const small = await c.callTool({
      name: 'addFundsToContactAccount',
      arguments: { account_id: 500, amount: 100, description: 'under the cap', idempotency_key: `small-${era}` },
    });
    expect(small.isError, JSON.stringify(small.content)).toBeFalsy();
    // Over the cap: asked, confirmed, moved.
    const big = await c.callTool({
      name: 'addFundsToContactAccount',
      arguments: { account_id: 500, amount: 700, description: 'over the cap', idempotency_key: `big-${era}` },
    });
    expect(big.isError, JSON.stringify(big.content)).toBeFalsy();
    // The same key again: the kept answer.
    const again = await c.callTool({
      name: 'addFundsToContactAccount',
      arguments: { account_id: 500, amount: 100, description: 'under the cap', idempotency_key: `small-${era}` },
    });
    expect(again.structuredContent).toMatchObject({ replayed: true });
    // A money plan (each step's idempotency key, its marks) and a plain one.
    for (const action of [
      { type: 'deposit', currency: 'USD', amount: 100, description: `bonus ${era}` },
      { type: 'attachTag', name: `seen-${era}` },
    ]) {
      const preview = await c.callTool({ name: 'previewBulk', arguments: { selection: { bot_id: 10, tags: ['vip'] }, action } });
      expect(preview.isError, JSON.stringify(preview.content)).toBeFalsy();
      const planId = data(preview).plan_id as string;
      const ran = await c.callTool({ name: 'runBulk', arguments: { plan_id: planId } });
      expect(ran.isError, JSON.stringify(ran.content)).toBeFalsy();
      expect(data(ran)).toMatchObject({ done: 1, remaining: 0 });
      const outcomes = await c.readResource({ uri: `workspace://bulk/${planId}` });
      expect(JSON.stringify(outcomes.contents[0])).toContain('\\"status\\":\\"done\\"');
    }
    const audit = await c.readResource({ uri: 'workspace://audit?limit=5' });
    expect(JSON.stringify(audit.contents[0])).toContain('addFundsToContactAccount');
  } finally {
    await c.close();
  }
}

describe('mcp --http --auth oauth on PostgreSQL: the serving thread never waits on the database', () => {
  test('a person signs in, works in both eras, refreshes and signs out: no statement held the serving thread', async () => {
    const { tokens, clientId } = await signIn(run.base, 'alice-key');
    await workAs('2025-11-25', tokens.access_token);
    await workAs('2026-07-28', tokens.access_token);
    const refreshed = await exchange(run.base, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId });
    expect(refreshed.status, refreshed.text).toBe(200);
    const fresh = JSON.parse(refreshed.text) as { access_token: string; refresh_token: string };
    const revoked = await http(`${run.base}/oauth/revoke`, form({ token: fresh.refresh_token, client_id: clientId }));
    expect(revoked.status).toBe(200);
    // Each kind is logged once as it happens; give the last line time to reach the pipe.
    await new Promise((r) => setTimeout(r, 200));
    expect(run.stderr()).not.toContain(HELD);
    const lines = run
      .stderr()
      .split('\n')
      .filter((l) => l.includes(HELD));
    expect(lines).toEqual([]);
  });

  test('the watch logs each kind of statement sent on a watched connection, once', async () => {
    const c = new PgConnection(await pg.server().database());
    const logged: Array<{ msg: string | undefined; statement: unknown }> = [];
    tapLog((level, obj, msg) => {
      if (level === 'warn') logged.push({ msg, statement: (obj as { statement?: unknown }).statement });
    });
    try {
      c.query('SELECT 1');
      expect(logged).toEqual([]);
      c.watchServing();
      c.query('SELECT   1');
      c.query('SELECT 1');
      c.query('SELECT $1::int AS n', [2]);
      expect(logged).toEqual([
        { msg: HELD, statement: 'SELECT 1' },
        { msg: HELD, statement: 'SELECT $1::int AS n' },
      ]);
    } finally {
      tapLog(undefined);
      c.close();
    }
  });
});
