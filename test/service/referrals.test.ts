/** Referrals (extended): getReferrers (nested to depth, or flat), getReferrals (paged, tag filters), getCountReferrals. */
import { describe, expect, it } from 'vitest';
import { extendedFixture } from '../helpers/extended.js';
import { useWorld } from '../helpers/world.js';

// Chain: 300 ← 301 ← 302 ← 303 (303 was referred by 302, ...). 300 referred 301 and 25 more (310..334).
const w = useWorld(() => {
  const f = extendedFixture();
  const c = (id: number, referrer_id: number | null, extra: Record<string, unknown> = {}) => ({
    id,
    bot_id: 10,
    messenger: 'telegram',
    name: `C${id}`,
    telegram_id: `t${id}`,
    created_at: '2026-02-01T00:00:00Z',
    referrer_id,
    ...extra,
  });
  const referrals = [];
  for (let i = 0; i < 25; i++) referrals.push(c(310 + i, 300, { tags: i % 5 === 0 ? ['promo'] : i % 5 === 1 ? ['vip'] : [] }));
  f.contacts = [
    ...(f.contacts as object[]),
    c(300, null, { tags: ['vip'] }),
    c(301, 300),
    c(302, 301),
    c(303, 302),
    ...referrals,
    c(340, 300, { deleted: true, tags: ['promo'] }),
    c(341, 300, { preview: true, tags: ['promo'] }),
    { id: 210, bot_id: 20, messenger: 'telegram', name: 'Bob ref', telegram_id: 'b210', referrer_id: 200 },
  ];
  return f;
});

const node = (id: number) => ({ id, name: `C${id}`, messenger: 'telegram', created_at: '2026-02-01T00:00:00+00:00' });

describe('getReferrers', () => {
  it('default depth 1: {data: {id, name, messenger, created_at, referrer: {…}}}', async () => {
    const res = await w.call('getReferrers', { contact_id: 303 }, { verb: 'GET' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { ...node(303), referrer: node(302) } });
  });

  it('nested to depth; the chain end shows referrer: null', async () => {
    const res = await w.call('getReferrers', { contact_id: 303, depth: 2 });
    expect(res.body.data).toEqual({ ...node(303), referrer: { ...node(302), referrer: node(301) } });
    const all = await w.call('getReferrers', { contact_id: 303, depth: 10 });
    expect(all.body.data).toEqual({
      ...node(303),
      referrer: { ...node(302), referrer: { ...node(301), referrer: { ...node(300), referrer: null } } },
    });
    expect((await w.call('getReferrers', { contact_id: 300 })).body.data).toEqual({ ...node(300), referrer: null });
  });

  it('is_flat=1: a flat list, nearest first', async () => {
    const res = await w.call('getReferrers', { contact_id: 303, depth: 3, is_flat: 1 }, { verb: 'GET' });
    expect(res.body).toEqual({ data: [node(302), node(301), node(300)] });
    expect((await w.call('getReferrers', { contact_id: 300, is_flat: '1' })).body).toEqual({ data: [] });
  });

  it('depth 1-10, is_flat 0 or 1 (422)', async () => {
    const res = await w.call('getReferrers', { contact_id: 303, depth: 11, is_flat: 'yes' });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      depth: ['The depth field must be between 1 and 10.'],
      is_flat: ['The is flat field must be true or false.'],
    });
    expect((await w.call('getReferrers', { contact_id: 303, depth: 0 })).status).toBe(422);
  });

  it('missing 404, deleted 404, foreign 403', async () => {
    expect((await w.call('getReferrers', { contact_id: 999 })).status).toBe(404);
    expect((await w.call('getReferrers', { contact_id: 340 })).status).toBe(404);
    expect((await w.call('getReferrers', { contact_id: 210 })).status).toBe(403);
  });
});

describe('getReferrals', () => {
  it('paged {data: [{id, name, messenger, created_at}], links, meta}: direct referrals only, live ones', async () => {
    const res = await w.call('getReferrals', { contact_id: 300 }, { verb: 'GET' });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(20);
    expect(res.body.data[0]).toEqual(node(301));
    expect(res.body.meta).toMatchObject({ current_page: 1, last_page: 2, per_page: 20, total: 26, from: 1, to: 20 });
    expect(res.body.meta.path).toBe(`${w.baseUrl}/getReferrals`);
    expect(res.body.links.next).toBe(`${w.baseUrl}/getReferrals?page=2`);
    const p2 = await w.call('getReferrals', { contact_id: 300, page: 2 });
    expect(p2.body.data.map((c: { id: number }) => c.id)).toEqual([329, 330, 331, 332, 333, 334]);
    expect((await w.call('getReferrals', { contact_id: 303 })).body.meta.total).toBe(0);
  });

  it('filters[tag_name]: one or a list (any of them)', async () => {
    const one = await w.call('getReferrals', { contact_id: 300, 'filters[tag_name]': 'promo' }, { verb: 'GET' });
    expect(one.body.data.map((c: { id: number }) => c.id)).toEqual([310, 315, 320, 325, 330]);
    const list = await w.call('getReferrals', { contact_id: 300, filters: { tag_name: ['promo', 'vip'] } });
    expect(list.body.meta.total).toBe(10);
    expect((await w.call('getReferrals', { contact_id: 300, filters: { tag_name: 'none' } })).body.meta.total).toBe(0);
  });

  it("filters[tag_id]: a tag id is the tag's position in getBotTags, from 1", async () => {
    const tags = (await w.call('getBotTags', { bot_id: 10 })).body.data as string[];
    const promoId = tags.indexOf('promo') + 1;
    const vipId = tags.indexOf('vip') + 1;
    const res = await w.call('getReferrals', { contact_id: 300, filters: { tag_id: String(promoId) } }, { form: true });
    expect(res.body.data.map((c: { id: number }) => c.id)).toEqual([310, 315, 320, 325, 330]);
    const both = await w.call('getReferrals', { contact_id: 300, filters: { tag_id: [promoId, vipId] } });
    expect(both.body.meta.total).toBe(10);
  });

  it('an unknown tag id or a bad tag name is 422 on filters.*', async () => {
    const res = await w.call('getReferrals', { contact_id: 300, filters: { tag_id: 999, tag_name: [{ a: 1 }] } });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(['filters.tag_name', 'filters.tag_id']);
    expect((await w.call('getReferrals', { contact_id: 300, filters: 'vip' })).status).toBe(422);
  });

  it('missing 404, deleted 404, foreign 403', async () => {
    expect((await w.call('getReferrals', { contact_id: 999 })).status).toBe(404);
    expect((await w.call('getReferrals', { contact_id: 340 })).status).toBe(404);
    expect((await w.call('getReferrals', { contact_id: 200 })).status).toBe(403);
  });
});

describe('getCountReferrals', () => {
  it('→ {count}, with the same filters', async () => {
    const res = await w.call('getCountReferrals', { contact_id: 300 }, { verb: 'GET' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ count: 26 });
    expect((await w.call('getCountReferrals', { contact_id: 300, filters: { tag_name: 'vip' } })).body).toEqual({ count: 5 });
    expect((await w.call('getCountReferrals', { contact_id: 302 })).body).toEqual({ count: 1 });
  });

  it('missing 404, foreign 403, contact_id required 422', async () => {
    expect((await w.call('getCountReferrals', { contact_id: 999 })).status).toBe(404);
    expect((await w.call('getCountReferrals', { contact_id: 200 })).status).toBe(403);
    expect((await w.call('getCountReferrals', {})).status).toBe(422);
    expect((await w.call('getCountReferrals', { contact_id: 300, filters: { tag_id: 'abc' } })).status).toBe(422);
  });
});
