/**
 * The drain of `mcp --http` on PostgreSQL through the built CLI (issue 49), several instances on
 * one database as a deployment runs them: the first SIGTERM'd in the middle of a runBulk (a
 * 2026-07-28 client) answers its progress and exits 0, and runBulk on the second (a 2025-11-25
 * client, `--auth key`) carries the rest out, every contact's step exactly once (balances and
 * journal entries read from the database); money moves in hand over both eras at once are
 * answered whole and moved once each.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadFixture } from '../../src/store/seed.js';
import { PgStore } from '../../src/store/pg/index.js';
import { cliEnv, spawnAnnounced, spawnServe, type Announced } from '../helpers/cli.js';
import {
  bulkFixture,
  bulkStoppedByDrain,
  get,
  heldApiTopUp,
  heldResult,
  originOf,
  previewDeposit,
  readyzIs,
  request2026,
  send,
  session2025,
  sigterm,
  toolCall2025,
  until,
} from '../helpers/drain.js';
import { freePort, usePostgres } from '../helpers/postgres.js';
import { stop } from '../helpers/temp.js';
import { connectHttp, type McpClient } from '../mcp/clients.js';

const pg = usePostgres();
const ENV = { WORKSPACE_SECRET: 'ef'.repeat(32), WORKSPACE_API_KEY: 'alice-key' };
const N = 150;

let url: string;
let db: string;
const running: Announced[] = [];
const clients: McpClient[] = [];

beforeAll(async () => {
  url = await pg.server().database();
  db = new URL(url).pathname.slice(1);
  const store = PgStore.open(url);
  try {
    loadFixture(store, bulkFixture(N));
  } finally {
    store.close();
  }
}, 60_000);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await Promise.all(running.map((r) => stop(r.proc)));
});

async function instance(...more: string[]): Promise<Announced> {
  const port = more.includes('--port') ? [] : ['--port', '0'];
  const a = await spawnAnnounced(['mcp', '--http', ...port, '--db', url, ...more], /(http:\/\/\S+\/mcp)\b/, cliEnv(ENV));
  running.push(a);
  return a;
}

/** Accounts with ids from `from` to `to`: each one's balance and journal entries, as the database holds them. */
async function accounts(from: number, to: number): Promise<Map<number, { amount: number; entries: number }>> {
  const rows = (
    await pg.server().admin(
      `SELECT a.id, a.amount::int AS amount, (SELECT count(*) FROM account_journal j WHERE j.account_id = a.id)::int AS entries
         FROM contact_accounts a WHERE a.id BETWEEN ${from} AND ${to}`,
      db,
    )
  ).rows as Array<{ id: number; amount: number; entries: number }>;
  return new Map(rows.map((r) => [r.id, { amount: r.amount, entries: r.entries }]));
}

describe('mcp --http on PostgreSQL, two instances on one database', () => {
  test('SIGTERM the first mid-runBulk: it answers its progress and exits 0; runBulk on the second does the rest, each step once', async () => {
    const [first, second] = await Promise.all([instance(), instance('--auth', 'key')]);
    // The second (--auth key) makes its service threads once it listens: ready when they are.
    await until(readyzIs(originOf(second.url), 200), 10_000);
    expect(JSON.parse((await get(`${originOf(second.url)}/readyz`)).text)).toEqual({ status: 'ok' });
    const before = await accounts(500, 700 + N);
    expect(before.size).toBe(N + 1);
    const c1 = await connectHttp('2026-07-28', first.url);
    clients.push(c1);
    c1.answer(() => ({ action: 'accept', content: { confirm: true } }));
    const planId = await previewDeposit(c1, 'Drain on PostgreSQL');
    const { data: stopped, readyAt, answeredAt, code, exitAt } = await bulkStoppedByDrain(c1, first, planId, 15, N + 1);
    expect(code).toBe(0);
    console.info(
      `PostgreSQL bulk in hand: SIGTERM at step ${stopped.done} of ${N + 1}; readyz 503 by ${readyAt ?? '(exited first)'} ms, runBulk answered at ${answeredAt} ms, exit 0 at ${exitAt} ms`,
    );
    // Half-way in the database: the steps done are moved, the rest not.
    const midway = await accounts(500, 700 + N);
    const moved = [...midway].filter(([id, a]) => a.entries === before.get(id)!.entries + 1).length;
    expect(moved).toBe(stopped.done);

    const c2 = await connectHttp('2025-11-25', second.url, { Authorization: 'Bearer alice-key' });
    clients.push(c2);
    c2.answer(() => ({ action: 'accept', content: { confirm: true } }));
    const rest = await c2.callTool({ name: 'runBulk', arguments: { plan_id: planId } }, { timeout: 60_000 });
    expect((rest.structuredContent as any).data).toMatchObject({ done: N + 1, failed: 0, remaining: 0 });
    // Every contact's deposit exactly once: 5.00 more and one journal entry more on each account.
    const after = await accounts(500, 700 + N);
    const wrong = [...after].filter(([id, a]) => a.amount !== before.get(id)!.amount + 500 || a.entries !== before.get(id)!.entries + 1);
    expect(wrong).toEqual([]);
  }, 60_000);

  test('money moves in hand over both eras at once are answered whole, each moved once; exit 0', async () => {
    const m = await instance();
    const [before] = (await accounts(500, 500)).values();
    const headers = await session2025(m.url);
    const move = { account_id: 500, amount: 250, description: 'drain' };
    const old = send(m.url, 'POST', headers, toolCall2025(2, 'addFundsToContactAccount', { ...move, idempotency_key: 'pg-2025' }), true);
    const call2026 = request2026(3, 'tools/call', {
      name: 'addFundsToContactAccount',
      arguments: { ...move, idempotency_key: 'pg-2026' },
    });
    const modern = send(m.url, 'POST', call2026.headers, call2026.body, true);
    const { t0, exit, readyAt } = await sigterm(m);
    const answers = await Promise.all([heldResult(old, t0), heldResult(modern, t0)]);
    const answeredAt = Math.max(...answers.map((a) => a.answeredAt));
    const { code, ms } = await exit;
    expect(code).toBe(0);
    console.info(
      `PostgreSQL moves in hand (2025 + 2026): readyz 503 by ${readyAt} ms, both answered at ${answeredAt} ms, exit 0 at ${ms} ms`,
    );
    const [after] = (await accounts(500, 500)).values();
    expect(after).toEqual({ amount: before!.amount + 500, entries: before!.entries + 2 });
  });

  test('--auth oauth is ready once its service threads are, saying nothing of the database; serve drains a money move in hand', async () => {
    const port = await freePort();
    const o = await instance('--auth', 'oauth', '--public-url', `http://127.0.0.1:${port}`, '--port', String(port));
    await until(readyzIs(originOf(o.url), 200), 10_000);
    const health = await get(`${originOf(o.url)}/healthz`);
    expect(JSON.parse(health.text)).toMatchObject({ status: 'ok', draining: false });
    for (const secret of [db, url, 'alice-key', ENV.WORKSPACE_SECRET]) expect(health.text).not.toContain(secret);

    const s = await spawnServe(['--db', url], ENV);
    running.push(s);
    const [before] = (await accounts(500, 500)).values();
    const move = heldApiTopUp(s.url);
    const { t0, exit, readyAt } = await sigterm(s);
    move.finish();
    const moved = await move.answer;
    const answeredAt = Date.now() - t0;
    expect(moved.status, moved.text).toBe(200);
    const { code, ms } = await exit;
    expect(code).toBe(0);
    console.info(`serve on PostgreSQL, move in hand: readyz 503 by ${readyAt} ms, answered at ${answeredAt} ms, exit 0 at ${ms} ms`);
    const [after] = (await accounts(500, 500)).values();
    expect(after).toEqual({ amount: before!.amount + 250, entries: before!.entries + 1 });
  });
});
