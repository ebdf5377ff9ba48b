/**
 * The spec's list parts (List schema and Field definition resources, the list transitions,
 * the six list endpoints, the List methods errors, the list limits), sentence by sentence,
 * over real HTTP.
 */
import { describe, expect, it } from 'vitest';
import { findMethod } from '../../src/api/catalog.js';
import { RESERVED_SLUGS } from '../../src/api/lists.js';
import { newObjectId } from '../../src/store/lists.js';
import { queryRows } from '../helpers/store.js';
import { baseFixture, startWorld, useWorld } from '../helpers/world.js';

const ALICE_PROJECT = '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10';
const BOB_PROJECT = '5a2b3c4d-1111-4c1e-9a55-0b6f3d2e1a11';
const ALICE_SIDE_PROJECT = '6c3d4e5f-2222-4c1e-9a55-0b6f3d2e1a12';
const EMPTY_PROJECT = '7d4e5f60-3333-4c1e-9a55-0b6f3d2e1a13';

const w = useWorld(() => {
  const base = baseFixture();
  return {
    ...base,
    projects: [
      ...(base.projects as object[]),
      { uuid: ALICE_SIDE_PROJECT, owner_id: 1, name: 'Side' },
      { uuid: EMPTY_PROJECT, owner_id: 1, name: 'Full' },
    ],
    bots: [
      ...(base.bots as object[]),
      { id: 12, project_uuid: ALICE_SIDE_PROJECT, name: 'Side bot' },
      { id: 13, project_uuid: ALICE_PROJECT, name: 'Deleted bot', deleted: true },
    ],
  };
});

const F = (slug: string, type = 'string', extra: Record<string, unknown> = {}) => ({ name: `Field ${slug}`, slug, type, ...extra });

async function create(params: Record<string, unknown>, key = 'alice-key') {
  return w.call('createListSchema', { name: 'List', project_uuid: ALICE_PROJECT, fields: [F('title')], ...params }, { key });
}

async function createId(params: Record<string, unknown> = {}, key = 'alice-key'): Promise<string> {
  const res = await create(params, key);
  expect(res.status).toBe(201);
  return res.body.data.id as string;
}

/** The order in which `keys` first appear (as JSON keys) in `text`. */
function keyOrder(text: string, keys: string[]): string[] {
  return [...keys].sort((a, b) => text.indexOf(`"${a}":`) - text.indexOf(`"${b}":`));
}

function expectSchemaNotFound(res: { status: number; body: any }) {
  expect(res.status).toBe(404);
  expect(Object.keys(res.body)).toEqual(['message', 'error', 'errors']);
  expect(typeof res.body.message).toBe('string');
  expect(res.body.error).toBe(res.body.message);
  expect(res.body.errors).toEqual({ schema_id: [res.body.message] });
}

describe('List schema resource', () => {
  it('a list has id (string), fields, name, bot_id, project, is_menu, created_at, updated_at', async () => {
    const res = await create({ name: 'Prices' });
    expect(res.status).toBe(201);
    const d = res.body.data;
    expect(Object.keys(d)).toEqual(['id', 'fields', 'name', 'bot_id', 'project', 'is_menu', 'created_at', 'updated_at']);
    expect(typeof d.id).toBe('string');
    expect(d.name).toBe('Prices');
    expect(d.project).toBe(ALICE_PROJECT);
    expect(d.is_menu).toBe(false);
    expect(d.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/);
    expect(d.updated_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/);
  });

  it('bot_id: "null if created in the project"; the bot the list was created in otherwise', async () => {
    expect((await create({})).body.data.bot_id).toBeNull();
    const inBot = await w.call('createListSchema', { name: 'In bot', bot_id: 12, fields: [F('a')] });
    expect(inBot.status).toBe(201);
    expect(inBot.body.data.bot_id).toBe(12);
    expect(inBot.body.data.project).toBe(ALICE_SIDE_PROJECT);
  });

  it('fields: "map whose key is the field slug and whose value is a field definition"', async () => {
    const res = await create({ fields: [F('title'), F('price', 'money', { currency: 'EUR' })] });
    expect(res.body.data.fields).toEqual({
      title: { name: 'Field title', type: 'string', is_required: true, is_hidden: false, is_encryptable: false },
      price: { name: 'Field price', type: 'money', currency: 'EUR', is_required: true, is_hidden: false, is_encryptable: false },
    });
    expect(
      keyOrder(res.text.slice(res.text.indexOf('"price":')), ['name', 'type', 'currency', 'is_required', 'is_hidden', 'is_encryptable']),
    ).toEqual(['name', 'type', 'currency', 'is_required', 'is_hidden', 'is_encryptable']);
  });
});

describe('Field definition', () => {
  it('type: one of string, number, bool, date, datetime, money, file, image, contact, bot', async () => {
    const types = ['string', 'number', 'bool', 'date', 'datetime', 'money', 'file', 'image', 'contact', 'bot'];
    const res = await create({ fields: types.map((t) => F(`f_${t}`, t)) });
    expect(res.status).toBe(201);
    expect(Object.values(res.body.data.fields).map((f: any) => f.type)).toEqual(types);
    const bad = await create({ fields: [F('a', 'text')] });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual({ 'fields.0.type': ['The selected fields.0.type is invalid.'] });
  });

  it('currency: "present only for money"', async () => {
    const res = await create({ fields: [F('a', 'string', { currency: 'EUR' }), F('m', 'money', { currency: 'GBP' })] });
    expect(res.status).toBe(201);
    expect(res.body.data.fields.a).not.toHaveProperty('currency');
    expect(res.body.data.fields.m.currency).toBe('GBP');
  });

  it('is_required default true on creation; is_hidden default false; is_encryptable default false', async () => {
    const res = await create({ fields: [F('a'), F('b', 'string', { is_required: false, is_hidden: true, is_encryptable: true })] });
    expect(res.body.data.fields.a).toMatchObject({ is_required: true, is_hidden: false, is_encryptable: false });
    expect(res.body.data.fields.b).toMatchObject({ is_required: false, is_hidden: true, is_encryptable: true });
  });

  it('name: "up to 255 characters" (characters, not UTF-16 units)', async () => {
    expect((await create({ fields: [{ name: '😀'.repeat(255), slug: 'a', type: 'string' }] })).status).toBe(201);
    const bad = await create({ fields: [{ name: 'x'.repeat(256), slug: 'a', type: 'string' }] });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual({ 'fields.0.name': ['The fields.0.name field must not be greater than 255 characters.'] });
  });

  it('slug: "letters, digits, - and _, up to 255 characters" (letters of any script)', async () => {
    const ok = await create({ fields: [F('цена_2-й'), F('價格'), { ...F('x'.repeat(255)), name: 'Long' }, F('10')] });
    expect(ok.status).toBe(201);
    for (const bad of ['a b', 'a.b', 'a"b', 'a/b']) {
      const res = await create({ fields: [F(bad)] });
      expect(res.status).toBe(422);
      expect(res.body.errors['fields.0.slug']).toEqual([
        'The fields.0.slug field must only contain letters, numbers, dashes, and underscores.',
      ]);
    }
    const long = await create({ fields: [{ ...F('x'.repeat(256)), name: 'Long' }] });
    expect(long.body.errors).toEqual({ 'fields.0.slug': ['The fields.0.slug field must not be greater than 255 characters.'] });
  });

  it('slug: "unique within the list": repeated slug on creation is 422 on fields.N.slug, N zero-based', async () => {
    const res = await create({ fields: [F('a'), F('b'), F('a')] });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ 'fields.2.slug': ['The fields.2.slug field has a duplicate value.'] });
    // The same slug in another list is fine.
    expect((await create({ fields: [F('a')] })).status).toBe(201);
  });

  it('slug: "must not equal a reserved service name": 422 on fields.N.slug for each reserved name', async () => {
    expect(RESERVED_SLUGS).toEqual(expect.arrayContaining(['id', 'schema_id', 'created_at', 'updated_at']));
    for (const slug of RESERVED_SLUGS.filter((s) => s !== '__proto__')) {
      const res = await create({ fields: [F('ok'), F(slug)] });
      expect(res.status, slug).toBe(422);
      expect(Object.keys(res.body.errors)).toEqual(['fields.1.slug']);
      expect(res.body.errors['fields.1.slug'][0]).toContain('reserved');
    }
    const upper = await create({ fields: [F('ID')] });
    expect(upper.body.errors).toHaveProperty(['fields.0.slug']);
  });
});

describe('getListSchemas', () => {
  it('"returns the lists of all projects owned by the key holder, 50 per page (fixed)"; invited projects are not included', async () => {
    const world = await startWorld({
      ...baseFixture(),
      projects: [...(baseFixture().projects as object[]), { uuid: ALICE_SIDE_PROJECT, owner_id: 1, name: 'Side' }],
    });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 52; i++) {
        const res = await world.call('createListSchema', {
          name: `L${i}`,
          project_uuid: i % 2 ? ALICE_PROJECT : ALICE_SIDE_PROJECT,
          fields: [F('a')],
        });
        ids.push(res.body.data.id);
      }
      // Bob's list in the project Alice was invited to.
      const bobs = await world.call('createListSchema', { name: 'Bob', project_uuid: BOB_PROJECT, fields: [F('a')] }, { key: 'bob-key' });
      expect(bobs.status).toBe(201);

      const p1 = await world.call('getListSchemas', { per_page: 2 });
      expect(p1.status).toBe(200);
      expect(Object.keys(p1.body)).toEqual(['data', 'links', 'meta']);
      expect(p1.body.data).toHaveLength(50);
      expect(p1.body.data.map((l: any) => l.id)).toEqual(ids.slice(0, 50));
      const path = `${world.baseUrl}/getListSchemas`;
      expect(p1.body.links).toEqual({ first: `${path}?page=1`, last: `${path}?page=2`, prev: null, next: `${path}?page=2` });
      expect(p1.body.meta).toEqual({ current_page: 1, from: 1, last_page: 2, path, per_page: 50, to: 50, total: 52 });
      expect(Object.keys(p1.body.meta)).toEqual(['current_page', 'from', 'last_page', 'path', 'per_page', 'to', 'total']);

      const p2 = await world.call('getListSchemas', { page: 2 }, { verb: 'GET' });
      expect(p2.body.data.map((l: any) => l.id)).toEqual(ids.slice(50));
      expect(p2.body.links.next).toBeNull();
      expect(p2.body.links.prev).toBe(`${path}?page=1`);
      expect(p2.body.meta).toMatchObject({ current_page: 2, from: 51, to: 52, total: 52 });
      expect(p2.text).not.toContain(bobs.body.data.id);

      // Bob sees only his own list.
      const bob = await world.call('getListSchemas', {}, { key: 'bob-key' });
      expect(bob.body.data.map((l: any) => l.id)).toEqual([bobs.body.data.id]);

      // A page that is not a positive integer counts as 1; past the end is empty.
      expect((await world.call('getListSchemas', { page: 'abc' })).body.meta.current_page).toBe(1);
      const past = await world.call('getListSchemas', { page: 9 });
      expect(past.body.data).toEqual([]);
      expect(past.body.meta).toMatchObject({ from: null, to: null, last_page: 2 });
    } finally {
      await world.close();
    }
  });

  it('an owner with no lists gets an empty page, last_page 1', async () => {
    const res = await w.call('getListSchemas', {}, { key: 'bob-key' });
    expect(res.status).toBe(200);
    expect(res.body.meta).toMatchObject({ current_page: 1, from: null, to: null, last_page: 1, total: res.body.data.length });
  });
});

describe('getListSchema', () => {
  it('"Returns one list": {data: <list schema>}', async () => {
    const created = await create({ name: 'One', fields: [F('a'), F('b', 'number')] });
    const res = await w.call('getListSchema', { schema_id: created.body.data.id }, { verb: 'GET' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: created.body.data });
  });

  it('"Missing or deleted list: 404" with message, error and errors.schema_id all holding the text', async () => {
    expectSchemaNotFound(await w.call('getListSchema', { schema_id: 'no-such-list' }));
    const id = await createId();
    expect((await w.call('deleteListSchema', { schema_id: id })).status).toBe(204);
    expectSchemaNotFound(await w.call('getListSchema', { schema_id: id }));
  });

  it('"Another account\'s list: 403", also a list of a project the holder was invited to', async () => {
    const bobs = await w.call('createListSchema', { name: 'Bob', project_uuid: BOB_PROJECT, fields: [F('a')] }, { key: 'bob-key' });
    const res = await w.call('getListSchema', { schema_id: bobs.body.data.id });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: expect.any(String) });
  });

  it('schema_id is required', async () => {
    const res = await w.call('getListSchema', {});
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ schema_id: ['The schema id field is required.'] });
  });
});

describe('createListSchema', () => {
  it('"Response 201: {data: <list schema>}"', async () => {
    const res = await create({});
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['data']);
  });

  it('"Fields are stored in the order sent", also slugs that look like numbers, in the JSON text', async () => {
    const slugs = ['b', '10', 'a', '2', 'z', '1'];
    const res = await create({ fields: slugs.map((s) => F(s)) });
    expect(res.status).toBe(201);
    const fieldsText = (t: string) => t.slice(t.indexOf('"fields":'));
    expect(keyOrder(fieldsText(res.text), slugs)).toEqual(slugs);
    const one = await w.call('getListSchema', { schema_id: res.body.data.id });
    expect(keyOrder(fieldsText(one.text), slugs)).toEqual(slugs);
    const all = await w.call('getListSchemas', {});
    const at = all.text.indexOf(res.body.data.id);
    expect(keyOrder(all.text.slice(at), slugs)).toEqual(slugs);
  });

  it('"In a GET request the fields are passed as fields[0][name], fields[0][slug], fields[0][type]"', async () => {
    const res = await w.call(
      'createListSchema',
      {
        name: 'From GET',
        project_uuid: ALICE_PROJECT,
        fields: [
          { name: 'Title', slug: 'title', type: 'string', is_required: '0' },
          { name: 'Price', slug: 'price', type: 'money', currency: 'JPY' },
        ],
        is_menu: '1',
      },
      { verb: 'GET' },
    );
    expect(res.status).toBe(201);
    expect(res.body.data.fields).toEqual({
      title: { name: 'Title', type: 'string', is_required: false, is_hidden: false, is_encryptable: false },
      price: { name: 'Price', type: 'money', currency: 'JPY', is_required: true, is_hidden: false, is_encryptable: false },
    });
    expect(res.body.data.is_menu).toBe(true);
    const form = await w.call('createListSchema', { name: 'Form', project_uuid: ALICE_PROJECT, fields: [F('a')] }, { form: true });
    expect(form.status).toBe(201);
  });

  it('name: "yes, up to 255 characters"', async () => {
    expect((await create({ name: 'n'.repeat(255) })).status).toBe(201);
    const long = await create({ name: 'n'.repeat(256) });
    expect(long.status).toBe(422);
    expect(long.body.errors).toEqual({ name: ['The name field must not be greater than 255 characters.'] });
    const none = await create({ name: null });
    expect(none.body.errors).toEqual({ name: ['The name field is required.'] });
  });

  it('project_uuid "yes if no bot_id"; bot_id "yes if no project_uuid"', async () => {
    const res = await w.call('createListSchema', { name: 'X', fields: [F('a')] });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      project_uuid: ['The project uuid field is required when bot id is not present.'],
      bot_id: ['The bot id field is required when project uuid is not present.'],
    });
  });

  it('bot_id: "The list goes to this bot\'s project and is marked as created in it. If both are sent, bot_id is used"', async () => {
    const res = await w.call('createListSchema', { name: 'Both', bot_id: 12, project_uuid: ALICE_PROJECT, fields: [F('a')] });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ bot_id: 12, project: ALICE_SIDE_PROJECT });
    // bot_id wins even over another account's project.
    const over = await w.call('createListSchema', { name: 'Both', bot_id: 10, project_uuid: BOB_PROJECT, fields: [F('a')] });
    expect(over.status).toBe(201);
    expect(over.body.data).toMatchObject({ bot_id: 10, project: ALICE_PROJECT });
  });

  it('fields: "yes, 1 to 30 items"', async () => {
    const thirty = Array.from({ length: 30 }, (_, i) => F(`f${i}`));
    expect((await create({ fields: thirty })).status).toBe(201);
    const many = await create({ fields: [...thirty, F('f30')] });
    expect(many.status).toBe(422);
    expect(many.body.errors).toEqual({ fields: ['The fields field must not have more than 30 items.'] });
    const none = await create({ fields: [] });
    expect(none.body.errors).toEqual({ fields: ['The fields field is required.'] });
    const missing = await w.call('createListSchema', { name: 'X', project_uuid: ALICE_PROJECT });
    expect(missing.body.errors).toEqual({ fields: ['The fields field is required.'] });
  });

  it('fields[].name, slug and type are required', async () => {
    const res = await create({ fields: [{}] });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      'fields.0.name': ['The fields.0.name field is required.'],
      'fields.0.slug': ['The fields.0.slug field is required.'],
      'fields.0.type': ['The fields.0.type field is required.'],
    });
    expect(res.body.message).toBe('The fields.0.name field is required. (and 2 more errors)');
  });

  it('currency: "Only for money; ISO 4217; default USD; unknown code gives 422" on fields.N.currency', async () => {
    const res = await create({ fields: [F('a', 'money'), F('b', 'money', { currency: 'BHD' })] });
    expect(res.body.data.fields.a.currency).toBe('USD');
    expect(res.body.data.fields.b.currency).toBe('BHD');
    const bad = await create({ fields: [F('a'), F('b', 'money', { currency: 'XYZ' })] });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual({ 'fields.1.currency': ['The selected fields.1.currency is invalid.'] });
  });

  it('is_required, is_hidden, is_encryptable are booleans (true, false, 1, 0, "1", "0")', async () => {
    const bad = await create({ fields: [F('a', 'string', { is_hidden: 'yes' })] });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual({ 'fields.0.is_hidden': ['The fields.0.is_hidden field must be true or false.'] });
  });

  it('is_menu: "Outdated; no effect": accepted, stored and returned', async () => {
    const res = await create({ is_menu: true });
    expect(res.body.data.is_menu).toBe(true);
    const again = await w.call('getListSchema', { schema_id: res.body.data.id });
    expect(again.body.data.is_menu).toBe(true);
    const item = await w.call('addListItem', { schema_id: res.body.data.id, data: { title: 'works' } });
    expect(item.status).toBe(201);
  });

  it('"bot_id or project_uuid does not exist": 422 (a deleted bot counts as missing)', async () => {
    const noBot = await w.call('createListSchema', { name: 'X', bot_id: 999, fields: [F('a')] });
    expect(noBot.status).toBe(422);
    expect(noBot.body.errors).toEqual({ bot_id: ['The selected bot id is invalid.'] });
    const deleted = await w.call('createListSchema', { name: 'X', bot_id: 13, fields: [F('a')] });
    expect(deleted.status).toBe(422);
    const noProject = await create({ project_uuid: '00000000-0000-4000-8000-000000000000' });
    expect(noProject.status).toBe(422);
    expect(noProject.body.errors).toEqual({ project_uuid: ['The selected project uuid is invalid.'] });
  });

  it('"createListSchema in another account\'s bot or project (including one the holder was invited to)": 403', async () => {
    const bot = await w.call('createListSchema', { name: 'X', bot_id: 20, fields: [F('a')] });
    expect(bot.status).toBe(403);
    expect(bot.body).toEqual({ error: expect.any(String) });
    // Alice is a team member of Bob's project: still 403.
    const invited = await create({ project_uuid: BOB_PROJECT });
    expect(invited.status).toBe(403);
    expect((await create({ project_uuid: ALICE_PROJECT }, 'bob-key')).status).toBe(403);
  });

  it('"The project already has 5000 lists": 403 with message and error', async () => {
    const now = '2026-01-01T00:00:00+00:00';
    w.store.tx(() => {
      for (let i = 0; i < 4999; i++) {
        w.store.lists.insert({
          id: newObjectId(),
          project_uuid: EMPTY_PROJECT,
          bot_id: null,
          name: `bulk ${i}`,
          is_menu: false,
          fields: [{ slug: 'a', name: 'A', type: 'string', is_required: true, is_hidden: false, is_encryptable: false }],
          now,
        });
      }
    });
    expect((await create({ project_uuid: EMPTY_PROJECT })).status).toBe(201);
    const res = await create({ project_uuid: EMPTY_PROJECT });
    expect(res.status).toBe(403);
    expect(Object.keys(res.body)).toEqual(['message', 'error']);
    expect(res.body.error).toBe(res.body.message);
    expect(res.body.message).toContain('5000');
    // Another project of the same owner is not affected.
    expect((await create({ project_uuid: ALICE_SIDE_PROJECT })).status).toBe(201);
  });
});

describe('deleteListSchema', () => {
  it('"Deletes a list with its records. Response 204, no body"', async () => {
    const id = await createId();
    const rec = await w.call('addListItem', { schema_id: id, data: { title: 'x' } });
    const res = await w.call('deleteListSchema', { schema_id: id });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectSchemaNotFound(await w.call('getListSchema', { schema_id: id }));
    expect(queryRows(w.store, 'SELECT count(*) AS n FROM list_records WHERE id = ?', [rec.body.data.id])).toEqual([{ n: 0 }]);
  });

  it("missing or already deleted list: 404 with errors.schema_id; another account's: 403", async () => {
    const id = await createId();
    await w.call('deleteListSchema', { schema_id: id }, { verb: 'GET' });
    expectSchemaNotFound(await w.call('deleteListSchema', { schema_id: id }));
    const bobs = await w.call('createListSchema', { name: 'Bob', project_uuid: BOB_PROJECT, fields: [F('a')] }, { key: 'bob-key' });
    expect((await w.call('deleteListSchema', { schema_id: bobs.body.data.id })).status).toBe(403);
    expect((await w.call('getListSchema', { schema_id: bobs.body.data.id }, { key: 'bob-key' })).status).toBe(200);
  });
});

describe('addListSchemaField', () => {
  it('"Adds a field to the end of the list"; response 204, no body', async () => {
    const id = await createId({ fields: [F('b'), F('10')] });
    const res = await w.call('addListSchemaField', { schema_id: id, field: F('2', 'number') });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const one = await w.call('getListSchema', { schema_id: id });
    expect(keyOrder(one.text, ['b', '10', '2'])).toEqual(['b', '10', '2']);
    expect(one.body.data.fields['2']).toEqual({
      name: 'Field 2',
      type: 'number',
      is_required: true,
      is_hidden: false,
      is_encryptable: false,
    });
  });

  it('field.is_required, is_hidden, is_encryptable take their defaults; GET form field[name] works', async () => {
    const id = await createId();
    const res = await w.call(
      'addListSchemaField',
      { schema_id: id, field: { name: 'Note', slug: 'note', type: 'string', is_required: '0', is_hidden: '1' } },
      { verb: 'GET' },
    );
    expect(res.status).toBe(204);
    const one = await w.call('getListSchema', { schema_id: id });
    expect(one.body.data.fields.note).toEqual({ name: 'Note', type: 'string', is_required: false, is_hidden: true, is_encryptable: false });
  });

  it('field, field.name, field.slug, field.type are required', async () => {
    const id = await createId();
    const none = await w.call('addListSchemaField', { schema_id: id });
    expect(none.status).toBe(422);
    expect(none.body.errors).toEqual({ field: ['The field field is required.'] });
    const empty = await w.call('addListSchemaField', { schema_id: id, field: { name: 'x' } });
    expect(empty.body.errors).toEqual({
      'field.slug': ['The field.slug field is required.'],
      'field.type': ['The field.type field is required.'],
    });
  });

  it('"field.name: up to 255 characters", "slug … up to 255 characters" (characters, not UTF-16 units); nothing added past that', async () => {
    const id = await createId({ fields: [F('a')] });
    const long = await w.call('addListSchemaField', {
      schema_id: id,
      field: { name: 'n'.repeat(256), slug: 's'.repeat(256), type: 'string' },
    });
    expect(long.status).toBe(422);
    expect(long.body.errors).toEqual({
      'field.name': ['The field.name field must not be greater than 255 characters.'],
      'field.slug': ['The field.slug field must not be greater than 255 characters.'],
    });
    expect(Object.keys((await w.call('getListSchema', { schema_id: id })).body.data.fields)).toEqual(['a']);
    const longest = { name: '😀'.repeat(255), slug: 'й'.repeat(255), type: 'string' };
    expect((await w.call('addListSchemaField', { schema_id: id, field: longest })).status).toBe(204);
    expect((await w.call('getListSchema', { schema_id: id })).body.data.fields['й'.repeat(255)].name).toBe(longest.name);
  });

  it('"slug exists": 422 on field.slug; a reserved slug too', async () => {
    const id = await createId({ fields: [F('a')] });
    const dup = await w.call('addListSchemaField', { schema_id: id, field: F('a') });
    expect(dup.status).toBe(422);
    expect(dup.body.errors).toEqual({ 'field.slug': ['The field.slug has already been taken.'] });
    const reserved = await w.call('addListSchemaField', { schema_id: id, field: F('created_at') });
    expect(reserved.status).toBe(422);
    expect(Object.keys(reserved.body.errors)).toEqual(['field.slug']);
  });

  it('"money without currency or with unknown code": 422 on field.currency', async () => {
    const id = await createId();
    const none = await w.call('addListSchemaField', { schema_id: id, field: F('m', 'money') });
    expect(none.status).toBe(422);
    expect(none.body.errors).toEqual({ 'field.currency': ['The field.currency field is required when field.type is money.'] });
    const bad = await w.call('addListSchemaField', { schema_id: id, field: F('m', 'money', { currency: 'usd' }) });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual({ 'field.currency': ['The selected field.currency is invalid.'] });
    const ok = await w.call('addListSchemaField', { schema_id: id, field: F('m', 'money', { currency: 'CLF' }) });
    expect(ok.status).toBe(204);
    expect((await w.call('getListSchema', { schema_id: id })).body.data.fields.m.currency).toBe('CLF');
  });

  it('"Existing records do not change. If the new field is required, it must be filled on every later record addition"', async () => {
    const id = await createId({ fields: [F('title')] });
    const before = await w.call('addListItem', { schema_id: id, data: { title: 'old' } });
    const storedBefore = w.store.lists.record(before.body.data.id)!;
    expect((await w.call('addListSchemaField', { schema_id: id, field: F('code') })).status).toBe(204);
    const storedAfter = w.store.lists.record(before.body.data.id)!;
    expect(storedAfter.data).toBe(storedBefore.data);
    expect(storedAfter.updated_at).toBe(storedBefore.updated_at);
    const page = await w.call('getListItems', { schema_id: id });
    expect(page.body.data[0]).toMatchObject({ title: 'old', code: null });
    // The old record can still be updated without the new field.
    expect((await w.call('updateListItem', { item_id: before.body.data.id, data: { title: 'older' } })).status).toBe(200);
    const later = await w.call('addListItem', { schema_id: id, data: { title: 'new' } });
    expect(later.status).toBe(422);
    expect(later.body.errors).toEqual({ 'data.code': ['The data.code field is required.'] });
    expect((await w.call('addListItem', { schema_id: id, data: { title: 'new', code: 'c' } })).status).toBe(201);
  });

  it("missing or deleted list: 404 with errors.schema_id; another account's list: 403", async () => {
    expectSchemaNotFound(await w.call('addListSchemaField', { schema_id: 'nope', field: F('x') }));
    const bobs = await w.call('createListSchema', { name: 'Bob', project_uuid: BOB_PROJECT, fields: [F('a')] }, { key: 'bob-key' });
    expect((await w.call('addListSchemaField', { schema_id: bobs.body.data.id, field: F('x') })).status).toBe(403);
  });
});

describe('deleteListSchemaField', () => {
  it('"Deletes a field and erases its values in all records irreversibly"; response 204, no body', async () => {
    const id = await createId({ fields: [F('title'), F('secret', 'string', { is_required: false })] });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await w.call('addListItem', { schema_id: id, data: { title: `t${i}`, secret: `s${i}` } })).body.data.id);
    }
    const res = await w.call('deleteListSchemaField', { schema_id: id, slug: 'secret' });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(Object.keys((await w.call('getListSchema', { schema_id: id })).body.data.fields)).toEqual(['title']);
    for (const rid of ids) expect(w.store.lists.record(rid)!.data).not.toContain('secret');
    // Irreversibly: a new field with the same slug starts empty.
    await w.call('addListSchemaField', { schema_id: id, field: F('secret', 'string', { is_required: false }) });
    const page = await w.call('getListItems', { schema_id: id });
    expect(page.body.data.map((r: any) => r.secret)).toEqual([null, null, null]);
  });

  it('"no such slug": 422 on slug; schema_id and slug are required', async () => {
    const id = await createId();
    const res = await w.call('deleteListSchemaField', { schema_id: id, slug: 'nope' });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ slug: ['The selected slug is invalid.'] });
    const none = await w.call('deleteListSchemaField', {});
    expect(Object.keys(none.body.errors)).toEqual(['schema_id', 'slug']);
  });

  it("missing or deleted list: 404 with errors.schema_id; another account's list: 403", async () => {
    expectSchemaNotFound(await w.call('deleteListSchemaField', { schema_id: 'nope', slug: 'a' }));
    const bobs = await w.call('createListSchema', { name: 'Bob', project_uuid: BOB_PROJECT, fields: [F('a')] }, { key: 'bob-key' });
    expect((await w.call('deleteListSchemaField', { schema_id: bobs.body.data.id, slug: 'a' })).status).toBe(403);
  });
});

describe('list methods in the catalog', () => {
  it('"Methods: GET, POST" for all six; reads are read-only and idempotent, deletes destructive', () => {
    const names = [
      'getListSchemas',
      'getListSchema',
      'createListSchema',
      'deleteListSchema',
      'addListSchemaField',
      'deleteListSchemaField',
    ];
    for (const n of names) expect(findMethod(n)?.verbs).toEqual(['GET', 'POST']);
    for (const n of ['getListSchemas', 'getListSchema']) {
      expect(findMethod(n)!.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true, destructiveHint: false });
    }
    for (const n of ['deleteListSchema', 'deleteListSchemaField']) {
      expect(findMethod(n)!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    }
    expect(findMethod('createListSchema')!.annotations.readOnlyHint).toBe(false);
  });

  it('answers need a key (401) and the Pro plan (402)', async () => {
    expect((await w.call('getListSchemas', {}, { key: null })).status).toBe(401);
    expect((await w.call('getListSchemas', {}, { key: 'fran-key' })).status).toBe(402);
  });
});
