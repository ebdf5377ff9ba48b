/**
 * MCP Apps at the protocol level, in both eras: which clients are offered the views and the
 * Account view's commit tool, what `--no-ui` turns off, that results are the same with and
 * without the views, and that a confirmed move goes over the cap once per idempotency key.
 * (test/apps/views.test.ts shows the views themselves in a browser.)
 */
import { afterEach, describe, expect, test } from 'vitest';
import { BULK_COMMIT_TOOL, COMMIT_TOOL, UI_EXTENSION, UI_MIME, VIEWS } from '../../src/mcp/composite/apps.js';
import { measureTools, overBudget } from '../../src/mcp/tool-text.js';
import { CLI, cliEnv, spawnAnnounced } from '../helpers/cli.js';
import { stop } from '../helpers/temp.js';
import { accountFixture, seedDb, tempDir } from '../helpers/world.js';
import { connectHttp, connectInMemory, connectStdio, ERAS, type McpClient } from './clients.js';
import { queryRows } from '../helpers/store.js';
import { firstJson, manyContacts, useMcp, type McpWorld } from './harness.js';

const startMcp = useMcp();
/** What an MCP Apps host declares (the extension, with the HTML profile). */
const HOST = { extensions: { [UI_EXTENSION]: { mimeTypes: [UI_MIME] } } };

async function appsClient(world: McpWorld, era: (typeof ERAS)[number]): Promise<McpClient> {
  const c = await connectInMemory(era, world.factory, { capabilities: HOST });
  // Closed with the world's own client, after the test.
  const close = world.close;
  world.close = async () => {
    await c.close();
    await close();
  };
  return c;
}

const names = (list: { tools: Array<{ name: string }> }) => list.tools.map((t) => t.name);

describe.each(ERAS)('MCP Apps over %s', (era) => {
  test('a host without MCP Apps: views named in _meta only; no commit tool, no ui:// resources, the commit tool unknown', async () => {
    const world = await startMcp();
    const plain = await connectInMemory(era, world.factory);
    const before = world.store.admin.journal(500)!.length;
    try {
      const list = await plain.listTools();
      expect(names(list)).not.toContain(COMMIT_TOOL);
      const byName = new Map(list.tools.map((t) => [t.name, t]));
      expect(byName.get('getContacts')?._meta).toEqual({ ui: { resourceUri: 'ui://workspace/contacts.html' } });
      expect(byName.get('findContacts')?._meta).toEqual({ ui: { resourceUri: 'ui://workspace/contacts.html' } });
      expect(byName.get('getContactAccounts')?._meta).toEqual({ ui: { resourceUri: 'ui://workspace/account.html' } });
      expect(byName.get('getListSchema')?._meta).toEqual({ ui: { resourceUri: 'ui://workspace/list.html' } });
      expect(byName.get('addFundsToContactAccount')?._meta).toBeUndefined();
      const resources = (await plain.listResources()).resources.map((r) => r.uri);
      expect(resources.some((u) => u.startsWith('ui://'))).toBe(false);
      // Visibility "app" is the host's to enforce; a host that does not know it must never reach the tool.
      const r = await plain.callTool({
        name: COMMIT_TOOL,
        arguments: { move: 'add', account_id: 500, amount: 100, description: 'x', idempotency_key: 'k' },
      });
      expect(r.isError).toBe(true);
      expect(firstJson(r).message).toMatch(/Unknown tool confirmMoneyMove/);
      expect(world.store.admin.journal(500)).toHaveLength(before);
    } finally {
      await plain.close();
    }
  });

  test('an MCP Apps host: the commit tool for the app only, and the three views as self-contained HTML', async () => {
    const world = await startMcp();
    const host = await appsClient(world, era);
    const list = await host.listTools();
    const commit = list.tools.find((t) => t.name === COMMIT_TOOL);
    expect(commit?._meta).toEqual({ ui: { resourceUri: 'ui://workspace/account.html', visibility: ['app'] } });
    const resources = (await host.listResources()).resources.filter((r) => r.uri.startsWith('ui://'));
    expect(resources.map((r) => [r.uri, r.mimeType])).toEqual(VIEWS.map((v) => [v.uri, UI_MIME]));
    for (const v of VIEWS) {
      const read = await host.readResource({ uri: v.uri });
      const c = read.contents[0] as { mimeType: string; text: string };
      expect(c.mimeType).toBe(UI_MIME);
      // Under 150 KB, and nothing fetched from elsewhere (hosts' CSP blocks it): no src/href to a URL.
      expect(Buffer.byteLength(c.text)).toBeLessThan(150 * 1024);
      expect(c.text).toMatch(/^<!doctype html>/);
      expect(c.text).not.toMatch(/\b(src|href)\s*=\s*["']?(https?:)?\/\//i);
    }
    await expect(host.readResource({ uri: 'ui://workspace/nope.html' })).rejects.toThrow();
  });

  test('--no-ui: no _meta.ui, no commit tool and no views, even for an MCP Apps host', async () => {
    const world = await startMcp({ ui: false });
    const host = await appsClient(world, era);
    const list = await host.listTools();
    expect(names(list)).not.toContain(COMMIT_TOOL);
    expect(list.tools.filter((t) => t._meta !== undefined)).toEqual([]);
    expect((await host.listResources()).resources.some((r) => r.uri.startsWith('ui://'))).toBe(false);
    await expect(host.readResource({ uri: VIEWS[0]!.uri })).rejects.toThrow();
  });

  test('results are the same with the views on and off (the views are additive)', async () => {
    const on = await startMcp();
    const off = await startMcp({ ui: false });
    for (const [name, args] of [
      ['getContacts', { count: 2 }],
      ['findContacts', { query: 'Ann' }],
      ['getContactAccounts', { contact_id: 100 }],
    ] as const) {
      const a = await on.call(name, args);
      const b = await off.call(name, args);
      // Times differ between two worlds (a seeded account's created_at, the index's as_of): the rest must match.
      const strip = (r: unknown) => JSON.parse(JSON.stringify(r).replace(/(\\?"(?:as_of|created_at|updated_at)\\?":\\?")[^"\\]*/g, '$1'));
      expect(strip(a)).toEqual(strip(b));
    }
  });

  test('Confirm in the Account view moves money over the cap once per idempotency key, recorded as confirmed by the app view', async () => {
    const world = await startMcp({ money: { maxAmount: { '*': '1.00' } } });
    const host = await appsClient(world, era);
    await host.callTool({ name: 'getContactAccounts', arguments: { contact_id: 100 } });
    const before = world.store.admin.journal(500)!.length;
    // The model's own call over the cap still needs the person: asked (this host declines), nothing moves.
    const model = await host.callTool({
      name: 'addFundsToContactAccount',
      arguments: { account_id: 500, amount: 2500, description: 'model' },
    });
    expect(firstJson(model).code).toBe('confirmation_declined');
    expect(world.store.admin.journal(500)).toHaveLength(before);
    const args = { move: 'add', account_id: 500, amount: 2500, description: 'Top-up in the view', idempotency_key: 'card-1' };
    const first = await host.callTool({ name: COMMIT_TOOL, arguments: args });
    expect(first.isError).toBeFalsy();
    expect((first.structuredContent as { data: { amount: number } }).data.amount).toBe(3500);
    const again = await host.callTool({ name: COMMIT_TOOL, arguments: args });
    expect(again.structuredContent).toMatchObject({ data: { amount: 3500 }, replayed: true });
    const journal = world.store.admin.journal(500)!;
    expect(journal).toHaveLength(before + 1);
    expect(journal.at(-1)).toMatchObject({ amount: 2500, description: 'Top-up in the view' });
    const audit = (await world.context.audit!.read({ limit: 10, tool: 'addFundsToContactAccount' })).entries;
    const moved = audit.filter((e) => e.status === 200 && !e.replayed);
    expect(moved).toHaveLength(1);
    // Who confirmed, and in which client: the view is only as trustworthy as the host that shows it.
    expect(moved[0]!.confirmation).toEqual({
      how: 'app view',
      by: expect.stringMatching(/^the person, in the Account view of test 1\.0\.0/),
    });
    expect(moved[0]!.idempotency_key).toBe('card-1');
  });

  test("a host that cannot ask but shows views: runBulk refuses a message plan and points to the plan's card; its Confirm sends it once", async () => {
    const world = await startMcp({ fixture: manyContacts(5, (i) => ({ tags: i < 3 ? ['gold'] : [] })) });
    const host = await connectInMemory(era, world.factory, { capabilities: HOST, elicitation: false });
    const close = world.close;
    world.close = async () => {
      await host.close();
      await close();
    };
    const sent = () => queryRows(world.store, "SELECT contact_id FROM conversation WHERE direction = 'out' AND text = 'Shop opens at 9'");
    const preview = await host.callTool({
      name: 'previewBulk',
      arguments: { selection: { bot_id: 10, tags: ['gold'] }, action: { type: 'sendMessage', text: 'Shop opens at 9' } },
    });
    const planId = (preview.structuredContent as { data: { plan_id: string; count: number } }).data.plan_id;
    const tool = (await host.listTools()).tools.find((t) => t.name === 'previewBulk');
    expect(tool?._meta).toEqual({ ui: { resourceUri: 'ui://workspace/bulk.html' } });
    const refused = firstJson(await host.callTool({ name: 'runBulk', arguments: { plan_id: planId } }));
    expect(refused).toMatchObject({ status: 422, code: 'confirmation_required' });
    expect(refused.message).toContain("the plan's card (shown with previewBulk's answer) has a Confirm button");
    expect(sent()).toEqual([]);
    const first = await host.callTool({ name: BULK_COMMIT_TOOL, arguments: { plan_id: planId } });
    expect(first.structuredContent).toMatchObject({ data: { done: 3, failed: 0, remaining: 0 } });
    await host.callTool({ name: BULK_COMMIT_TOOL, arguments: { plan_id: planId } });
    expect(sent()).toHaveLength(3);
    expect(firstJson(await host.callTool({ name: BULK_COMMIT_TOOL, arguments: { plan_id: 'not-a-plan' } }))).toMatchObject({
      status: 422,
      errors: { plan_id: [expect.stringMatching(/previewBulk makes one/)] },
    });
    // A client without the views cannot call it at all.
    expect(firstJson(await world.client.callTool({ name: BULK_COMMIT_TOOL, arguments: { plan_id: planId } }))).toMatchObject({
      status: 404,
      message: expect.stringMatching(/^Unknown tool confirmBulkPlan/),
    });
    const plan = (await world.context.audit!.read({ limit: 10, tool: 'runBulk' })).entries.find((e) => e.status === 200);
    expect(plan?.confirmation).toEqual({
      how: `app view (bulk plan ${planId})`,
      by: expect.stringMatching(/^the person, in the Bulk plan view of test 1\.0\.0/),
    });
  });

  test('the commit tool refuses a call without a key or with an unknown move, moving nothing', async () => {
    const world = await startMcp({ money: { maxAmount: { '*': '1.00' } } });
    const host = await appsClient(world, era);
    await host.callTool({ name: 'getContactAccounts', arguments: { contact_id: 100 } });
    const before = world.store.admin.journal(500)!.length;
    const noKey = await host.callTool({ name: COMMIT_TOOL, arguments: { move: 'add', account_id: 500, amount: 100, description: 'x' } });
    expect(firstJson(noKey)).toMatchObject({ status: 422, errors: { idempotency_key: [expect.stringMatching(/required/)] } });
    const bad = await host.callTool({
      name: COMMIT_TOOL,
      arguments: { move: 'steal', account_id: 500, amount: 100, description: 'x', idempotency_key: 'k2' },
    });
    expect(firstJson(bad)).toMatchObject({ status: 422, errors: { move: [expect.stringMatching(/add, withdraw/)] } });
    expect(world.store.admin.journal(500)).toHaveLength(before);
  });

  test("the commit tool refuses, in the API's words, an amount or account the API would refuse (it goes over the caps: nothing it cannot read gets past)", async () => {
    for (const money of [{ maxAmount: { '*': '1.00' } }, undefined]) {
      const world = await startMcp({ money });
      const host = await appsClient(world, era);
      await host.callTool({ name: 'getContactAccounts', arguments: { contact_id: 100 } });
      const before = world.store.admin.journal(500)!.length;
      const commit = (more: Record<string, unknown>, key: string) =>
        host.callTool({
          name: COMMIT_TOOL,
          arguments: { move: 'add', account_id: 500, amount: 100, description: 'x', idempotency_key: key, ...more },
        });
      for (const [i, amount] of [0, -100, 1.5, 'abc', '1e3', 2 ** 53].entries()) {
        expect(firstJson(await commit({ amount }, `a-${i}`)), String(amount)).toMatchObject({
          status: 422,
          errors: { amount: expect.any(Array) },
        });
      }
      expect(firstJson(await commit({ account_id: 'five' }, 'b'))).toMatchObject({
        status: 422,
        errors: { account_id: ['The account id field must be an integer.'] },
      });
      expect(world.store.admin.journal(500)).toHaveLength(before);
      // Text the API reads as an integer is that integer.
      const r = await commit({ account_id: '500', amount: '250' }, 'c');
      expect(world.store.admin.journal(500)!.at(-1), JSON.stringify(r.content)).toMatchObject({ amount: 250 });
      await world.close();
    }
  });
});

test.each(ERAS)('%s: an MCP Apps host\u2019s tools/list, the commit tool included, keeps to the tool budget', async (era) => {
  const world = await startMcp();
  const host = await appsClient(world, era);
  const list = await host.listTools();
  expect(names(list)).toContain(COMMIT_TOOL);
  expect(overBudget(measureTools(list))).toEqual([]);
});

test('the tool definitions stay small: the views and their two app-only tools add under 1 500 characters to tools/list', async () => {
  const on = await startMcp();
  const off = await startMcp({ ui: false });
  const host = await appsClient(on, '2025-11-25');
  const size = async (c: McpClient) => JSON.stringify((await c.listTools()).tools).length;
  const plain = await size(on.client);
  const apps = await size(host);
  const none = await size(off.client);
  // Each viewed tool's `_meta.ui.resourceUri` (under 65 characters each); the app-only tools only for an Apps host.
  expect(plain - none).toBeLessThan(65 * VIEWS.flatMap((v) => v.tools).length);
  expect(apps - none).toBeLessThan(1_500);
});

describe.each(['stdio', 'http'] as const)('the built CLI over %s', (transport) => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  /** An MCP Apps host of `era` on a server started with `flags`. */
  async function connect(era: (typeof ERAS)[number], flags: string[]): Promise<McpClient> {
    const dbFile = seedDb(accountFixture());
    const env = cliEnv({ WORKSPACE_API_KEY: 'alice-key', WORKSPACE_DATA_DIR: tempDir() });
    let c: McpClient;
    if (transport === 'stdio') {
      c = await connectStdio(
        era,
        { command: process.execPath, args: [CLI, 'mcp', '--db', dbFile, ...flags], env, stderr: 'pipe' },
        { capabilities: HOST },
      );
    } else {
      const started = await spawnAnnounced(['mcp', '--db', dbFile, '--http', '--port', '0', ...flags], /(http:\/\/\S+\/mcp)/, env);
      cleanups.push(() => stop(started.proc));
      c = await connectHttp(era, started.url, {}, { capabilities: HOST });
    }
    cleanups.push(() => c.close());
    return c;
  }

  test.each(ERAS)('%s: the views and the commit tool by default, none of them with --no-ui', async (era) => {
    const on = await connect(era, []);
    expect(names(await on.listTools())).toContain(COMMIT_TOOL);
    expect((await on.listResources()).resources.filter((r) => r.uri.startsWith('ui://'))).toHaveLength(VIEWS.length);
    expect((await on.readResource({ uri: VIEWS[1]!.uri })).contents[0]).toMatchObject({ mimeType: UI_MIME });
    const off = await connect(era, ['--no-ui']);
    const tools = (await off.listTools()).tools;
    expect(tools.map((t) => t.name)).not.toContain(COMMIT_TOOL);
    expect(tools.filter((t) => t._meta?.ui !== undefined)).toEqual([]);
    expect((await off.listResources()).resources.some((r) => r.uri.startsWith('ui://'))).toBe(false);
  });
});
