/**
 * The list record methods (getListItems, addListItem, updateListItem, deleteListItem; docs/api.md)
 * and the spec's record transitions, sentence by sentence, over real HTTP;
 * encryption at rest checked in the SQLite file itself.
 */
import { readFileSync, existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { dumpStore, TEST_STORE } from '../helpers/store.js';
import { ANN, baseFixture, useWorld, type Fixture } from '../helpers/world.js';

const ALICE_PROJECT = '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10';
const BOB_PROJECT = '5a2b3c4d-1111-4c1e-9a55-0b6f3d2e1a11';

let clock = new Date('2026-03-01T10:00:00Z');

function fixture(): Fixture {
  const base = baseFixture();
  return {
    ...base,
    bots: [...(base.bots as object[]), { id: 11, project_uuid: ALICE_PROJECT, name: 'Second bot' }],
    contacts: [
      { ...ANN },
      { id: 101, bot_id: 10, messenger: 'telegram', name: 'Gone', telegram_id: '5002', deleted: true },
      { id: 102, bot_id: 11, messenger: 'telegram', name: 'Ben', telegram_id: '5003' },
      { id: 200, bot_id: 20, messenger: 'telegram', name: 'Bob customer', telegram_id: '7001' },
    ],
  };
}
const w = useWorld(fixture, { now: () => clock });

const F = (slug: string, type = 'string', extra: Record<string, unknown> = {}) => ({ name: `Field ${slug}`, slug, type, ...extra });

async function list(fields: object[], key = 'alice-key', project = ALICE_PROJECT): Promise<string> {
  const res = await w.call('createListSchema', { name: 'Records', project_uuid: project, fields }, { key });
  expect(res.status).toBe(201);
  return res.body.data.id as string;
}

async function add(schemaId: string, data: Record<string, unknown>, key = 'alice-key') {
  return w.call('addListItem', { schema_id: schemaId, data }, { key });
}

async function addId(schemaId: string, data: Record<string, unknown>): Promise<string> {
  const res = await add(schemaId, data);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.id as string;
}

function tick(seconds = 1) {
  clock = new Date(clock.getTime() + seconds * 1000);
}

describe('record shape', () => {
  it('"Record ids are strings. A record is {id, schema_id, created_at, updated_at, <slug>: value, ...}: one key per field slug of its list, in field order, null where unset"', async () => {
    const slugs = ['b', '10', 'a', '2'];
    const id = await list(slugs.map((s) => F(s, 'string', { is_required: false })));
    const res = await add(id, { a: 'A', '10': 'ten' });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['data']);
    const rec = res.body.data;
    expect(typeof rec.id).toBe('string');
    expect(rec).toEqual({
      id: rec.id,
      schema_id: id,
      created_at: '2026-03-01T10:00:00+00:00',
      updated_at: '2026-03-01T10:00:00+00:00',
      b: null,
      '10': 'ten',
      a: 'A',
      '2': null,
    });
    const keys = ['id', 'schema_id', 'created_at', 'updated_at', ...slugs];
    const pos = keys.map((k) => res.text.indexOf(`"${k}":`));
    expect(pos.every((p) => p >= 0)).toBe(true);
    expect([...pos].sort((x, y) => x - y)).toEqual(pos);
    const page = await w.call('getListItems', { schema_id: id });
    const pagePos = keys.map((k) => page.text.indexOf(`"${k}":`));
    expect([...pagePos].sort((x, y) => x - y)).toEqual(pagePos);
  });
});

describe('values by field type', () => {
  let id: string;
  beforeAll(async () => {
    id = await list([
      F('s', 'string', { is_required: false }),
      F('n', 'number', { is_required: false }),
      F('b', 'bool', { is_required: false }),
      F('d', 'date', { is_required: false }),
      F('dt', 'datetime', { is_required: false }),
      F('m', 'money', { is_required: false, currency: 'JPY' }),
      F('f', 'file', { is_required: false }),
      F('i', 'image', { is_required: false }),
      F('c', 'contact', { is_required: false }),
      F('bot', 'bot', { is_required: false }),
    ]);
  });

  const cases: Array<[string, string, unknown[], unknown[], unknown?]> = [
    // [slug, sentence, good values, bad values, stored form of the first good value]
    ['s', 'string (text up to 65 535)', ['hello', 'x'.repeat(65535), '😀'.repeat(65535)], [5, true, 'x'.repeat(65536), ['a']]],
    ['n', 'number (integer or decimal)', [42, 1.5, -3, '2.25'], ['abc', true, '1,5', {}], 42],
    ['b', 'bool', [true, false, 1, 0, '1', '0'], ['true', 'yes', 2]],
    ['d', 'date (YYYY-MM-DD)', ['2026-02-28'], ['2026-02-30', '28.02.2026', '2026-2-1', 20260228]],
    [
      'dt',
      'datetime (ISO 8601)',
      ['2026-03-01T12:30:00+03:00', '2026-03-01T09:30:00Z'],
      ['yesterday', '2026-13-01T00:00:00Z', 5],
      '2026-03-01T09:30:00+00:00',
    ],
    ['m', "money (integer minor units of the field's currency)", [1500, '250', 0], [1.5, '1.50', 'ten', true], 1500],
    [
      'f',
      'file (an http(s) URL)',
      ['https://example.com/a.pdf', 'http://example.com/b'],
      ['ftp://example.com/a', 'not a url', 'javascript:alert(1)'],
    ],
    ['i', 'image (an http(s) URL)', ['https://example.com/a.png'], ['example.com/a.png', 7]],
    ['c', "contact (an id of the holder's contact)", [100, '102'], [200, 101, 999, 'abc'], 100],
    ['bot', "bot (an id of the holder's bot)", [10, 11], [20, 999, 'ten'], 10],
  ];

  for (const [slug, sentence, good, bad, stored] of cases) {
    it(`"${sentence}"; "A wrong value: 422 on data.<slug>"`, async () => {
      for (const v of good) {
        const res = await add(id, { [slug]: v });
        expect(res.status, `${slug}=${JSON.stringify(v)}: ${res.text.slice(0, 200)}`).toBe(201);
      }
      const first = await add(id, { [slug]: good[0] });
      expect(first.body.data[slug]).toEqual(stored ?? good[0]);
      for (const v of bad) {
        const res = await add(id, { [slug]: v });
        expect(res.status, `${slug}=${JSON.stringify(v)}`).toBe(422);
        expect(Object.keys(res.body.errors)).toEqual([`data.${slug}`]);
      }
    });
  }

  it('bool values come back as true/false; datetime in UTC', async () => {
    const res = await add(id, { b: '0', dt: '2026-03-01 12:00:00' });
    expect(res.body.data.b).toBe(false);
    expect(res.body.data.dt).toBe('2026-03-01T12:00:00+00:00');
  });
});

describe('addListItem', () => {
  it('POST only: "addListItem POST — schema_id, data (object by slug)" → 201 {data: record}', async () => {
    const id = await list([F('title')]);
    const get = await w.call('addListItem', { schema_id: id, data: { title: 'x' } }, { verb: 'GET' });
    expect(get.status).toBe(405);
    const res = await add(id, { title: 'x' });
    expect(res.status).toBe(201);
    expect(res.body.data.title).toBe('x');
  });

  it('"data[slug]=v in forms"', async () => {
    const id = await list([F('title'), F('price', 'money', { is_required: false })]);
    const res = await w.call('addListItem', { schema_id: id, data: { title: 'Form', price: '199' } }, { form: true });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ title: 'Form', price: 199 });
  });

  it('"A required field missing on add: 422 on data.<slug>"; "An unknown slug: 422 on data.<slug>"', async () => {
    const id = await list([F('title'), F('note', 'string', { is_required: false })]);
    const res = await add(id, { note: 'n', color: 'red' });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      'data.title': ['The data.title field is required.'],
      'data.color': [expect.stringContaining('data.color')],
    });
    expect((await add(id, { title: null })).body.errors).toEqual({ 'data.title': ['The data.title field is required.'] });
    expect((await add(id, { title: 't' })).status).toBe(201);
  });

  it("schema_id and data are required; a missing list is 404 on schema_id, another account's list 403", async () => {
    const none = await w.call('addListItem', {});
    expect(none.status).toBe(422);
    expect(Object.keys(none.body.errors)).toEqual(['schema_id', 'data']);
    const missing = await add('nope', { a: 1 });
    expect(missing.status).toBe(404);
    expect(missing.body.errors).toEqual({ schema_id: [missing.body.message] });
    const bobs = await list([F('a')], 'bob-key', BOB_PROJECT);
    expect((await add(bobs, { a: 'x' })).status).toBe(403);
  });
});

describe('updateListItem', () => {
  it('"updateListItem POST — item_id, data (only the given slugs change)" → 200 {data: record}', async () => {
    const id = await list([F('title'), F('qty', 'number'), F('note', 'string', { is_required: false })]);
    const item = await addId(id, { title: 'Old', qty: 1, note: 'keep' });
    tick(5);
    const res = await w.call('updateListItem', { item_id: item, data: { qty: 7 } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: item, schema_id: id, title: 'Old', qty: 7, note: 'keep' });
    expect(res.body.data.updated_at).not.toBe(res.body.data.created_at);
    expect((await w.call('updateListItem', { item_id: item, data: { qty: 8 } }, { verb: 'GET' })).status).toBe(405);
  });

  it('null clears an optional field; a required field cannot be cleared; wrong values and unknown slugs are 422', async () => {
    const id = await list([F('title'), F('note', 'string', { is_required: false })]);
    const item = await addId(id, { title: 'T', note: 'N' });
    const cleared = await w.call('updateListItem', { item_id: item, data: { note: null } });
    expect(cleared.body.data.note).toBeNull();
    const req = await w.call('updateListItem', { item_id: item, data: { title: null } });
    expect(req.status).toBe(422);
    expect(req.body.errors).toEqual({ 'data.title': ['The data.title field is required.'] });
    const unknown = await w.call('updateListItem', { item_id: item, data: { nope: 1 } });
    expect(Object.keys(unknown.body.errors)).toEqual(['data.nope']);
    const wrong = await w.call('updateListItem', { item_id: item, data: { title: 5 } });
    expect(wrong.body.errors).toEqual({ 'data.title': ['The data.title field must be a string.'] });
  });

  it('"A missing record, or one of a deleted list: 404 on item_id"; another account\'s record 403', async () => {
    const missing = await w.call('updateListItem', { item_id: 'nope', data: { a: 1 } });
    expect(missing.status).toBe(404);
    expect(missing.body.errors).toEqual({ item_id: [missing.body.message] });
    const bobs = await list([F('a')], 'bob-key', BOB_PROJECT);
    const bobItem = (await add(bobs, { a: 'x' }, 'bob-key')).body.data.id;
    expect((await w.call('updateListItem', { item_id: bobItem, data: { a: 'y' } })).status).toBe(403);
    expect((await w.call('deleteListItem', { item_id: bobItem })).status).toBe(403);
  });
});

describe('deleteListItem', () => {
  it('"deleteListItem POST — item_id → 204"; afterwards 404 on item_id', async () => {
    const id = await list([F('title')]);
    const item = await addId(id, { title: 'T' });
    expect((await w.call('deleteListItem', { item_id: item }, { verb: 'GET' })).status).toBe(405);
    const res = await w.call('deleteListItem', { item_id: item });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const again = await w.call('deleteListItem', { item_id: item });
    expect(again.status).toBe(404);
    expect(again.body.errors).toEqual({ item_id: [again.body.message] });
    expect((await w.call('getListItems', { schema_id: id })).body.data).toEqual([]);
  });
});

describe('deleteListSchema and records', () => {
  it('"all its records are deleted; record lookup and record update or delete then respond 404"', async () => {
    const id = await list([F('title')]);
    const item = await addId(id, { title: 'T' });
    expect((await w.call('deleteListSchema', { schema_id: id })).status).toBe(204);
    expect((await w.call('getListItems', { schema_id: id })).status).toBe(404);
    const upd = await w.call('updateListItem', { item_id: item, data: { title: 'x' } });
    expect(upd.status).toBe(404);
    expect(upd.body.errors).toHaveProperty('item_id');
    expect((await w.call('deleteListItem', { item_id: item })).status).toBe(404);
  });
});

describe('getListItems', () => {
  let id: string;
  const items: string[] = [];
  beforeAll(async () => {
    id = await list([
      F('name'),
      F('price', 'money', { is_required: false }),
      F('vip', 'bool', { is_required: false }),
      F('who', 'contact', { is_required: false }),
      F('via', 'bot', { is_required: false }),
    ]);
    const rows: Array<Record<string, unknown>> = [
      { name: 'c', price: 300, vip: true, who: 100, via: 10 },
      { name: 'a', price: 100, vip: false, who: 102, via: 11 },
      { name: 'e', price: 500, vip: true, who: 100, via: 11 },
      { name: 'b', price: 200 },
      { name: 'd', price: 400, vip: false, who: 102, via: 10 },
    ];
    for (let i = 0; i < 25; i++) rows.push({ name: `z${String(i).padStart(2, '0')}`, price: 1000 + i });
    for (const r of rows) {
      items.push(await addId(id, r));
      tick();
    }
  });

  it('"limit (1–1000, default 20)"; "→ 200 with data, links, meta as getListSchemas"', async () => {
    const res = await w.call('getListItems', { schema_id: id }, { verb: 'GET' });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['data', 'links', 'meta']);
    expect(res.body.data).toHaveLength(20);
    const path = `${w.baseUrl}/getListItems`;
    expect(res.body.links).toEqual({ first: `${path}?page=1`, last: `${path}?page=2`, prev: null, next: `${path}?page=2` });
    expect(res.body.meta).toEqual({ current_page: 1, from: 1, last_page: 2, path, per_page: 20, to: 20, total: 30 });
    for (const bad of [0, 1001, 'x']) {
      const r = await w.call('getListItems', { schema_id: id, limit: bad });
      expect(r.status).toBe(422);
      expect(Object.keys(r.body.errors)).toEqual(['limit']);
    }
    expect((await w.call('getListItems', { schema_id: id, limit: 1000 })).body.data).toHaveLength(30);
  });

  it('"page (from 1)"', async () => {
    const p2 = await w.call('getListItems', { schema_id: id, page: 2, limit: 20 });
    expect(p2.body.data.map((r: any) => r.id)).toEqual(items.slice(20));
    expect(p2.body.meta).toMatchObject({ current_page: 2, from: 21, to: 30 });
    expect((await w.call('getListItems', { schema_id: id, page: 'x' })).body.meta.current_page).toBe(1);
  });

  it('"order_by (<slug or created_at or id>,<asc|desc>, default id,asc)"', async () => {
    const byDefault = await w.call('getListItems', { schema_id: id, limit: 5 });
    expect(byDefault.body.data.map((r: any) => r.id)).toEqual(items.slice(0, 5));
    expect([...items].sort()).toEqual(items);
    const idDesc = await w.call('getListItems', { schema_id: id, limit: 3, order_by: 'id,desc' });
    expect(idDesc.body.data.map((r: any) => r.id)).toEqual([...items].reverse().slice(0, 3));
    const byName = await w.call('getListItems', { schema_id: id, limit: 5, order_by: 'name,asc' });
    expect(byName.body.data.map((r: any) => r.name)).toEqual(['a', 'b', 'c', 'd', 'e']);
    const byPrice = await w.call('getListItems', { schema_id: id, limit: 2, order_by: 'price,desc' });
    expect(byPrice.body.data.map((r: any) => r.price)).toEqual([1024, 1023]);
    const created = await w.call('getListItems', { schema_id: id, limit: 2, order_by: 'created_at,desc' });
    expect(created.body.data.map((r: any) => r.id)).toEqual([items[29], items[28]]);
    for (const bad of ['nope,asc', 'name,up', 'name,asc,x']) {
      const r = await w.call('getListItems', { schema_id: id, order_by: bad });
      expect(r.status, bad).toBe(422);
      expect(Object.keys(r.body.errors)).toEqual(['order_by']);
    }
  });

  it('"filters (object {<slug>: value}, equality; bracket form filters[slug]=v works)"', async () => {
    const obj = await w.call('getListItems', { schema_id: id, filters: { vip: true } });
    expect(obj.body.data.map((r: any) => r.name)).toEqual(['c', 'e']);
    expect(obj.body.meta.total).toBe(2);
    const bracket = await w.call('getListItems', { schema_id: id, filters: { price: '400' } }, { verb: 'GET' });
    expect(bracket.body.data.map((r: any) => r.name)).toEqual(['d']);
    const both = await w.call('getListItems', { schema_id: id, filters: { vip: '0', name: 'a' } }, { verb: 'GET' });
    expect(both.body.data.map((r: any) => r.name)).toEqual(['a']);
    const text = await w.call('getListItems', { schema_id: id, filters: JSON.stringify({ name: 'e' }) }, { verb: 'GET' });
    expect(text.body.data.map((r: any) => r.name)).toEqual(['e']);
    const none = await w.call('getListItems', { schema_id: id, filters: { name: 'nobody' } });
    expect(none.body.data).toEqual([]);
    expect(none.body.meta.total).toBe(0);
    const unknown = await w.call('getListItems', { schema_id: id, filters: { nope: 1 } });
    expect(unknown.status).toBe(422);
    expect(Object.keys(unknown.body.errors)).toEqual(['filters.nope']);
  });

  it('"bot_id and contact_id (records whose bot / contact field holds that id)"', async () => {
    const bot = await w.call('getListItems', { schema_id: id, bot_id: 11 });
    expect(bot.body.data.map((r: any) => r.name)).toEqual(['a', 'e']);
    const contact = await w.call('getListItems', { schema_id: id, contact_id: 100 }, { verb: 'GET' });
    expect(contact.body.data.map((r: any) => r.name)).toEqual(['c', 'e']);
    const combined = await w.call('getListItems', { schema_id: id, contact_id: 102, bot_id: 10, filters: { vip: false } });
    expect(combined.body.data.map((r: any) => r.name)).toEqual(['d']);
  });

  it("a missing list: 404 on schema_id; another account's list: 403", async () => {
    const missing = await w.call('getListItems', { schema_id: 'nope' });
    expect(missing.status).toBe(404);
    expect(missing.body.errors).toEqual({ schema_id: [missing.body.message] });
    const bobs = await list([F('a')], 'bob-key', BOB_PROJECT);
    expect((await w.call('getListItems', { schema_id: bobs })).status).toBe(403);
  });
});

describe('is_encryptable fields', () => {
  it('values are stored encrypted (no clear text in the database) and returned decrypted', async () => {
    const id = await list([
      F('plain'),
      F('secret', 'string', { is_encryptable: true }),
      F('pin', 'number', { is_encryptable: true, is_required: false }),
    ]);
    const plain = 'PlainMarker-7f3a9c';
    const secret = 'SecretMarker-4b8e21';
    const res = await add(id, { plain, secret, pin: 987654321 });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ plain, secret, pin: 987654321 });
    const item = res.body.data.id;
    const upd = await w.call('updateListItem', { item_id: item, data: { secret: `${secret}-2` } });
    expect(upd.body.data.secret).toBe(`${secret}-2`);
    const page = await w.call('getListItems', { schema_id: id });
    expect(page.body.data[0]).toMatchObject({ plain, secret: `${secret}-2`, pin: 987654321 });

    // A SQLite file (and its WAL) is read raw; a PostgreSQL database, every row of it.
    if (TEST_STORE === 'sqlite') w.sqlite.db.pragma('wal_checkpoint(TRUNCATE)');
    const all =
      TEST_STORE === 'sqlite'
        ? Buffer.concat([w.dbFile, `${w.dbFile}-wal`].filter((f) => existsSync(f)).map((f) => readFileSync(f)))
        : Buffer.from(dumpStore(w.store));
    // The clear field is there (so the search can find things); the encrypted ones are not.
    expect(all.includes(Buffer.from(plain))).toBe(true);
    expect(all.includes(Buffer.from(secret))).toBe(false);
    expect(all.includes(Buffer.from('987654321'))).toBe(false);
    expect(w.store.lists.record(item)!.data).not.toContain('SecretMarker');
  });

  it('encrypted fields cannot be filtered or sorted on: 422', async () => {
    const id = await list([F('secret', 'string', { is_encryptable: true })]);
    await add(id, { secret: 's' });
    const f = await w.call('getListItems', { schema_id: id, filters: { secret: 's' } });
    expect(f.status).toBe(422);
    expect(Object.keys(f.body.errors)).toEqual(['filters.secret']);
    const o = await w.call('getListItems', { schema_id: id, order_by: 'secret,asc' });
    expect(o.status).toBe(422);
    expect(Object.keys(o.body.errors)).toEqual(['order_by']);
  });
});

describe('record methods in the catalog', () => {
  it('getListItems is GET and POST; addListItem, updateListItem, deleteListItem are POST', async () => {
    const { findMethod } = await import('../../src/api/catalog.js');
    expect(findMethod('getListItems')!.verbs).toEqual(['GET', 'POST']);
    expect(findMethod('getListItems')!.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
    for (const n of ['addListItem', 'updateListItem', 'deleteListItem']) expect(findMethod(n)!.verbs).toEqual(['POST']);
    expect(findMethod('deleteListItem')!.annotations.destructiveHint).toBe(true);
  });
});

describe('a value holding the NUL character ("never a 500"): PostgreSQL cannot store one, SQLite keeps it', () => {
  it("kept on SQLite; on PostgreSQL a 422 naming data.title, and the list's filtered reads still answer", async () => {
    const id = await list([F('title')]);
    await addId(id, { title: 'plain' });
    const res = await add(id, { title: 'a\u0000b' });
    if (TEST_STORE === 'sqlite') expect(res.status).toBe(201);
    else
      expect([res.status, res.body.errors]).toEqual([422, { 'data.title': ['The data.title field must not contain the NUL character.'] }]);
    const found = await w.call('getListItems', { schema_id: id, filters: { title: 'plain' } });
    expect(found.status).toBe(200);
    expect(found.body.data.map((r: { title: string }) => r.title)).toEqual(['plain']);
    const nul = await w.call('getListItems', { schema_id: id, filters: { title: 'a\u0000b' } });
    expect(nul.status).toBe(TEST_STORE === 'sqlite' ? 200 : 422);
  });
});
