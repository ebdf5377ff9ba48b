/**
 * A bulk money plan survives a kill -9 of the server midway (issue 32): the built CLI
 * (`mcp --http`) on a SQLite database is killed while runBulk tops up 600 contacts; a new
 * server on the same files, asked runBulk again, goes on where the first stopped (once the
 * dead run's hold on the plan lapses). Every balance ends exactly one top-up higher, and each
 * account's journal holds exactly one entry of the plan. Both protocol eras.
 */
import { afterEach, expect, test } from 'vitest';
import { cliEnv, spawnAnnounced, type Announced } from '../helpers/cli.js';
import { openStore, queryRows } from '../helpers/store.js';
import { stop } from '../helpers/temp.js';
import { seedDb, tempDir } from '../helpers/world.js';
import { connectHttp, ERAS, type McpClient } from './clients.js';
import { manyContacts } from './harness.js';

const N = 600;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Bot 10 of Alice with N more contacts, all tagged vip, each with a USD account (700+i) holding 100. */
function world() {
  const f = manyContacts(N, () => ({ tags: ['vip'] }));
  const accounts = Array.from({ length: N }, (_, i) => ({ id: 700 + i, contact_id: 1000 + i, currency: 'USD', amount: 100 }));
  return { ...f, accounts: [...(f.accounts as unknown[]), ...accounts] };
}

async function serve(db: string, dataDir: string): Promise<Announced> {
  const started = await spawnAnnounced(
    ['mcp', '--http', '--port', '0', '--db', db],
    /(http:\/\/\S+\/mcp)/,
    cliEnv({ WORKSPACE_DATA_DIR: dataDir }),
  );
  cleanups.push(() => stop(started.proc));
  return started;
}

async function client(era: (typeof ERAS)[number], url: string): Promise<McpClient> {
  const c = await connectHttp(era, url);
  cleanups.push(() => c.close().catch(() => undefined));
  c.answer(() => ({ action: 'accept', content: { confirm: true } }));
  return c;
}

test.each(ERAS)(
  '%s: kill -9 in the middle of a money plan, then runBulk again: every balance right, one journal entry per contact',
  async (era) => {
    const db = seedDb(world());
    const dataDir = tempDir();
    const first = await serve(db, dataDir);
    const c1 = await client(era, first.url);
    const preview = await c1.callTool({
      name: 'previewBulk',
      arguments: {
        selection: { bot_id: 10, tags: ['vip'] },
        action: { type: 'deposit', currency: 'USD', amount: 500, description: 'Kill bonus' },
      },
    });
    const planId = (preview.structuredContent as any).data.plan_id as string;
    expect((preview.structuredContent as any).data.count).toBe(N + 1); // and Ann
    // Killed as soon as the run reports some progress: mid-run, no clean shutdown. (The call itself is left to fail.)
    const killed = new Promise((resolve) => first.proc.once('exit', resolve));
    void c1
      .callTool(
        { name: 'runBulk', arguments: { plan_id: planId } },
        { onprogress: (p) => void (p.progress >= 20 && first.proc.kill('SIGKILL')), timeout: 60_000 },
      )
      .catch(() => undefined);
    await killed;

    const store = openStore(db);
    const moved = () =>
      queryRows<{ n: number }>(store, 'SELECT count(*) AS n FROM account_journal WHERE description = ?', ['Kill bonus'])[0]!.n;
    const midway = Number(moved());
    expect(midway).toBeGreaterThan(0);
    expect(midway).toBeLessThan(N);

    const second = await serve(db, dataDir);
    const c2 = await client(era, second.url);
    // The dead run holds the plan until its hold lapses (15 s from its last step): until then another call is under way.
    let data: any;
    for (let i = 0; i < 40; i++) {
      const r = await c2.callTool({ name: 'runBulk', arguments: { plan_id: planId } }, { timeout: 60_000 });
      expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
      data = (r.structuredContent as any).data;
      if (data.remaining === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    expect(data).toMatchObject({ plan_id: planId, done: N + 1, failed: 0, remaining: 0 });
    const rows = queryRows<{ id: number; amount: number; n: number }>(
      store,
      `SELECT a.id, a.amount, (SELECT count(*) FROM account_journal j WHERE j.account_id = a.id AND j.description = 'Kill bonus') AS n
       FROM contact_accounts a WHERE a.id >= 700 ORDER BY a.id`,
    );
    expect(rows).toHaveLength(N);
    expect(rows.filter((r) => Number(r.amount) !== 600 || Number(r.n) !== 1)).toEqual([]);
  },
  120_000,
);
