/** exportContacts, list resources, prompts and tool filters, over the real Client. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test, vi } from 'vitest';
import type { Backend } from '../../../src/api/backend.js';
import { firstJson, manyContacts, mcpFixture, useMcp, type McpWorld } from '../harness.js';

const startMcp = useMcp();

function recording(calls: Array<{ method: string; params: Record<string, unknown> }>) {
  return (b: Backend): Backend => ({
    call: (method, params, o) => {
      calls.push({ method, params });
      return b.call(method, params, o);
    },
    close: () => b.close(),
  });
}

describe('exportContacts', () => {
  test('writes every matching contact as JSONL and returns count, file and a resource link, not the rows', async () => {
    const calls: Array<{ method: string; params: Record<string, unknown> }> = [];
    const world = await startMcp({ fixture: manyContacts(2500), wrap: recording(calls) });
    const progress: number[] = [];
    const r = await world.client.callTool(
      { name: 'exportContacts', arguments: { bot_id: 10 } },
      {
        onprogress: (p) => progress.push(p.progress),
      },
    );
    expect(r.isError).toBeFalsy();
    const body = r.structuredContent as any;
    expect(body).toMatchObject({ count: 2503, format: 'jsonl', uri: expect.stringMatching(/^workspace:\/\/exports\//) });
    // The name is the file's only key (other owners' servers may share the folder): 72 random bits at its end.
    expect(body.uri).toMatch(/^workspace:\/\/exports\/contacts-10-\d{8}T\d{6}-[A-Za-z0-9_-]{12}\.jsonl$/);
    expect(JSON.stringify(r.content).length).toBeLessThan(2000);
    const lines = readFileSync(body.file, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(2503);
    expect(JSON.parse(lines[0]!)).toMatchObject({ id: 100, bot_id: 10 });
    expect(new Set(lines.map((l) => JSON.parse(l).id)).size).toBe(2503);
    expect(r.content.find((c) => c.type === 'resource_link')).toMatchObject({ uri: body.uri });
    // Offset paging at limit 1000, one date_to cap fixed at the start, one progress per page.
    const pages = calls.filter((c) => c.method === 'getContacts');
    expect(pages.map((c) => c.params.offset)).toEqual([0, 1000, 2000]);
    expect(pages.every((c) => c.params.limit === 1000 && c.params.date_to === pages[0]!.params.date_to)).toBe(true);
    expect(progress).toEqual([1000, 2000, 2503]);
    // The resource reads the file, in parts within the result budget.
    const read: string[] = [];
    for (let uri: string | null = body.uri; uri;) {
      const part = (await world.client.readResource({ uri })).contents[0] as unknown as { text: string; _meta: { next: string | null } };
      read.push(...part.text.trim().split('\n'));
      uri = part._meta.next;
    }
    expect(read).toEqual(lines);
  });

  test('CSV: a header and one quoted row a contact; date_from/date_to filter', async () => {
    const world = await startMcp();
    const r = await world.call('exportContacts', {
      bot_id: 10,
      format: 'csv',
      date_from: Date.parse('2026-01-02T00:00:00Z') / 1000,
      date_to: Date.parse('2026-01-03T00:00:00Z') / 1000,
    });
    const body = r.structuredContent as any;
    expect(body.count).toBe(2);
    const rows = readFileSync(body.file, 'utf8').split('\r\n').filter(Boolean);
    expect(rows[0]).toMatch(/^id,bot_id,messenger,name,/);
    expect(rows).toHaveLength(3);
    expect(rows[2]).toContain('"Cid, ""the third"""');
  });

  test('a growing bot still ends: contacts created after the cap are not exported', async () => {
    const f = mcpFixture();
    (f.contacts as unknown[]).push({
      id: 300,
      bot_id: 10,
      messenger: 'telegram',
      name: 'Future',
      telegram_id: '7',
      created_at: '2099-01-01T00:00:00Z',
    });
    const world = await startMcp({ fixture: f });
    const r = await world.call('exportContacts', { bot_id: 10 });
    expect((r.structuredContent as any).count).toBe(3);
  });

  test("errors come back in the API shape: a bad format is a 422, a bad key the pipeline's 401", async () => {
    const world = await startMcp();
    expect(firstJson(await world.call('exportContacts', { format: 'xml' }))).toMatchObject({
      status: 422,
      errors: { format: [expect.any(String)] },
    });
    const nobody = await startMcp({ apiKey: 'nobody' });
    expect(firstJson(await nobody.call('exportContacts', {}))).toMatchObject({ status: 401, error: 'unauthorized' });
    expect(existsSync(join(nobody.dir, 'exports')) ? readdirSync(join(nobody.dir, 'exports')) : []).toEqual([]);
  });

  test('cancellable: a cancelled export stops between pages and keeps no file', async () => {
    const world = await startMcp({ fixture: manyContacts(5000) });
    const ac = new AbortController();
    const call = world.client.callTool(
      { name: 'exportContacts', arguments: {} },
      {
        signal: ac.signal,
        onprogress: () => ac.abort(),
      },
    );
    await expect(call).rejects.toThrow();
    const dir = join(world.dir, 'exports');
    await vi.waitFor(() => expect(readdirSync(dir)).toEqual([]));
  });
});

describe('resources', () => {
  async function createList(w: McpWorld, name: string, slugs = ['a']): Promise<string> {
    const fields = slugs.map((slug) => ({ name: slug.toUpperCase(), slug, type: 'string' }));
    const r = await w.call('createListSchema', { name, bot_id: 10, fields });
    return (r.structuredContent as any).data.id;
  }

  test('every list schema at workspace://lists/{schema_id}, application/json, the schema object itself', async () => {
    const world = await startMcp();
    const id = await createList(world, 'Orders');
    const { resources } = await world.client.listResources();
    expect(resources).toEqual([
      expect.objectContaining({ uri: 'workspace://workspace' }),
      expect.objectContaining({ uri: 'workspace://audit', mimeType: 'application/json' }),
      expect.objectContaining({ uri: `workspace://lists/${id}`, name: 'Orders', mimeType: 'application/json' }),
    ]);
    const read = await world.client.readResource({ uri: `workspace://lists/${id}` });
    const schema = (await world.call('getListSchema', { schema_id: id })).structuredContent as any;
    expect(read.contents[0]).toMatchObject({ uri: `workspace://lists/${id}`, mimeType: 'application/json' });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toEqual(schema.data);
  });

  test('each list is described with its own field count', async () => {
    const world = await startMcp();
    const three = await createList(world, 'Orders', ['sku', 'qty', 'note']);
    const one = await createList(world, 'Stock');
    const { resources } = await world.client.listResources();
    const lists = resources.filter((r) => r.uri.startsWith('workspace://lists/'));
    expect(lists.map((r) => r.description)).toEqual([`List ${three} in bot 10, 3 fields`, `List ${one} in bot 10, 1 field`]);
  });

  test('resources/list pages with a cursor (50 lists a page)', async () => {
    const world = await startMcp();
    for (let i = 0; i < 52; i++) await createList(world, `L${i}`);
    const first = await world.client.listResources();
    expect(first.resources).toHaveLength(52); // workspace://workspace and workspace://audit, then 50 lists
    expect(first.nextCursor).toBe('2');
    const second = await world.client.listResources({ cursor: first.nextCursor });
    expect(second.resources).toHaveLength(2);
    expect(second.nextCursor).toBeUndefined();
  });

  test('a resource template describes the lists, and completes schema_id', async () => {
    const world = await startMcp();
    const id = await createList(world, 'Orders');
    await createList(world, 'Stock');
    const { resourceTemplates } = await world.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toContain('workspace://lists/{schema_id}');
    const done = await world.client.complete({
      ref: { type: 'ref/resource', uri: 'workspace://lists/{schema_id}' },
      argument: { name: 'schema_id', value: 'ord' },
    });
    expect(done.completion.values).toEqual([id]);
  });

  test('a missing list is a resource error', async () => {
    const world = await startMcp();
    await expect(world.client.readResource({ uri: 'workspace://lists/nope' })).rejects.toThrow(/not found/i);
  });

  test('notifications/resources/list_changed when a tool creates or deletes a list', async () => {
    const world = await startMcp();
    let changes = 0;
    await world.client.onResourcesChanged(() => {
      changes++;
    });
    const id = await createList(world, 'Orders');
    await vi.waitFor(() => expect(changes).toBe(1));
    await world.call('getListSchema', { schema_id: id });
    await world.call('deleteListSchema', { schema_id: id });
    await vi.waitFor(() => expect(changes).toBe(2));
  });
});

describe('prompts', () => {
  test('prompts for a loyalty balance, a bot export and an orders list', async () => {
    const world = await startMcp();
    const { prompts } = await world.client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['setupLoyaltyBalance', 'exportBotContacts', 'designOrdersList', 'rewardSegment']);
    const p = await world.client.getPrompt({ name: 'setupLoyaltyBalance', arguments: { contact_id: '100', amount: '5.00' } });
    expect((p.messages[0]!.content as { text: string }).text).toMatch(/addFundsToContactAccount[\s\S]*idempotency_key/);
    const e = await world.client.getPrompt({ name: 'exportBotContacts', arguments: { bot_id: '10' } });
    expect((e.messages[0]!.content as { text: string }).text).toMatch(/exportContacts/);
    const d = await world.client.getPrompt({ name: 'designOrdersList', arguments: { where: '10' } });
    expect((d.messages[0]!.content as { text: string }).text).toMatch(/createListSchema \(bot_id=10\)/);
    await expect(world.client.getPrompt({ name: 'exportBotContacts', arguments: {} })).rejects.toThrow(/bot_id/);
    const reward = await world.client.getPrompt({ name: 'rewardSegment', arguments: { tag: 'vip', amount: '5.00' } });
    expect((reward.messages[0]!.content as { text: string }).text).toMatch(/previewBulk[\s\S]*tags: \["vip"\][\s\S]*runBulk/);
    await expect(world.client.getPrompt({ name: 'rewardSegment', arguments: { tag: 'vip', amount: 'five' } })).rejects.toThrow(/amount/);
  });
});

describe('tool filters', () => {
  test('--read-only leaves only the read tools', async () => {
    const world = await startMcp({ filter: { readOnly: true } });
    const { tools } = await world.client.listTools();
    expect(tools.length).toBeGreaterThan(3);
    expect(tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
    expect(tools.map((t) => t.name)).toContain('exportContacts');
    expect(tools.map((t) => t.name)).not.toContain('addFundsToContactAccount');
    const r = await world.call('addFundsToContactAccount', { account_id: 500, amount: 1, description: 'x' });
    expect(firstJson(r)).toMatchObject({ status: 404 });
  });

  test('--tools keeps the named tools; --exclude-tools drops them; an unknown name is refused', async () => {
    const world = await startMcp({ filter: { tools: ['getMe', 'getContacts'], excludeTools: ['getContacts'] } });
    expect((await world.client.listTools()).tools.map((t) => t.name)).toEqual(['getMe']);
    await expect(startMcp({ filter: { tools: ['getMee'] } })).rejects.toThrow(/unknown tool: getMee/);
  });
});
