/**
 * "Fields are stored in the order sent", slugs in any script and slugs that look like numbers,
 * for lists and records, through the built `serve` and `mcp --http` on the test project's store.
 * On PostgreSQL these answer each request on a service thread (service/pool.ts), and the answer
 * crosses to the HTTP thread as a structured clone: the suites of test/service run the service
 * in-process and never crossed it. A list with a slug "10" once killed the thread there (its
 * `fields` could not be cloned): the answer was a 503 with the list committed, and every
 * getListSchemas of its owner a 503 after it. The cases of lists.test.ts and records.test.ts,
 * here through the threads, so that the two stores cannot drift.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, spawnAnnounced, spawnServe, type Announced, type Served } from '../../helpers/cli.js';
import { callApi } from '../../helpers/http.js';
import { removeStore, seedStore } from '../../helpers/store.js';
import { stop } from '../../helpers/temp.js';
import { baseFixture } from '../../helpers/world.js';
import { connectHttp, type McpClient } from '../../mcp/clients.js';

const ALICE_PROJECT = '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10';
/** Two threads on PostgreSQL (WORKSPACE_SECRET: it has no file beside the database to keep one in). */
const ENV = { WORKSPACE_SECRET: 'cd'.repeat(32), WORKSPACE_PG_POOL: '2' };

const SLUG_SETS: Record<string, string[]> = {
  'slugs that look like numbers': ['b', '10', '2', 'a'],
  'Cyrillic slugs': ['имя', 'цена_2-й', 'адрес'],
  'Greek slugs': ['όνομα', 'τιμή', 'α1'],
  'all of them, and Chinese': ['z', '價格', '10', 'όνομα', '1', 'имя', '0'],
};

let db: string;
let served: Served;
const call = (method: string, params: Record<string, unknown>) => callApi(served.baseUrl, method, params);

beforeAll(async () => {
  db = seedStore(baseFixture());
  served = await spawnServe(['--db', db, '--rate-limit', '0'], ENV);
}, 60_000);

afterAll(async () => {
  if (served) await stop(served.proc);
  if (db) removeStore(db);
});

const F = (slug: string) => ({ name: `Field ${slug}`, slug, type: 'string', is_required: false });

/** The order in which `keys` first appear (as JSON keys) in `text`; each must appear. */
function keyOrder(text: string, keys: string[]): string[] {
  for (const k of keys) expect(text, `"${k}" is not in the answer`).toContain(`"${k}":`);
  return [...keys].sort((a, b) => text.indexOf(`"${a}":`) - text.indexOf(`"${b}":`));
}

/** The text from list `id` on, in an answer that holds it. */
const from = (text: string, id: string) => text.slice(text.indexOf(`"id":"${id}"`));

async function createList(slugs: string[], name = 'Ordered'): Promise<string> {
  const res = await call('createListSchema', { name, project_uuid: ALICE_PROJECT, fields: slugs.map(F) });
  expect(res.status, res.text).toBe(201);
  expect(keyOrder(res.text, slugs)).toEqual(slugs);
  return res.body.data.id as string;
}

describe('lists through serve: fields in the order sent', () => {
  const made: Array<[string, string[]]> = [];

  it.each(Object.entries(SLUG_SETS))('%s: createListSchema answers 201 and getListSchema gives them back in order', async (_, slugs) => {
    const id = await createList(slugs);
    made.push([id, slugs]);
    const one = await call('getListSchema', { schema_id: id });
    expect(one.status, one.text).toBe(200);
    expect(keyOrder(one.text, slugs)).toEqual(slugs);
  });

  it('getListSchemas answers every list of the owner, each with its fields in order', async () => {
    expect(made).toHaveLength(Object.keys(SLUG_SETS).length);
    const all = await call('getListSchemas', { limit: 100 });
    expect(all.status, all.text).toBe(200);
    expect(all.body.meta.total).toBe(made.length);
    for (const [id, slugs] of made) expect(keyOrder(from(all.text, id), slugs)).toEqual(slugs);
  });

  it('addListSchemaField puts a slug that looks like a number last', async () => {
    const id = await createList(['b', '10']);
    const res = await call('addListSchemaField', { schema_id: id, field: F('2') });
    expect(res.status, res.text).toBe(204);
    const one = await call('getListSchema', { schema_id: id });
    expect(one.status, one.text).toBe(200);
    expect(keyOrder(one.text, ['b', '10', '2'])).toEqual(['b', '10', '2']);
  });
});

describe('records through serve: one key per slug, in field order', () => {
  const slugs = ['b', '10', 'имя', 'a', '2', 'όνομα'];
  const keys = ['id', 'schema_id', 'created_at', 'updated_at', ...slugs];

  it('addListItem, getListItems and updateListItem answer the record with its slugs in field order', async () => {
    const schema = await createList(slugs, 'Records');
    const added = await call('addListItem', { schema_id: schema, data: { a: 'A', '10': 'ten', όνομα: 'Άννα' } });
    expect(added.status, added.text).toBe(201);
    expect(keyOrder(added.text, keys)).toEqual(keys);
    expect(added.body.data).toMatchObject({ b: null, '10': 'ten', имя: null, a: 'A', '2': null, όνομα: 'Άννα' });
    const page = await call('getListItems', { schema_id: schema });
    expect(page.status, page.text).toBe(200);
    expect(keyOrder(page.text, keys)).toEqual(keys);
    const updated = await call('updateListItem', { schema_id: schema, item_id: added.body.data.id, data: { '2': 'two', имя: 'Аня' } });
    expect(updated.status, updated.text).toBe(200);
    expect(keyOrder(updated.text, keys)).toEqual(keys);
    expect(updated.body.data).toMatchObject({ '10': 'ten', имя: 'Аня', '2': 'two' });
  });
});

describe('mcp --http', () => {
  let mcp: Announced | undefined;
  let client: McpClient | undefined;
  afterAll(async () => {
    await client?.close().catch(() => undefined);
    if (mcp) await stop(mcp.proc);
  });

  it('createListSchema and getListSchemas as tools keep the order of slugs that look like numbers', async () => {
    mcp = await spawnAnnounced(
      ['mcp', '--http', '--port', '0', '--db', db],
      /(http:\/\/\S+\/mcp)/,
      cliEnv({ ...ENV, WORKSPACE_API_KEY: 'alice-key' }),
    );
    client = await connectHttp('2025-11-25', mcp.url);
    const slugs = ['b', '10', '2', 'a'];
    const text = (r: { content: unknown[] }) => (r.content[0] as { text: string }).text;
    const made = await client.callTool({ name: 'createListSchema', arguments: { name: 'Through MCP', bot_id: 10, fields: slugs.map(F) } });
    expect(made.isError, text(made)).toBeFalsy();
    expect(keyOrder(text(made), slugs)).toEqual(slugs);
    const id = (made.structuredContent as { data: { id: string } }).data.id;
    const all = await client.callTool({ name: 'getListSchemas', arguments: {} });
    expect(all.isError, text(all)).toBeFalsy();
    expect(keyOrder(from(text(all), id), slugs)).toEqual(slugs);
  });
});

describe('the server', () => {
  it('logged no failure of a service thread', () => {
    expect(served.stderr()).not.toMatch(/service thread|"level":50/);
  });
});
