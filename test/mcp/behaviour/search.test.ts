/**
 * findContacts, getWorkspace, the default bot, completions and prompt checks, over the real
 * Client, on both backends (the remote one searches a local copy synced from the API).
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { firstJson, mcpFixture, startMcp, TEST_BACKEND, type McpWorld } from '../harness.js';
import { removeStore, seedStore, TEST_STORE } from '../../helpers/store.js';

/** Every find reads the end of the remote list again: contacts written a moment ago are found. */
const SYNC = { catchUpMs: 0 };

/** Filler names: common first names (many Annas and Seans) and surnames, none starting like the targets'. */
const FIRST = ['Анна', 'Иван', 'Мария', 'Пётр', 'Anna', 'Sean', 'John', 'Maria', 'Zoé', 'Олег', 'Ольга', 'Seán'];
const LAST = ['Иванова', 'Петров', 'Смирнова', 'Smith', 'Murphy', 'Kelly', 'Novak', 'Соколов', 'Lee', 'Brown', 'Walsh', 'Волкова'];
const BOT = 10;
const FILLER = 20_000;

/** The people the queries look for, among FILLER others in bot 10. */
const TARGETS = [
  {
    id: 900001,
    bot_id: BOT,
    messenger: 'telegram',
    name: 'Анна Каренина',
    telegram_id: '88000001',
    telegram_username: 'annakarenina',
    phone: '+79165551234',
    email: 'Anna.Karenina@example.com',
    tags: ['vip'],
  },
  { id: 900002, bot_id: BOT, messenger: 'telegram', name: "Seán O'Brien", telegram_id: '88000002' },
  { id: 900003, bot_id: BOT, messenger: 'max', name: 'Фёдор Ёлкин', max_user_id: 77000003, max_username: 'fedor_yo' },
  { id: 900004, bot_id: BOT, messenger: 'vk', name: 'Ζωή Παπαδοπούλου', vk_user_id: 66000004 },
  { id: 900005, bot_id: BOT, messenger: 'viber', name: 'Kwame Mensah', viber_id: 'vB7+xY2==' },
];

function bigFixture(): Record<string, unknown> {
  const f = mcpFixture();
  const filler = Array.from({ length: FILLER }, (_, i) => ({
    id: 1000 + i,
    bot_id: BOT,
    messenger: 'telegram',
    name: `${FIRST[i % FIRST.length]} ${LAST[Math.floor(i / FIRST.length) % LAST.length]}`,
    telegram_id: String(10_000_000 + i),
    telegram_username: i % 2 ? `user${i}` : null,
    phone: i % 3 ? `4477009${String(i).padStart(5, '0')}` : null,
    email: i % 4 ? `person${i}@example.com` : null,
    created_at: '2026-01-05T00:00:00Z',
  }));
  return {
    ...f,
    contacts: [...(f.contacts as unknown[]), ...filler, ...TARGETS],
    accounts: [...(f.accounts as unknown[]), { id: 700, contact_id: 900001, currency: 'USD', amount: 4250 }],
  };
}

async function find(w: McpWorld, args: Record<string, unknown>): Promise<any> {
  const r = await w.call('findContacts', args);
  expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
  expect(firstJson(r)).toEqual(r.structuredContent);
  return r.structuredContent;
}

describe(`findContacts on a bot of ${FILLER} contacts (${TEST_BACKEND})`, () => {
  let world: McpWorld;
  beforeAll(async () => {
    world = await startMcp({ fixture: bigFixture(), sync: SYNC });
  }, 120_000);
  afterAll(async () => {
    await world.close();
  });

  const cases: Array<[string, string, number]> = [
    ['a prefix of a word ("кар" finds "Каренина")', 'кар', 900001],
    ['Cyrillic, lower case', 'каренина', 900001],
    ['Cyrillic, upper case, words in any order', 'КАРЕНИНА анна', 900001],
    ['accents folded ("sean o\'brien" finds "Seán O\'Brien")', "sean o'brien", 900002],
    ['an apostrophe left out', 'obrien', 900002],
    ['ё as е', 'федор елкин', 900003],
    ['Greek without its accents', 'ζωη παπαδοπουλου', 900004],
    ['a phone with its formatting', '+7 (916) 555-12-34', 900001],
    ['a phone with a national prefix', '8 916 555 12 34', 900001],
    ['a phone without its country code', '9165551234', 900001],
    ['the last 7 digits of a phone', '5551234', 900001],
    ['a phone as stored', '79165551234', 900001],
    ['an email, in any case', 'anna.karenina@EXAMPLE.com', 900001],
    ['a username with @', '@annakarenina', 900001],
    ['a username without @', 'annakarenina', 900001],
    ['a MAX username', '@fedor_yo', 900003],
    ['a telegram id', '88000001', 900001],
    ['a MAX id', '77000003', 900003],
    ['a VK id', '66000004', 900004],
    ['a Viber id', 'vB7+xY2==', 900005],
    ['a contact id', '900002', 900002],
  ];
  for (const [what, query, id] of cases) {
    test(`${what}: ${JSON.stringify(query)} finds contact ${id} in the top 3`, async () => {
      const body = await find(world, { query });
      const top = body.data.slice(0, 3).map((c: { id: number }) => c.id);
      expect(top, JSON.stringify(body.data.slice(0, 3))).toContain(id);
    });
  }

  test('exact identifiers rank first, then names', async () => {
    // "Анна" is a name of ~1/6 of the bot; the username annakarenina is exact.
    const body = await find(world, { query: 'annakarenina', limit: 5 });
    expect(body.data[0]).toMatchObject({ id: 900001, matched: 'username' });
  });

  test('a contact is compact and carries its accounts: "Anna\'s balance" is one call', async () => {
    const body = await find(world, { query: 'Анна Каренина' });
    expect(body.data[0]).toEqual({
      id: 900001,
      bot_id: BOT,
      name: 'Анна Каренина',
      messenger: 'telegram',
      usernames: ['@annakarenina'],
      phone: '79165551234',
      email: 'Anna.Karenina@example.com',
      tags: ['vip'],
      matched: 'name',
      accounts: [{ id: 700, currency: 'USD', amount: 4250, blocked: false }],
    });
    expect(body.meta).toMatchObject({ total: 1, limit: 10 });
    expect(body.meta.index).toMatchObject({ source: TEST_BACKEND === 'remote' ? 'remote' : 'database', syncing: false, complete: true });
    expect(body.meta.index.contacts).toBeGreaterThanOrEqual(FILLER);
    expect(Date.parse(body.meta.index.as_of)).not.toBeNaN();
  });

  test('many matches: limit, and a total counted up to 1000', async () => {
    const body = await find(world, { query: 'anna', limit: 50 }); // ~1 700 Annas
    expect(body.data).toHaveLength(50);
    expect(body.meta).toMatchObject({ total: 1000, total_capped: true, limit: 50 });
    const few = await find(world, { query: 'кар' });
    expect(few.meta.total).toBe(1);
    expect(few.meta).not.toHaveProperty('total_capped');
  });

  test('no match is an empty data, not an error', async () => {
    const body = await find(world, { query: 'Zzyzx Quorble' });
    expect(body.data).toEqual([]);
    expect(body.meta.total).toBe(0);
  });

  test('a query holding the NUL character: on a SQLite index the NUL parts words as any punctuation; PostgreSQL, which cannot hold one, answers a 422 on query', async () => {
    // The index is the database's (local backend) or the MCP server's own SQLite copy (remote backend).
    const onPostgres = TEST_BACKEND === 'local' && TEST_STORE === 'postgres';
    const NUL_422 = {
      status: 422,
      message: 'The query field must not contain the NUL character.',
      errors: { query: ['The query field must not contain the NUL character.'] },
    };
    // Each query with the answer of the query it reads as on SQLite, and whether that finds anyone.
    const cases: Array<[string, string, boolean]> = [
      ['Anna\u0000', 'Anna', true],
      // An email nobody has: then its words before the @ are searched, as for the one without the NUL.
      ['anna\u0000@example.com', 'anna@example.com', true],
      ['@ann\u0000a', '@ann a', false],
      ['+7 916\u0000', '+7 916', false],
    ];
    for (const [query, readAs, found] of cases) {
      const r = await world.call('findContacts', { query });
      if (onPostgres) {
        expect(r.isError, JSON.stringify(query)).toBe(true);
        expect(firstJson(r), JSON.stringify(query)).toEqual(NUL_422);
        continue;
      }
      expect(r.isError, JSON.stringify(query)).toBeFalsy();
      const got = firstJson(r);
      const want = await find(world, { query: readAs });
      expect({ data: got.data, total: got.meta.total }, JSON.stringify(query)).toEqual({ data: want.data, total: want.meta.total });
      expect(got.data.length > 0, JSON.stringify(query)).toBe(found);
      if (found)
        expect(
          got.data.every((c: { name: string }) => c.name.startsWith('Anna ')),
          JSON.stringify(query),
        ).toBe(true);
    }
  });

  test('bad arguments are a 422 in the API shape', async () => {
    for (const args of [
      {},
      { query: '' },
      { query: 'x'.repeat(201) },
      { query: 'a', limit: 51 },
      { query: 'a', limit: 0 },
      { query: 'a', colour: 1 },
    ]) {
      const r = await world.call('findContacts', args);
      expect(r.isError, JSON.stringify(args)).toBe(true);
      expect(firstJson(r).status, JSON.stringify(args)).toBe(422);
    }
  });
});

test(`a result stays under 20 000 characters, text and structuredContent alike (${TEST_BACKEND})`, async () => {
  const f = mcpFixture();
  const long = Array.from({ length: 60 }, (_, i) => ({
    id: 3000 + i,
    bot_id: 10,
    messenger: 'telegram',
    telegram_id: String(3000 + i),
    name: `Longname ${'x'.repeat(200)} ${i}`,
    tags: Array.from({ length: 30 }, (_, t) => `tag-${t}-${'y'.repeat(200)}`),
  }));
  const world = await startMcp({ fixture: { ...f, contacts: [...(f.contacts as unknown[]), ...long] }, sync: SYNC });
  try {
    const r = await world.call('findContacts', { query: 'longname', limit: 50 });
    const text = (r.content[0] as { text: string }).text;
    expect(text.length).toBeLessThan(20_000);
    expect(JSON.stringify(r.structuredContent).length).toBeLessThan(20_000);
    const body = firstJson(r);
    expect(body.data.length).toBeGreaterThan(0);
    expect(body.data.length).toBeLessThan(50);
    expect(body.data[0].tags).toHaveLength(20);
    expect(body.data[0].tags_more).toBe(10);
    expect(body.warnings.join(' ')).toMatch(/narrower query or a smaller limit/);
  } finally {
    await world.close();
  }
});

describe(`the index keeps up with writes (${TEST_BACKEND})`, () => {
  let world: McpWorld | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  const ids = (body: any) => body.data.map((c: { id: number }) => c.id);

  test('right after createOrUpdateContact: a new contact, a new name, the old name gone', async () => {
    world = await startMcp({ sync: SYNC });
    const made = await world.call('createOrUpdateContact', {
      bot_id: 10,
      messenger: 'telegram',
      telegram_id: 4242,
      name: 'Ludmila Zykova',
      phone: '+79035550000',
    });
    const id = (made.structuredContent as any).data.id;
    expect(ids(await find(world, { query: 'zykova' }))).toEqual([id]);
    expect(ids(await find(world, { query: '5550000' }))).toEqual([id]);
    await world.call('createOrUpdateContact', { bot_id: 10, messenger: 'telegram', telegram_id: 4242, name: 'Mila Orlova' });
    expect(ids(await find(world, { query: 'orlova' }))).toEqual([id]);
    expect(ids(await find(world, { query: 'zykova' }))).toEqual([]);
  });

  test('right after a contact is deleted (admin delete-contact)', async () => {
    world = await startMcp({ sync: SYNC });
    expect(ids(await find(world, { query: 'Ann' }))).toEqual([100]);
    world.store.admin.deleteContact(100);
    expect(ids(await find(world, { query: 'Ann' }))).toEqual([]);
  });

  test('right after a bot is deleted (admin delete-bot): none of its contacts', async () => {
    const f = mcpFixture();
    const second = { id: 11, project_uuid: '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10', name: 'Second' };
    const gone = { id: 110, bot_id: 11, messenger: 'vk', name: 'Ann Gone', vk_user_id: 4 };
    world = await startMcp({
      sync: SYNC,
      defaultBotId: 10,
      fixture: { ...f, bots: [...(f.bots as unknown[]), second], contacts: [...(f.contacts as unknown[]), gone] },
    });
    expect(ids(await find(world, { query: 'Ann', bot_id: 11 }))).toEqual([110]);
    world.store.projects.deleteBot(11);
    expect(ids(await find(world, { query: 'Ann', bot_id: 11 }))).toEqual([]);
    expect(ids(await find(world, { query: 'Ann', bot_id: 10 }))).toEqual([100]);
  });

  // The service's own database (a remote server's search reads its copy, synced from the API).
  test.runIf(TEST_BACKEND === 'local')('right after the owner is blocked: the next search is refused, as every call is', async () => {
    world = await startMcp({ sync: SYNC });
    const blocked = { status: 403, error: 'Your account is blocked.' };
    // Each refused search comes right after one that succeeded: on PostgreSQL that one's bots are
    // remembered and the next search's first statement runs while the owner is checked.
    const cases: Array<[string, Record<string, unknown>]> = [
      ['words', { query: 'Ann' }],
      ['an identifier', { query: '100' }],
      ["another owner's bot (no statement at all)", { query: 'Ann', bot_id: 20 }],
      ['a query PostgreSQL cannot hold', { query: 'Ann\u0000' }],
    ];
    for (const [what, args] of cases) {
      world.store.owners.setBlocked(1, false);
      expect(ids(await find(world, { query: 'Ann' })), what).toEqual([100]);
      world.store.owners.setBlocked(1, true);
      const refused = await world.call('findContacts', args);
      expect(refused.isError, what).toBe(true);
      expect(firstJson(refused), what).toEqual(blocked);
    }
  });

  // PostgreSQL: a remembered owner's search sends its statement before the checks answer.
  test.runIf(TEST_BACKEND === 'local' && TEST_STORE === 'postgres')(
    "a refused owner's bots are forgotten: their next search is checked before any search statement is sent",
    async () => {
      world = await startMcp({ sync: SYNC });
      const index = world.store.search;
      const sent: string[] = [];
      for (const m of ['lookups', 'lookupsAndWords'] as const) {
        const real = index[m]!.bind(index) as (...a: unknown[]) => never;
        (index as unknown as Record<string, unknown>)[m] = (...a: unknown[]) => (sent.push(m), real(...a));
      }
      for (const refusedQuery of ['Ann', 'Ann\u0000']) {
        world.store.owners.setBlocked(1, false);
        expect(ids(await find(world, { query: 'Ann' }))).toEqual([100]);
        world.store.owners.setBlocked(1, true);
        sent.length = 0;
        expect((await world.call('findContacts', { query: refusedQuery })).isError).toBe(true);
        expect((await world.call('findContacts', { query: 'Ann' })).isError).toBe(true);
        // The refused search's own call (the NUL query's fails before it sends anything), then none.
        expect(sent, refusedQuery).toEqual(['lookupsAndWords']);
      }
    },
  );

  test('right after a seed adds contacts', async () => {
    world = await startMcp({ sync: SYNC });
    const { loadFixture } = await import('../../../src/store/seed.js');
    loadFixture(world.store, { contacts: [{ id: 5000, bot_id: 10, messenger: 'vk', name: 'Новая Знакомая', vk_user_id: 123456 }] });
    expect(ids(await find(world, { query: 'знакомая' }))).toEqual([5000]);
    expect(ids(await find(world, { query: '123456' }))).toEqual([5000]);
  });

  test("only the key owner's bots: Bob's contact is never found by Alice", async () => {
    world = await startMcp({ sync: SYNC });
    expect(ids(await find(world, { query: 'Bob fan' }))).toEqual([]);
    expect(ids(await find(world, { query: '200' }))).toEqual([]);
    expect(ids(await find(world, { query: 'Bob fan', bot_id: 20 }))).toEqual([]);
  });
});

describe('two owners of one serve, two MCP servers in remote mode on one data folder', () => {
  // Alice (bot 10) has Ann 100; Bob (bot 20) gets an Ann of his own, with Ann's telegram id.
  const BOBS_ANN = {
    id: 201,
    bot_id: 20,
    messenger: 'telegram',
    name: 'Ann Bobson',
    telegram_id: '5001',
    created_at: '2026-01-02T00:00:00Z',
  };
  let dbFile: string | undefined;
  const worlds: McpWorld[] = [];
  afterEach(async () => {
    // The world that serves closes last.
    for (const w of worlds.splice(0).reverse()) await w.close();
    if (dbFile) removeStore(dbFile);
    dbFile = undefined;
  });

  const ids = (body: any) => body.data.map((c: { id: number }) => c.id).sort((a: number, b: number) => a - b);

  test("each finds only its owner's contacts: the search index is the owner's, not the folder's", async () => {
    const f = mcpFixture();
    dbFile = seedStore({ ...f, contacts: [...(f.contacts as unknown[]), BOBS_ANN] });
    // Bob's server syncs first, so Alice's would find his copy complete if the index were shared.
    const bob = await startMcp({ dbFile, backend: 'remote', apiKey: 'bob-key' });
    worlds.push(bob);
    const alice = await startMcp({ dbFile, backend: 'remote', apiKey: 'alice-key', serveUrl: bob.baseUrl });
    worlds.push(alice);
    expect(alice.baseUrl).toBe(bob.baseUrl);
    expect(alice.dir).toBe(bob.dir);
    for (let round = 0; round < 2; round++) {
      expect(ids(await find(bob, { query: 'Ann' })), `round ${round}`).toEqual([201]);
      expect(ids(await find(alice, { query: 'Ann' })), `round ${round}`).toEqual([100]);
      expect(ids(await find(bob, { query: '5001' })), `round ${round}`).toEqual([201]);
      expect(ids(await find(alice, { query: '5001' })), `round ${round}`).toEqual([100]);
      expect(ids(await find(alice, { query: 'Bob fan' })), `round ${round}`).toEqual([]);
      expect(ids(await find(bob, { query: 'Bob fan' })), `round ${round}`).toEqual([200]);
      expect(ids(await find(bob, { query: 'Ben' })), `round ${round}`).toEqual([]);
    }
    // getWorkspace's bots come from the index too: each its own.
    const bots = async (w: McpWorld) => (firstJson(await w.call('getWorkspace')).bots as Array<{ id: number }>).map((b) => b.id);
    expect(await bots(bob)).toEqual([20]);
    expect(await bots(alice)).toEqual([10]);
  });
});

describe(`getWorkspace and the default bot (${TEST_BACKEND})`, () => {
  let world: McpWorld | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  test('on a new database: ids that createListSchema accepts, and the only bot as the default', async () => {
    world = await startMcp({ fresh: true, defaultBotId: TEST_BACKEND === 'remote' ? 1 : undefined });
    const r = await world.call('getWorkspace');
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    const ws = r.structuredContent as any;
    expect(ws.owner).toMatchObject({ id: 1, plan: 'pro' });
    expect(ws.default_bot_id).toBe(1);
    expect(ws.bots.map((b: { id: number }) => b.id)).toEqual([1]);
    const byBot = await world.call('createListSchema', {
      name: 'Orders',
      bot_id: ws.default_bot_id,
      fields: [{ name: 'N', slug: 'n', type: 'string' }],
    });
    expect(byBot.isError, JSON.stringify(byBot.content)).toBeFalsy();
    const project = ws.projects[0]?.uuid ?? (byBot.structuredContent as any).data.project;
    if (TEST_BACKEND === 'local') expect(ws.projects).toEqual([{ uuid: project, name: 'Default project', role: 'owner' }]);
    const byProject = await world.call('createListSchema', {
      name: 'Stock',
      project_uuid: project,
      fields: [{ name: 'N', slug: 'n', type: 'string' }],
    });
    expect(byProject.isError, JSON.stringify(byProject.content)).toBeFalsy();
    // Neither given: the default bot fills bot_id (its list lands in the bot's project).
    const byDefault = await world.call('createListSchema', { name: 'Gifts', fields: [{ name: 'N', slug: 'n', type: 'string' }] });
    expect(byDefault.isError, JSON.stringify(byDefault.content)).toBeFalsy();
    expect((byDefault.structuredContent as any).data.bot_id).toBe(1);
    // The resource says the same.
    const read = await world.client.readResource({ uri: 'workspace://workspace' });
    expect(JSON.parse((read.contents[0] as { text: string }).text).owner.id).toBe(1);
  });

  test("on a shared world: no other owner's bots", async () => {
    world = await startMcp({ sync: SYNC });
    await world.call('findContacts', { query: 'Ann' }); // the remote directory learns bots from answers and the index
    const ws = (await world.call('getWorkspace')).structuredContent as any;
    const bots = ws.bots.map((b: { id: number }) => b.id);
    expect(bots).toContain(10);
    expect(bots).not.toContain(20);
    expect(ws.projects.filter((p: { role: string }) => p.role === 'owner').map((p: { uuid: string }) => p.uuid)).not.toContain(
      '5a2b3c4d-1111-4c1e-9a55-0b6f3d2e1a11',
    );
    if (TEST_BACKEND === 'local') {
      // Alice was invited to Bob's project: shown as a member's, its bot not listed.
      expect(ws.projects).toEqual([
        { uuid: '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10', name: 'Shop', role: 'owner' },
        { uuid: '5a2b3c4d-1111-4c1e-9a55-0b6f3d2e1a11', name: 'Bob shop', role: 'member' },
      ]);
      expect(ws.bots).toEqual([
        { id: 10, name: 'Shop bot', messenger: 'telegram', project_uuid: '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10', contacts: 3 },
      ]);
    }
  });

  test('--bot fills a required bot_id the caller left out, and the descriptions say so', async () => {
    world = await startMcp({ defaultBotId: 10 });
    const r = await world.call('createOrUpdateContact', { messenger: 'vk', vk_id: 31337, name: 'Default Bot Person' });
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    expect((r.structuredContent as any).data.bot_id).toBe(10);
    const tags = await world.call('getBotTags');
    expect(tags.isError, JSON.stringify(tags.content)).toBeFalsy();
    const { tools } = await world.client.listTools();
    const upsert = tools.find((t) => t.name === 'createOrUpdateContact')!;
    expect((upsert.inputSchema.properties as any).bot_id.description).toBe('Default: the default bot');
    expect(world.client.getInstructions()).toMatch(/where a tool needs a bot_id, a left-out one means the default bot/);
    expect(upsert.inputSchema.required ?? []).not.toContain('bot_id');
    expect((await world.call('getWorkspace')).structuredContent).toMatchObject({ default_bot_id: 10 });
  });

  test("without a default bot a left-out bot_id is the API's own 422", async () => {
    // Two bots: no "only bot" to fall back on.
    const f = mcpFixture();
    world = await startMcp({
      fixture: { ...f, bots: [...(f.bots as unknown[]), { id: 11, project_uuid: '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10', name: 'Second' }] },
    });
    const r = await world.call('createOrUpdateContact', { messenger: 'vk', vk_id: 31337, name: 'X' });
    expect(firstJson(r)).toMatchObject({ status: 422, errors: { bot_id: [expect.any(String)] } });
  });
});

describe(`instructions, completions and prompts (${TEST_BACKEND})`, () => {
  let world: McpWorld | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  test('getMe past its sunset switches neither findContacts nor getWorkspace off (they are no API method)', async () => {
    world = await startMcp({ sync: SYNC });
    world.store.settings.setDeprecation('getMe', '2020-01-01T00:00:00+00:00');
    expect(firstJson(await world.call('getMe'))).toMatchObject({ status: 410, code: 'method_removed' });
    const found = await world.call('findContacts', { query: 'Ann' });
    expect(found.isError, JSON.stringify(found.content)).toBeFalsy();
    expect((found.structuredContent as { data: Array<{ id: number }> }).data[0]?.id).toBe(100);
    const ws = await world.call('getWorkspace', {});
    expect(ws.isError, JSON.stringify(ws.content)).toBeFalsy();
    expect((ws.structuredContent as { owner: { id: number } }).owner.id).toBe(1);
  });

  test('the instructions say where to start', async () => {
    world = await startMcp();
    const text = world.client.getInstructions() ?? '';
    expect(text).toMatch(/getWorkspace/);
    expect(text).toMatch(/findContacts/);
    expect(text).toMatch(/idempotency_key/);
    expect(text.split('\n').length).toBeLessThanOrEqual(8);
  });

  test('bot_id, contact_id and currency complete with real values', async () => {
    world = await startMcp({ sync: SYNC });
    await world.call('findContacts', { query: 'Ann' });
    const complete = async (prompt: string, name: string, value: string) =>
      (await world!.client.complete({ ref: { type: 'ref/prompt', name: prompt }, argument: { name, value } })).completion.values;
    expect(await complete('exportBotContacts', 'bot_id', '1')).toEqual(['10']);
    if (TEST_BACKEND === 'local') expect(await complete('exportBotContacts', 'bot_id', 'shop')).toEqual(['10']);
    expect(await complete('setupLoyaltyBalance', 'contact_id', 'ann')).toEqual(['100']);
    expect(await complete('setupLoyaltyBalance', 'contact_id', 'Cid')).toEqual(['102']);
    await world.call('getContactAccounts', { contact_id: 100 }); // the remote side learns currencies from answers
    const currencies = await complete('setupLoyaltyBalance', 'currency', 'u');
    expect(currencies[0]).toBe('USD');
    expect(currencies).toContain('UAH');
    expect(await complete('designOrdersList', 'currency', 'eu')).toContain('EUR');
    // An argument the prompt does not have offers nothing.
    expect(await complete('exportBotContacts', 'contact_id', 'ann')).toEqual([]);
  });

  test.runIf(TEST_BACKEND === 'local')('a blocked owner is offered none of their bots, contacts or currencies', async () => {
    world = await startMcp();
    const complete = async (prompt: string, name: string, value: string) =>
      (await world!.client.complete({ ref: { type: 'ref/prompt', name: prompt }, argument: { name, value } })).completion.values;
    expect(await complete('exportBotContacts', 'bot_id', '1')).toEqual(['10']);
    expect((await complete('setupLoyaltyBalance', 'currency', 'u'))[0]).toBe('USD');
    world.store.owners.setBlocked(1, true);
    expect(await complete('exportBotContacts', 'bot_id', '1')).toEqual([]);
    expect(await complete('setupLoyaltyBalance', 'contact_id', 'ann')).toEqual([]);
    // ISO 4217's codes alone, in their order: no currency of theirs first.
    expect((await complete('setupLoyaltyBalance', 'currency', 'u'))[0]).toBe('UAH');
  });

  test.runIf(TEST_BACKEND === 'local')(
    "bot_id and currency completions, asked as a person types, spend none of the owner's rate limit",
    async () => {
      world = await startMcp({ rateLimit: 2 });
      const complete = async (prompt: string, name: string, value: string) =>
        (await world!.client.complete({ ref: { type: 'ref/prompt', name: prompt }, argument: { name, value } })).completion.values;
      for (const typed of ['1', '10']) expect(await complete('exportBotContacts', 'bot_id', typed)).toEqual(['10']);
      for (const typed of ['u', 'us', 'usd']) expect((await complete('setupLoyaltyBalance', 'currency', typed))[0]).toBe('USD');
      // Two requests a minute: both still there for the tool calls.
      expect((await world.call('getMe')).isError).toBeFalsy();
      expect((await world.call('getMe')).isError).toBeFalsy();
      expect(firstJson(await world.call('getMe')).status).toBe(429);
    },
  );

  test('prompt arguments are checked like tool arguments', async () => {
    world = await startMcp();
    await expect(world.client.getPrompt({ name: 'setupLoyaltyBalance', arguments: { contact_id: 'Anna' } })).rejects.toThrow(
      /findContacts/,
    );
    await expect(world.client.getPrompt({ name: 'exportBotContacts', arguments: { bot_id: 'Shop bot' } })).rejects.toThrow(/getWorkspace/);
    await expect(
      world.client.getPrompt({ name: 'setupLoyaltyBalance', arguments: { contact_id: '100', currency: 'dollars' } }),
    ).rejects.toThrow(/ISO 4217/);
    await expect(world.client.getPrompt({ name: 'exportBotContacts', arguments: { bot_id: '10', colour: 'red' } })).rejects.toThrow(
      /not an argument/,
    );
    const ok = await world.client.getPrompt({
      name: 'setupLoyaltyBalance',
      arguments: { contact_id: '100', currency: 'usd', amount: '5.00' },
    });
    expect((ok.messages[0]!.content as { text: string }).text).toMatch(/contact 100/);
  });
});
