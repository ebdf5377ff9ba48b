/**
 * The result budget over the real clients, on both backends and in both protocol eras: a whole
 * result (text and structuredContent) stays within --max-result-chars (100 000 by default; the
 * clients check every call), `data` is cut alike in both, and `truncated: {kept, of, next}`
 * gives the exact arguments that continue. Export files are read in parts within the same
 * budget. The 20 000-contact bot is seeded once for the file.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { rawWithinBudget, withinBudget } from '../../helpers/budget.js';
import { seedStore } from '../../helpers/store.js';
import { firstJson, manyContacts, useMcp, type McpWorld } from '../harness.js';

const startMcp = useMcp();

/** The base world and `n` contacts in bot 10 of about 330 characters each. */
function bigBot(n: number): Record<string, unknown> {
  return manyContacts(n, (i) => ({
    name: `Contact ${i}`,
    telegram_username: `user_${i}`,
    phone: `7900${String(i).padStart(7, '0')}`,
    email: `contact${i}@example.com`,
    tags: ['customer', i % 2 ? 'odd' : 'even'],
    variables: [{ name: 'utm_source', value: 'newsletter', type: 0 }],
  }));
}

/** The 20 000-contact bot, seeded once for the file (the tests only read it; exports go beside it). */
const N = 20_000;
let big: string;
beforeAll(() => {
  big = seedStore(bigBot(N));
});

type Body = {
  data: Array<{ id: number }>;
  meta: Record<string, number>;
  truncated?: { kept: number; of: number; next: Record<string, unknown> | null };
  warnings?: string[];
};

/** The result's two renderings: structuredContent, and the text parsed (always the same object as compact JSON). */
function both(r: CallToolResult): { sc: Body; text: Body } {
  expect(r.isError, JSON.stringify(r.content).slice(0, 300)).toBeFalsy();
  expect((r.content[0] as { text: string }).text).toBe(JSON.stringify(r.structuredContent));
  return { sc: r.structuredContent as unknown as Body, text: firstJson(r) };
}

/** Follow getContacts from `args` to the end: truncated.next when cut, else the next page; every id seen, in order. */
async function readAll(world: McpWorld, args: Record<string, unknown>): Promise<{ ids: number[]; calls: number; cut: number }> {
  const ids: number[] = [];
  let calls = 0;
  let cut = 0;
  let next: Record<string, unknown> | null = args;
  while (next) {
    const r = await world.call('getContacts', next);
    calls++;
    const { sc } = both(r);
    ids.push(...sc.data.map((c) => c.id));
    const meta = sc.meta;
    if (sc.truncated) {
      cut++;
      expect(sc.truncated.kept).toBe(sc.data.length);
      expect(sc.truncated.of).toBeGreaterThan(sc.data.length);
      expect(sc.warnings?.join(' ')).toMatch(/result budget of 100000.*exportContacts/);
      next = sc.truncated.next;
      if (process.env.DEBUG_PAGES) console.log(JSON.stringify(next));
      expect(next).not.toBeNull();
    } else if (typeof meta.offset === 'number') {
      next = sc.data.length < meta.limit! ? null : { ...next, offset: meta.offset + meta.limit! };
    } else {
      next = meta.current_page! < meta.last_page! ? { ...next, page: meta.current_page! + 1 } : null;
    }
    if (calls > 1000) throw new Error('no end');
  }
  return { ids, calls, cut };
}

describe('result budget: getContacts on a 20 000-contact bot', () => {
  // Ann, Ben and Cid are in bot 10 too.
  const all = [100, 101, 102, ...Array.from({ length: N }, (_, i) => 1000 + i)];

  // About 80 calls of 1000 contacts each: over HTTP on a loaded machine that is more than the default 30 s.
  test(
    'offset paging, limit 1000: each answer ≤ 100 000 chars; truncated.next, followed to the end, yields every contact once',
    { timeout: 120_000 },
    async () => {
      const world = await startMcp({ dbFile: big });
      const first = both(await world.call('getContacts', { bot_id: 10, offset: 0, limit: 1000 }));
      expect(first.sc.truncated).toEqual({
        kept: first.sc.data.length,
        of: 1000,
        next: { bot_id: 10, offset: first.sc.data.length, limit: 1000 },
      });
      expect(first.sc.data.length).toBeGreaterThan(50);
      expect(first.sc.meta).toEqual({ offset: 0, limit: 1000, total: N + 3 });
      // Both renderings carry the same cut body, `truncated` and `warnings` included.
      expect(first.text).toEqual(first.sc);
      const { ids, cut } = await readAll(world, { bot_id: 10, offset: 0, limit: 1000 });
      expect(cut).toBeGreaterThan(50);
      expect(ids).toEqual(all);
    },
  );

  test(
    'page paging, count 500: a cut page continues by offset from the first contact not shown; every contact once',
    { timeout: 120_000 },
    async () => {
      const world = await startMcp({ dbFile: big });
      const first = both(await world.call('getContacts', { bot_id: 10, page: 1, count: 500 }));
      const kept = first.sc.data.length;
      expect(first.sc.truncated).toEqual({ kept, of: 500, next: { bot_id: 10, offset: kept, limit: 500 } });
      // The API's keys stay, in both renderings, and the server's own come after them.
      expect(Object.keys(first.sc)).toEqual(['data', 'links', 'meta', 'warnings', 'truncated']);
      expect(first.sc.meta).toMatchObject({ current_page: 1, per_page: 500, total: N + 3 });
      expect(first.text).toEqual(first.sc);
      const { ids } = await readAll(world, { bot_id: 10, page: 1, count: 500 });
      expect(ids).toEqual(all);
    },
  );
});

describe('result budget: text and cuts', () => {
  test('the check every test client runs fails a result over the budget (tool result, resource read, raw answer)', async () => {
    const long = { content: [{ type: 'text', text: 'x'.repeat(200) }] };
    const client = withinBudget(
      {
        callTool: async (_p: { name: string }) => long,
        readResource: async (_p: { uri: string }) => ({ contents: [{ uri: 'u', text: 'x'.repeat(200) }] }),
      },
      100,
    );
    await expect(client.callTool({ name: 'getMe' })).rejects.toThrow(/getMe result within the budget of 100/);
    await expect(client.readResource({ uri: 'u' })).rejects.toThrow(/read of u within the budget of 100/);
    expect(() => rawWithinBudget(long, 100)).toThrow(/within the budget of 100/);
    expect(() => rawWithinBudget(long, 1_000)).not.toThrow();
  });

  test('an empty page: text and structuredContent are the same body, every key of the API kept ("never renames or drops the API\'s")', async () => {
    const world = await startMcp();
    const { sc, text } = both(await world.call('getContacts', { bot_id: 10, page: 9 }));
    expect(sc.data).toEqual([]);
    expect(Object.keys(sc)).toEqual(['data', 'links', 'meta']);
    expect(sc.meta).toHaveProperty('links');
    expect(sc.meta).toHaveProperty('path');
    expect(text).toEqual(sc);
  });

  test('--max-result-chars sets the budget: a smaller one cuts sooner and the page continues from there', async () => {
    const world = await startMcp({ fixture: bigBot(60), maxResultChars: 5_000 });
    const r = await world.call('getContacts', { bot_id: 10, count: 50, page: 1 });
    expect(JSON.stringify(r).length).toBeLessThanOrEqual(5_000);
    const { sc } = both(r);
    expect(sc.truncated?.of).toBe(50);
    expect(sc.warnings?.join(' ')).toMatch(/result budget of 5000/);
    const ids: number[] = [];
    let next: Record<string, unknown> | null = { bot_id: 10, count: 50, page: 1 };
    while (next) {
      const { sc: page } = both(await world.call('getContacts', next));
      ids.push(...page.data.map((c) => c.id));
      next =
        page.truncated?.next ?? (page.meta.current_page! < page.meta.last_page! ? { ...next, page: page.meta.current_page! + 1 } : null);
    }
    expect(ids).toEqual([100, 101, 102, ...Array.from({ length: 60 }, (_, i) => 1000 + i)]);
  });

  test('getListItems: a cut page continues as a smaller page that lines up; followed to the end, every record once', async () => {
    const world = await startMcp({ maxResultChars: 10_000 });
    const list = await world.call('createListSchema', {
      name: 'Notes',
      bot_id: 10,
      fields: [{ name: 'Text', slug: 'text', type: 'string' }],
    });
    const id = (list.structuredContent as { data: { id: string } }).data.id;
    const made: string[] = [];
    for (let i = 0; i < 120; i++) {
      const r = await world.call('addListItem', { schema_id: id, data: { text: `${i} `.padEnd(40 + (i % 7) * 30, 'x') } });
      made.push((r.structuredContent as { data: { id: string } }).data.id);
    }
    const seen: string[] = [];
    let next: Record<string, unknown> | null = { schema_id: id, limit: 100 };
    let calls = 0;
    let cuts = 0;
    while (next && calls++ < 200) {
      const { sc } = both(await world.call('getListItems', next));
      seen.push(...sc.data.map((r) => String(r.id)));
      if (sc.truncated) {
        cuts++;
        const n = sc.truncated.next!;
        // The kept records are page n.page - 1 at size n.limit: it starts where this page started.
        expect(((n.page as number) - 2) * (n.limit as number)).toBe(((sc.meta.current_page ?? 1) - 1) * sc.meta.per_page!);
        expect(n.limit).toBe(sc.data.length);
      }
      next = sc.truncated?.next ?? (sc.meta.current_page! < sc.meta.last_page! ? { ...next, page: sc.meta.current_page! + 1 } : null);
    }
    expect(cuts).toBeGreaterThan(0);
    expect(seen).toEqual(made);
  });

  test('a list with no paging (getBotTags) is cut too, and nothing continues it', async () => {
    const f = bigBot(300);
    (f.contacts as Array<Record<string, unknown>>).forEach((c, i) => (c.tags = [`tag-${i}-${'x'.repeat(40)}`]));
    const world = await startMcp({ fixture: f, maxResultChars: 5_000 });
    const { sc, text } = both(await world.call('getBotTags', { bot_id: 10 }));
    expect(sc.truncated).toMatchObject({ of: 303, next: null });
    expect(text).toEqual(sc);
    expect(sc.warnings?.join(' ')).not.toMatch(/exportContacts/);
  });

  test('one record over the budget alone: its long values are cut ("…"), and the page goes on after it', async () => {
    const world = await startMcp({ maxResultChars: 5_000 });
    const list = await world.call('createListSchema', {
      name: 'Notes',
      bot_id: 10,
      fields: [{ name: 'Text', slug: 'text', type: 'string' }],
    });
    const id = (list.structuredContent as { data: { id: string } }).data.id;
    await world.call('addListItem', { schema_id: id, data: { text: 'a'.repeat(20_000) } });
    await world.call('addListItem', { schema_id: id, data: { text: 'short' } });
    const { sc } = both(await world.call('getListItems', { schema_id: id, limit: 10 }));
    expect(sc.data).toHaveLength(1);
    const text = (sc.data[0] as unknown as { text: string }).text;
    expect(text.endsWith('…')).toBe(true);
    expect(sc.truncated).toMatchObject({ kept: 1, of: 2, next: { schema_id: id, page: 2, limit: 1 }, cut_strings_at: text.length - 1 });
    const rest = both(await world.call('getListItems', sc.truncated!.next!));
    expect((rest.sc.data[0] as unknown as { text: string }).text).toBe('short');
  });

  test('an error with many fields is cut to the budget too, and says how many it kept', async () => {
    const world = await startMcp({ maxResultChars: 3_000 });
    const tags = Array.from({ length: 100 }, () => 't'.repeat(300));
    const r = await world.call('createOrUpdateContact', { bot_id: 10, messenger: 'telegram', telegram_id: 1, name: 'X', tags });
    expect(r.isError).toBe(true);
    expect(JSON.stringify(r).length).toBeLessThanOrEqual(3_000);
    const error = firstJson(r);
    expect(error).toMatchObject({ status: 422, truncated: { of: 100, next: null } });
    expect(Object.keys(error.errors)).toHaveLength(error.truncated.kept);
  });
});

describe('exports are read in parts within the budget', () => {
  /** Every part of an export from its URI: the lines, and the parts' notes. */
  async function readParts(
    world: McpWorld,
    uri: string,
  ): Promise<{ lines: string[]; notes: string[]; metas: Array<Record<string, unknown>> }> {
    const lines: string[] = [];
    const notes: string[] = [];
    const metas: Array<Record<string, unknown>> = [];
    let next: string | null = uri;
    while (next) {
      const read = await world.client.readResource({ uri: next });
      const [data, note] = read.contents as Array<{ text: string; _meta?: Record<string, unknown> }>;
      lines.push(...data!.text.split('\n').slice(0, -1));
      notes.push(note!.text);
      metas.push(data!._meta!);
      next = data!._meta!.next as string | null;
      if (notes.length > 1000) throw new Error('no end');
    }
    return { lines, notes, metas };
  }

  test('an export of 20 000 contacts, part by part: every line exactly once; the first part says how many parts and lines', async () => {
    const world = await startMcp({ dbFile: big });
    const r = await world.call('exportContacts', { bot_id: 10 });
    const body = r.structuredContent as { count: number; uri: string; parts: number; read: string };
    expect(body.count).toBe(20_003);
    expect(body.parts).toBeGreaterThan(50);
    // Hosts that drop resource links still read how to get the file: in the text and in structuredContent.
    expect(body.read).toContain(body.uri);
    expect(firstJson(r)).toEqual(body);
    const { lines, notes, metas } = await readParts(world, body.uri);
    expect(notes[0]).toMatch(
      new RegExp(`^Part 1 of ${body.parts} of contacts-.*: lines 1-\\d+ of 20003\\. Next part: workspace://exports/`),
    );
    expect(notes.at(-1)).toMatch(/This is the last part\.$/);
    expect(metas).toHaveLength(body.parts);
    expect(metas[0]).toMatchObject({ offset: 0, total: 20_003, parts: body.parts, part: 1 });
    const ids = lines.map((l) => (JSON.parse(l) as { id: number }).id);
    expect(ids).toHaveLength(20_003);
    expect(new Set(ids).size).toBe(20_003);
  });

  test('CSV with a line break inside a quoted name: the row stays whole in its part; offset and limit read a window', async () => {
    const f = bigBot(200);
    (f.contacts as Array<Record<string, unknown>>)[5]!.name = 'Two\nlines, "quoted"';
    const world = await startMcp({ fixture: f, maxResultChars: 3_000 });
    const body = (await world.call('exportContacts', { bot_id: 10, format: 'csv' })).structuredContent as { uri: string; parts: number };
    const { lines, metas } = await readParts(world, body.uri);
    expect(metas.length).toBe(body.parts);
    expect(metas.reduce((n, m) => n + (m.lines as number), 0)).toBe(204);
    expect(lines.join('\n')).toContain('"Two\nlines, ""quoted"""');
    const window = await world.client.readResource({ uri: `${body.uri}?offset=10&limit=3` });
    const [data, note] = window.contents as Array<{ text: string; _meta: Record<string, unknown> }>;
    expect(data!.text.split('\r\n').filter(Boolean)).toHaveLength(3);
    expect(data!._meta).toMatchObject({ offset: 10, lines: 3, total: 204, next: `${body.uri}?offset=13&limit=3` });
    expect(note!.text).toMatch(/lines 11-13 of 204/);
    await expect(world.client.readResource({ uri: `${body.uri}?offset=-1` })).rejects.toThrow(/offset must be a whole number/);
  });
});

describe('the audit trail is read within the budget', () => {
  test('a page over the budget keeps the entries that fit; next continues below them; every entry once; one huge entry is cut', async () => {
    const world = await startMcp({ maxResultChars: 5_000 });
    const list = await world.call('createListSchema', {
      name: 'Notes',
      bot_id: 10,
      fields: [{ name: 'Text', slug: 'text', type: 'string' }],
    });
    const id = (list.structuredContent as { data: { id: string } }).data.id;
    for (let i = 0; i < 12; i++) await world.call('addListItem', { schema_id: id, data: { text: `${i} `.padEnd(900, 'x') } });
    await world.call('addListItem', { schema_id: id, data: { text: 'y'.repeat(20_000) } });
    const seen: number[] = [];
    let cuts = 0;
    for (let uri: string | null = 'workspace://audit'; uri;) {
      const read = await world.client.readResource({ uri });
      const page = JSON.parse((read.contents[0] as { text: string }).text) as {
        data: Array<{ seq: number }>;
        next: string | null;
        truncated?: { kept: number; next: string };
      };
      if (page.truncated) {
        cuts++;
        expect(page.truncated).toMatchObject({ kept: page.data.length, next: page.next });
      }
      seen.push(...page.data.map((e) => e.seq));
      uri = page.next;
    }
    expect(cuts).toBeGreaterThan(1);
    // createListSchema and the 13 addListItem calls, newest first, each once.
    expect(seen).toEqual(Array.from({ length: 14 }, (_, i) => seen[0]! - i));
    const newest = await world.client.readResource({ uri: 'workspace://audit?limit=1' });
    expect((newest.contents[0] as { text: string }).text).toMatch(/y+…/);
  });
});
