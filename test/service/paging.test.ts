/**
 * Page paging as every paged method answers it (getContacts, getListSchemas, getListItems,
 * getReferrals): "A page number that is not a positive integer counts as 1" (Laravel), and
 * `last_page` / `links.next` exact when the total is a whole number of pages ("`next` is `null`
 * on the last page").
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { baseFixture, useWorld, type Fixture } from '../helpers/world.js';

const ALICE_PROJECT = '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10';

/** Alice: 6 contacts in bot 10; in bot 12 contact 300 and the 40 contacts it referred. */
function fixture(): Fixture {
  const f = baseFixture() as Record<string, any>;
  f.bots.push({ id: 12, project_uuid: ALICE_PROJECT, name: 'Referral bot' });
  const contact = (id: number, bot: number, referrer_id?: number) => ({
    id,
    bot_id: bot,
    messenger: 'telegram',
    name: `C${id}`,
    telegram_id: String(9000 + id),
    referrer_id,
  });
  f.contacts = [
    ...Array.from({ length: 6 }, (_, i) => contact(100 + i, 10)),
    contact(300, 12),
    ...Array.from({ length: 40 }, (_, i) => contact(301 + i, 12, 300)),
  ];
  return f;
}

const w = useWorld(fixture);
let schemaId: string;

beforeAll(async () => {
  // 100 lists: two full pages of getListSchemas' fixed 50.
  for (let i = 0; i < 100; i++) {
    const r = await w.call('createListSchema', {
      name: `L${i}`,
      bot_id: 10,
      fields: [{ name: 'A', slug: 'a', type: 'string', is_required: false }],
    });
    expect(r.status).toBe(201);
    if (i === 0) schemaId = r.body.data.id;
  }
  for (let i = 0; i < 4; i++) expect((await w.call('addListItem', { schema_id: schemaId, data: { a: `r${i}` } })).status).toBe(201);
});

/** Each paged method with its other parameters, its page size and its total. */
const paged = (): Array<{ method: string; params: Record<string, unknown>; perPage: number; total: number }> => [
  { method: 'getContacts', params: { bot_id: 10, count: 2 }, perPage: 2, total: 6 },
  { method: 'getContacts', params: { bot_id: 10, count: 3 }, perPage: 3, total: 6 },
  { method: 'getContacts', params: { bot_id: 10, count: 6 }, perPage: 6, total: 6 },
  { method: 'getListSchemas', params: {}, perPage: 50, total: 100 },
  { method: 'getListItems', params: { schema_id: schemaId, limit: 2 }, perPage: 2, total: 4 },
  { method: 'getReferrals', params: { contact_id: 300 }, perPage: 20, total: 40 },
];

describe('"A page number that is not a positive integer counts as 1"', () => {
  it('page 0 and negative pages read page 1, in the query and in a JSON body', async () => {
    for (const { method, params } of paged()) {
      const one = await w.call(method, { ...params, page: 1 });
      expect(one.status, method).toBe(200);
      for (const page of [0, -1, '0', '-2']) {
        for (const verb of ['GET', 'POST']) {
          const r = await w.call(method, { ...params, page }, { verb });
          const where = `${method} ${verb} page=${page}`;
          expect(r.status, where).toBe(200);
          expect(r.body.meta.current_page, where).toBe(1);
          expect(r.body.meta.from, where).toBe(1);
          expect(r.body.links.prev, where).toBeNull();
          expect(r.body.data, where).toEqual(one.body.data);
        }
      }
    }
  });
});

describe('a total that is a whole number of pages', () => {
  it('last_page is total / per_page; links.next points to the next page and is null on the last', async () => {
    for (const { method, params, perPage, total } of paged()) {
      const pages = total / perPage;
      const url = (p: number) => `${w.baseUrl}/${method}?page=${p}`;
      for (let page = 1; page <= pages; page++) {
        const r = await w.call(method, { ...params, page });
        const where = `${method} ${JSON.stringify(params)} page ${page}`;
        expect(r.body.meta, where).toMatchObject({
          current_page: page,
          last_page: pages,
          per_page: perPage,
          total,
          from: (page - 1) * perPage + 1,
          to: page * perPage,
        });
        expect(r.body.data, where).toHaveLength(perPage);
        expect(r.body.links, where).toEqual({
          first: url(1),
          last: url(pages),
          prev: page > 1 ? url(page - 1) : null,
          next: page < pages ? url(page + 1) : null,
        });
        if (r.body.meta.links) {
          // The page list of meta.links: one entry per page, then "Next »" with the same URL as links.next.
          const labels = r.body.meta.links.map((l: { label: string }) => l.label);
          expect(labels, where).toEqual(['&laquo; Previous', ...Array.from({ length: pages }, (_, i) => String(i + 1)), 'Next &raquo;']);
          expect(r.body.meta.links.at(-1).url, where).toBe(r.body.links.next);
        }
      }
      const past = await w.call(method, { ...params, page: pages + 1 });
      expect(past.body.data, `${method} past the end`).toEqual([]);
      expect(past.body.meta, `${method} past the end`).toMatchObject({ last_page: pages, from: null, to: null });
    }
  });

  it('no items at all: last_page 1, no next', async () => {
    const r = await w.call('getContacts', { bot_id: 20, count: 2 }, { key: 'bob-key' });
    expect(r.body.meta).toMatchObject({ total: 0, last_page: 1, current_page: 1, from: null, to: null });
    expect(r.body.links.next).toBeNull();
    expect(r.body.links.last).toBe(`${w.baseUrl}/getContacts?page=1`);
  });
});
