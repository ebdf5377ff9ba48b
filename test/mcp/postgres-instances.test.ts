/**
 * The MCP server on PostgreSQL, several instances behind a balancer: two `mcp --http --db
 * postgres://…` processes of the built CLI on one database, behind a small balancer written
 * here as a real deployment's would be (round robin for a request without a session;
 * "Mcp-Session-Id" learnt from the answer that made the session, and followed after). With the
 * SDK's real clients of both eras:
 * - "2026-07-28 requests stand alone": a client's calls spread over both instances work, and a
 *   money confirmation asked by one instance and answered through the other moves the money
 *   exactly once (its sealed request state verifies on both: one WORKSPACE_SECRET), and a "no"
 *   given through one is final on both;
 * - the server's own state is shared: an idempotency key used on one replays on the other, and
 *   concurrent money calls over both never pass a daily cap;
 * - "a 2025-era session lives in one process": it works through the sticky route (a money
 *   confirmation asked over it too), and the instance that does not hold it answers 404 (the
 *   client then initialises again);
 * - over stdio too; DATABASE_URL by the rule `serve` follows.
 */
import { request as httpRequest, createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CLI, cliEnv, runCliAsync, spawnAnnounced, type Announced } from '../helpers/cli.js';
import { usePostgres } from '../helpers/postgres.js';
import { stop } from '../helpers/temp.js';
import { DEMO_FIXTURE } from '../helpers/world.js';
import { connectHttp, connectStdio, type McpClient } from './clients.js';
import { firstJson } from './harness.js';

const pg = usePostgres();
const SECRET = 'cd'.repeat(32);
/** Dana (owner 1) holds Anna Smith's USD account 501 (25.00) and Maria Ivanova's RUB account 504 (1500.00). */
const ENV = { WORKSPACE_SECRET: SECRET, WORKSPACE_API_KEY: 'demo-dana-key' };
/** At most 5.00 a call and 10.00 a day per account, in the account's currency. */
const CAPS = ['--max-amount', '5.00', '--max-daily', '10.00'];

/** What the balancer sent where: the instance (0 or 1) and the JSON-RPC method of each POST. */
interface Routed {
  to: number;
  method?: string;
}

/**
 * A balancer as one would configure it (HAProxy: `stick on req.hdr(mcp-session-id)` with
 * `stick store-response res.hdr(mcp-session-id)`): a request with a known session goes to the
 * instance that made it; any other in turn.
 */
async function balancer(targets: string[]): Promise<{ url: string; log: Routed[]; sessions: Map<string, number>; close(): Promise<void> }> {
  const sessions = new Map<string, number>();
  const log: Routed[] = [];
  let next = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const sid = req.headers['mcp-session-id'] as string | undefined;
      const to = sid !== undefined && sessions.has(sid) ? sessions.get(sid)! : next++ % targets.length;
      let method: string | undefined;
      try {
        method = body.length ? (JSON.parse(body.toString()) as { method?: string }).method : undefined;
      } catch {
        // Not JSON: forwarded as it is.
      }
      log.push({ to, method });
      const target = new URL(targets[to]!);
      const out = httpRequest(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (answer: IncomingMessage) => {
          const made = answer.headers['mcp-session-id'];
          if (typeof made === 'string') sessions.set(made, to);
          res.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(res);
        },
      );
      out.on('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      out.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    log,
    sessions,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** The structured result of a tool call that must succeed. */
async function ok(c: McpClient, name: string, args: Record<string, unknown>): Promise<any> {
  const r = await c.callTool({ name, arguments: args });
  expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
  return r.structuredContent;
}

describe('two MCP server instances on one PostgreSQL database, behind a balancer', () => {
  let url: string;
  let db: string;
  let instances: Announced[] = [];
  let lb: Awaited<ReturnType<typeof balancer>>;
  const clients: McpClient[] = [];
  const keep = (c: McpClient) => (clients.push(c), c);
  /** Account `id`'s balance and journal, as the database holds them. */
  const ledger = async (id: number) =>
    (
      await pg
        .server()
        .admin(
          `SELECT (SELECT amount FROM contact_accounts WHERE id = ${id})::int AS amount, (SELECT count(*) FROM account_journal WHERE account_id = ${id})::int AS entries`,
          db,
        )
    ).rows[0] as { amount: number; entries: number };

  beforeAll(async () => {
    url = await pg.server().database();
    db = url.split('/').pop()!;
    const seeded = await runCliAsync(['seed', DEMO_FIXTURE, '--db', url], cliEnv());
    expect(seeded.status, seeded.stderr).toBe(0);
    // Started together: the second waits for the first's migration (an advisory lock).
    instances = await Promise.all(
      [0, 1].map(() => spawnAnnounced(['mcp', '--http', '--port', '0', '--db', url, ...CAPS], /(http:\/\/\S+\/mcp)/, cliEnv(ENV))),
    );
    lb = await balancer(instances.map((i) => i.url));
  }, 60_000);

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await lb?.close();
    await Promise.all(instances.map((i) => stop(i.proc)));
  });

  test("a 2026-07-28 client's calls spread over both instances, with the same answers", async () => {
    const c = keep(await connectHttp('2026-07-28', lb.url));
    const from = lb.log.length;
    const tools = await c.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('addFundsToContactAccount');
    const found = await ok(c, 'findContacts', { query: 'Anna Smith' });
    expect(found.data[0]).toMatchObject({ id: 1001, name: 'Anna Smith' });
    const a = await ok(c, 'getContactAccounts', { contact_id: 1001 });
    const b = await ok(c, 'getContactAccounts', { contact_id: 1001 });
    expect(b).toEqual(a);
    const served = lb.log.slice(from).filter((r) => r.method === 'tools/call');
    expect(new Set(served.map((r) => r.to))).toEqual(new Set([0, 1]));
  });

  test('a confirmation asked by one instance and answered through the other moves the money exactly once', async () => {
    const c = keep(await connectHttp('2026-07-28', lb.url));
    const before = await ledger(501);
    const asked: string[] = [];
    c.answer((q) => (asked.push(q.message), { action: 'accept', content: { confirm: true } }));
    const from = lb.log.length;
    // 7.00 is over the 5.00 cap a call: the first request is answered with the question, the
    // retry carrying the answer (and the sealed state) goes to the other instance.
    const moved = await ok(c, 'addFundsToContactAccount', {
      account_id: 501,
      amount: 700,
      description: 'Across',
      idempotency_key: 'across-1',
    });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatch(/Anna Smith's USD account 501 by 7\.00/);
    const calls = lb.log.slice(from).filter((r) => r.method === 'tools/call');
    expect(calls).toHaveLength(2);
    expect(calls[0]!.to).not.toBe(calls[1]!.to);
    expect(moved.data.amount).toBe(before.amount + 700);
    // Sent again (through either instance): the kept answer, nothing moved, nobody asked.
    for (let i = 0; i < 2; i++)
      expect(
        await ok(c, 'addFundsToContactAccount', { account_id: 501, amount: 700, description: 'Across', idempotency_key: 'across-1' }),
      ).toEqual({ ...moved, replayed: true });
    expect(asked).toHaveLength(1);
    expect(await ledger(501)).toEqual({ amount: before.amount + 700, entries: before.entries + 1 });
    // One audit row of the move, written in its transaction, recording who confirmed it.
    const rows = (
      await pg
        .server()
        .admin(
          `SELECT entry FROM mcp_audit WHERE entry::json->>'idempotency_key' = 'across-1' AND entry::json->>'status' = '200' AND entry::json->>'replayed' = 'false'`,
          db,
        )
    ).rows;
    expect(rows).toHaveLength(1);
    expect(JSON.parse(rows[0].entry).confirmation).toMatchObject({ how: 'elicitation accepted' });
  });

  test('a "no" given through one instance is final on the other: the same request answered "yes" there moves nothing', async () => {
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
      'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
    };
    let id = 0;
    const call = async (to: number, more: Record<string, unknown> = {}) => {
      const res = await fetch(instances[to]!.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2026-07-28',
          'Mcp-Method': 'tools/call',
          'Mcp-Name': 'addFundsToContactAccount',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: ++id,
          method: 'tools/call',
          params: {
            name: 'addFundsToContactAccount',
            arguments: { account_id: 501, amount: 600, description: 'Asked' },
            ...more,
            _meta: envelope,
          },
        }),
      });
      const text = await res.text();
      const json = res.headers.get('content-type')?.includes('text/event-stream')
        ? JSON.parse(
            text
              .split('\n')
              .filter((l) => l.startsWith('data: '))
              .at(-1)!
              .slice(6),
          )
        : JSON.parse(text);
      return json.result;
    };
    const before = await ledger(501);
    const first = await call(0);
    expect(first.resultType).toBe('input_required');
    const answer = (to: number, reply: object) => call(to, { requestState: first.requestState, inputResponses: { confirm: reply } });
    expect(JSON.parse((await answer(1, { action: 'decline' })).content[0].text)).toMatchObject({ code: 'confirmation_declined' });
    for (const to of [0, 1])
      expect(JSON.parse((await answer(to, { action: 'accept', content: { confirm: true } })).content[0].text)).toMatchObject({
        code: 'confirmation_declined',
      });
    expect(await ledger(501)).toEqual(before);
  });

  test('an idempotency key used on one instance replays on the other', async () => {
    const [a, b] = [keep(await connectHttp('2026-07-28', instances[0]!.url)), keep(await connectHttp('2026-07-28', instances[1]!.url))];
    const before = await ledger(501);
    const first = await ok(a, 'addFundsToContactAccount', { account_id: 501, amount: 100, description: 'Once', idempotency_key: 'once-1' });
    const again = await ok(b, 'addFundsToContactAccount', { account_id: 501, amount: 100, description: 'Once', idempotency_key: 'once-1' });
    expect(again).toEqual({ ...first, replayed: true });
    // The same key for another call is a conflict on either.
    const other = await b.callTool({
      name: 'addFundsToContactAccount',
      arguments: { account_id: 501, amount: 200, description: 'Once', idempotency_key: 'once-1' },
    });
    expect(firstJson(other).code).toBe('idempotency_conflict');
    expect(await ledger(501)).toEqual({ amount: before.amount + 100, entries: before.entries + 1 });
  });

  test('20 concurrent money calls over both instances never pass the daily cap', async () => {
    // A client that cannot ask its user: a call over a cap is refused, never moved.
    const c = keep(await connectHttp('2026-07-28', lb.url, {}, { elicitation: false }));
    const before = await ledger(504);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        c.callTool({ name: 'addFundsToContactAccount', arguments: { account_id: 504, amount: 100, description: `race ${i}` } }),
      ),
    );
    const codes = results.map((r) => (r.isError ? firstJson(r).code : 'moved'));
    // 10.00 a day is 1000 kopecks: ten calls of 100 fit, the other ten are refused.
    expect(codes.filter((x) => x === 'moved')).toHaveLength(10);
    expect(codes.filter((x) => x === 'confirmation_required')).toHaveLength(10);
    expect(await ledger(504)).toEqual({ amount: before.amount + 1000, entries: before.entries + 10 });
    expect(new Set(lb.log.slice(-20).map((r) => r.to))).toEqual(new Set([0, 1]));
  });

  test('a 2025-era session works through the sticky route; the instance that does not hold it answers 404', async () => {
    const c = keep(await connectHttp('2025-11-25', lb.url));
    const from = lb.log.length;
    const a = await ok(c, 'getContactAccounts', { contact_id: 1001 });
    expect(a.data[0].id).toBe(501);
    await ok(c, 'findContacts', { query: 'Maria' });
    const calls = lb.log.slice(from);
    expect(new Set(calls.map((r) => r.to)).size).toBe(1);
    // The same session sent to the other instance: 404, so the client starts a new one.
    const other = instances[1 - calls[0]!.to]!;
    const sid = [...lb.sessions.keys()].pop()!;
    const res = await fetch(other.url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Mcp-Session-Id': sid,
        'Mcp-Protocol-Version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} }),
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { message: expect.stringMatching(/Session not found/) } });
  });

  test('a 2025-era money confirmation is asked over the session (elicitation/create) and moves once', async () => {
    const c = keep(await connectHttp('2025-11-25', lb.url));
    const asked: string[] = [];
    c.answer((q) => (asked.push(q.message), { action: 'accept', content: { confirm: true } }));
    const before = await ledger(505);
    // Ivan Sidorov's JPY account 505: the caps are 5 yen a call (JPY has no minor unit).
    const moved = await ok(c, 'addFundsToContactAccount', {
      account_id: 505,
      amount: 10,
      description: 'Session',
      idempotency_key: 'session-1',
    });
    expect(asked).toHaveLength(1);
    expect(moved.data.amount).toBe(before.amount + 10);
    expect(
      await ok(c, 'addFundsToContactAccount', { account_id: 505, amount: 10, description: 'Session', idempotency_key: 'session-1' }),
    ).toEqual({ ...moved, replayed: true });
    expect(await ledger(505)).toEqual({ amount: before.amount + 10, entries: before.entries + 1 });
  });

  test('over stdio too, from DATABASE_URL when neither --db nor WORKSPACE_DB is set', async () => {
    const c = keep(
      await connectStdio('2025-11-25', {
        command: process.execPath,
        args: [CLI, 'mcp'],
        env: cliEnv({ ...ENV, DATABASE_URL: url }),
        stderr: 'pipe',
      }),
    );
    const a = await ok(c, 'getContactAccounts', { contact_id: 1006 });
    expect(a.data[0].id).toBe(504);
  });
});
