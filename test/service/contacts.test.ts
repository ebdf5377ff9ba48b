/** Contacts over real HTTP: the contact shape, getContacts and getNumberOfContacts, as the spec words them. */
import { describe, expect, it } from 'vitest';
import { demoFixture, useWorld } from '../helpers/world.js';

const DANA = { key: 'demo-dana-key' };
const OLEG = { key: 'demo-oleg-key' };
const ts = (iso: string) => Date.parse(iso) / 1000;

/** The demo world plus a web contact, a deleted bot, odd utm names and a media variable. */
function fixture(): Record<string, unknown> {
  const f = demoFixture() as Record<string, any>;
  f.bots.push({ id: 15, project_uuid: '0b5c3f1e-2a4d-4e6f-8a9b-1c2d3e4f5a61', name: 'Old bot', deleted: true });
  f.contacts.push(
    {
      id: 1060,
      bot_id: 14,
      messenger: 'web',
      name: 'Web Wendy',
      created_at: '2026-04-20T10:00:00Z',
      avatar: 'https://example.com/w.png',
      unsubscribed_at: '2026-04-21T00:00:00Z',
      tags: ['site'],
      variables: [
        { name: 'utm_b', value: 'x', type: 0 },
        { name: 'utm_10', value: 'ten', type: 0 },
        { name: 'photo', value: 'https://files.example.com/p.jpg', type: 1, deletable: true },
        { name: 'utm_2', value: 'two', type: 0 },
      ],
    },
    { id: 1061, bot_id: 15, messenger: 'telegram', name: 'Of a deleted bot', telegram_id: '730000', created_at: '2026-04-20T11:00:00Z' },
  );
  return f;
}

const w = useWorld(fixture);

/** Every id the holder can export, via offset paging. */
async function allIds(params: Record<string, unknown> = {}, key = DANA): Promise<number[]> {
  const ids: number[] = [];
  for (let offset = 0; ; offset += 1000) {
    const r = await w.call('getContacts', { ...params, offset, limit: 1000 }, key);
    expect(r.status).toBe(200);
    ids.push(...r.body.data.map((c: { id: number }) => c.id));
    if (r.body.data.length < 1000) return ids;
  }
}

async function contact(id: number, bot: number) {
  const r = await w.call('getContacts', { bot_id: bot, limit: 1000 }, DANA);
  return r.body.data.find((c: { id: number }) => c.id === id);
}

describe('the contact shape', () => {
  it('"Every method that returns contacts returns them in this shape": fields in the spec order', async () => {
    const c = await contact(1001, 11);
    expect(Object.keys(c)).toEqual([
      'id',
      'bot_id',
      'phone',
      'email',
      'name',
      'address',
      'messenger',
      'utm',
      'avatar',
      'telegram_id',
      'telegram_username',
      'vk_user_id',
      'created_at',
      'unsubscribed_at',
      'tags',
      'variables',
    ]);
    expect(c).toMatchObject({
      id: 1001,
      bot_id: 11,
      phone: '447700900123',
      email: 'anna@example.com',
      name: 'Anna Smith',
      address: null,
      messenger: 'telegram',
      avatar: null,
      telegram_id: '700100',
      telegram_username: 'anna_s',
      vk_user_id: null,
      created_at: '2026-03-02T08:00:00+00:00',
      unsubscribed_at: null,
      tags: ['vip', 'latte'],
    });
  });

  it('"telegram_id … Telegram contacts only"; "max_user_id … MAX contacts only"; "viber_id … Viber contacts only"', async () => {
    const max = await contact(1006, 12);
    expect(Object.keys(max)).toContain('max_user_id');
    expect(max).toMatchObject({ max_user_id: 880001, max_username: 'maria', vk_user_id: null });
    expect(max).not.toHaveProperty('telegram_id');
    expect(max).not.toHaveProperty('telegram_username');
    expect(max).not.toHaveProperty('viber_id');
    const viber = await contact(1009, 14);
    expect(viber.viber_id).toBe('vbr-AAA111==');
    for (const k of ['telegram_id', 'telegram_username', 'max_user_id', 'max_username']) expect(viber).not.toHaveProperty(k);
    const tg = await contact(1002, 11);
    expect(typeof tg.telegram_id).toBe('string');
    expect(tg.telegram_username).toBeNull();
    for (const k of ['max_user_id', 'max_username', 'viber_id']) expect(tg).not.toHaveProperty(k);
  });

  it('"vk_user_id … Present for every contact; null for non-VK contacts"', async () => {
    const all = (await w.call('getContacts', { limit: 1000 }, DANA)).body.data as Array<Record<string, unknown>>;
    for (const c of all) {
      expect(c).toHaveProperty('vk_user_id');
      if (c.messenger !== 'vk') expect(c.vk_user_id).toBeNull();
    }
    expect((await contact(1008, 13)).vk_user_id).toBe(990001);
    expect((await contact(1008, 13)).address).toBe('Tverskaya 1, Moscow');
  });

  it('"messenger … One of telegram, max, viber, vk, web (website chat)"', async () => {
    const all = (await w.call('getContacts', { limit: 1000 }, DANA)).body.data as Array<{ messenger: string }>;
    expect(new Set(all.map((c) => c.messenger))).toEqual(new Set(['telegram', 'max', 'viber', 'vk', 'web']));
    const web = await contact(1060, 14);
    for (const k of ['telegram_id', 'telegram_username', 'max_user_id', 'max_username', 'viber_id']) expect(web).not.toHaveProperty(k);
    expect(web.vk_user_id).toBeNull();
    expect(web.avatar).toBe('https://example.com/w.png');
  });

  it('"utm … variables whose names start with utm_, as name to value", in their order even for number-like names', async () => {
    const r = await w.call('getContacts', { bot_id: 14, limit: 1000 }, DANA);
    expect(r.text).toContain('"utm":{"utm_b":"x","utm_10":"ten","utm_2":"two"}');
    expect((await contact(1001, 11)).utm).toEqual({ utm_source: 'instagram', utm_campaign: 'spring' });
  });

  it('"When there are none it is an empty array []"', async () => {
    const r = await w.call('getContacts', { bot_id: 12 }, DANA);
    expect(r.body.data.length).toBe(2);
    for (const c of r.body.data) expect(c.utm).toEqual([]);
    expect(r.text).toContain('"utm":[]');
  });

  it('"variables": objects with id, name, value, type, schema_id, deletable, payload; "type" 0 text … 1 image', async () => {
    const web = await contact(1060, 14);
    expect(web.variables.map((v: { name: string }) => v.name)).toEqual(['utm_b', 'utm_10', 'photo', 'utm_2']);
    for (const v of web.variables) expect(Object.keys(v)).toEqual(['id', 'name', 'value', 'type', 'schema_id', 'deletable', 'payload']);
    const photo = web.variables.find((v: { name: string }) => v.name === 'photo');
    expect(photo).toMatchObject({ type: 1, deletable: true, schema_id: null, payload: null });
    expect(typeof photo.value).toBe('string');
    expect(web.variables[0]).toMatchObject({ name: 'utm_b', value: 'x', type: 0, deletable: false });
  });

  it('"created_at … ISO 8601, UTC"; "unsubscribed_at … null means subscribed"; "tags … array of strings"', async () => {
    const quinn = await contact(1005, 11);
    expect(quinn.created_at).toBe('2026-03-05T12:00:00+00:00');
    expect(quinn.unsubscribed_at).toBe('2026-04-02T10:00:00+00:00');
    expect((await contact(1001, 11)).unsubscribed_at).toBeNull();
    expect((await contact(1060, 14)).tags).toEqual(['site']);
    expect((await contact(1002, 11)).tags).toEqual([]);
  });

  it('"Contacts created while testing a bot in preview are excluded from exports and counts" (and deleted ones)', async () => {
    const ids = await allIds();
    expect(ids).not.toContain(1003);
    expect(ids).not.toContain(1004);
    const page = await w.call('getContacts', { bot_id: 11, count: 500 }, DANA);
    expect(page.body.data.map((c: { id: number }) => c.id)).not.toContain(1003);
    expect((await w.call('getNumberOfContacts', { bot_id: 11 }, DANA)).body).toEqual({ count: 43 });
  });
});

describe('getContacts', () => {
  it('"Methods: GET, POST"', async () => {
    const get = await w.call('getContacts', { bot_id: 12 }, { ...DANA, verb: 'GET' });
    const post = await w.call('getContacts', { bot_id: 12 }, DANA);
    const form = await w.call('getContacts', { bot_id: 12 }, { ...DANA, form: true });
    expect(get.status).toBe(200);
    expect(get.body.data).toEqual(post.body.data);
    expect(form.body.data).toEqual(post.body.data);
  });

  it('"Returns contacts of the key holder\'s bots sorted by ascending id"; invited projects are not reachable', async () => {
    const ids = await allIds();
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(ids.length).toBe(48);
    expect(ids).not.toContain(1010); // Oleg's bot
    // Oleg is a team member of Dana's school project: its bots 13 and 14 stay out of his export.
    expect(await allIds({}, OLEG)).toEqual([1010]);
  });

  it('contacts of a deleted bot never appear, with or without bot_id', async () => {
    expect(await allIds()).not.toContain(1061);
    expect(await allIds({ bot_id: 15 })).toEqual([]);
    expect((await w.call('getNumberOfContacts', { bot_id: 15 }, DANA)).body).toEqual({ count: 0 });
  });

  it('"bot_id … Only this bot; without it, all the holder\'s bots"', async () => {
    expect(await allIds({ bot_id: 12 })).toEqual([1006, 1007]);
    expect(await allIds({ bot_id: 14 })).toEqual([1009, 1060]);
  });

  it('"A bot_id that does not exist or is not the holder\'s gives no error: the list is empty"', async () => {
    for (const bot_id of [21, 999999]) {
      const page = await w.call('getContacts', { bot_id }, DANA);
      expect(page.status).toBe(200);
      expect(page.body.data).toEqual([]);
      expect(page.body.meta.total).toBe(0);
      const off = await w.call('getContacts', { bot_id, offset: 0 }, DANA);
      expect(off.body).toEqual({ data: [], meta: { offset: 0, limit: 100, total: 0 } });
    }
  });

  it('"count … Per page, 1 to 500, default 20"', async () => {
    const d = await w.call('getContacts', {}, DANA);
    expect(d.body.data.length).toBe(20);
    expect(d.body.meta.per_page).toBe(20);
    expect((await w.call('getContacts', { count: 500 }, DANA)).body.data.length).toBe(48);
    expect((await w.call('getContacts', { count: 1 }, DANA)).body.data.length).toBe(1);
    for (const count of [0, 501, 'abc']) {
      const r = await w.call('getContacts', { count }, DANA);
      expect(r.status).toBe(422);
      expect(Object.keys(r.body.errors)).toEqual(['count']);
    }
    expect((await w.call('getContacts', { count: 501 }, DANA)).body.errors.count).toEqual(['The count field must be between 1 and 500.']);
  });

  it('"page … From 1, default 1"', async () => {
    const all = await allIds();
    const p1 = await w.call('getContacts', { count: 10 }, DANA);
    const p2 = await w.call('getContacts', { count: 10, page: 2 }, DANA);
    expect(p1.body.meta.current_page).toBe(1);
    expect(p1.body.data.map((c: { id: number }) => c.id)).toEqual(all.slice(0, 10));
    expect(p2.body.data.map((c: { id: number }) => c.id)).toEqual(all.slice(10, 20));
  });

  it('Rule 2: page paging answers data, links (next null on the last page) and meta with current_page, from, last_page, links, path, per_page, to, total', async () => {
    const r = await w.call('getContacts', { count: 20, page: 3, bot_id: 11 }, DANA);
    const path = `${w.baseUrl}/getContacts`;
    expect(Object.keys(r.body)).toEqual(['data', 'links', 'meta']);
    expect(r.body.links).toEqual({ first: `${path}?page=1`, last: `${path}?page=3`, prev: `${path}?page=2`, next: null });
    expect(Object.keys(r.body.meta)).toEqual(['current_page', 'from', 'last_page', 'links', 'path', 'per_page', 'to', 'total']);
    expect(r.body.meta).toMatchObject({ current_page: 3, from: 41, last_page: 3, path, per_page: 20, to: 43, total: 43 });
    expect(r.body.meta.links[0]).toEqual({ url: `${path}?page=2`, label: '&laquo; Previous', active: false });
    expect(r.body.meta.links.at(-1)).toEqual({ url: null, label: 'Next &raquo;', active: false });
    expect(r.body.meta.links.find((l: { active: boolean }) => l.active).label).toBe('3');
  });

  it('Rule 2: "The URLs in links carry only page; the other parameters must be sent again"', async () => {
    const r = await w.call('getContacts', { count: 5, bot_id: 11, date_from: 0, with: 'tags' }, { ...DANA, verb: 'GET' });
    const urls = [...Object.values(r.body.links), ...r.body.meta.links.map((l: { url: string | null }) => l.url)].filter(Boolean);
    expect(urls.length).toBeGreaterThan(3);
    for (const u of urls as string[]) expect(new URL(u).search).toMatch(/^\?page=\d+$/);
  });

  it('page paging past the end: empty data, from and to null', async () => {
    const r = await w.call('getContacts', { bot_id: 12, page: 5 }, DANA);
    expect(r.body.data).toEqual([]);
    expect(r.body.meta).toMatchObject({ current_page: 5, from: null, to: null, last_page: 1, total: 2 });
  });

  it('Rule 1: "When offset or limit is passed, offset paging is used and page and count are ignored"', async () => {
    const all = await allIds();
    const a = await w.call('getContacts', { offset: 3, page: 2, count: 2 }, DANA);
    expect(a.body.meta).toEqual({ offset: 3, limit: 100, total: 48 });
    expect(a.body.data.map((c: { id: number }) => c.id)).toEqual(all.slice(3));
    const b = await w.call('getContacts', { limit: 4, page: 3, count: 2 }, DANA);
    expect(b.body.meta).toEqual({ offset: 0, limit: 4, total: 48 });
    expect(b.body.data.map((c: { id: number }) => c.id)).toEqual(all.slice(0, 4));
    // Ignored means not even checked: a count out of its range changes nothing here.
    const c = await w.call('getContacts', { offset: 0, limit: 2, count: 9999, page: 'x' }, DANA);
    expect(c.status).toBe(200);
    expect(c.body.meta).toEqual({ offset: 0, limit: 2, total: 48 });
  });

  it('Rule 3: offset paging answers data and meta with offset, limit, total; no links', async () => {
    const r = await w.call('getContacts', { bot_id: 12, offset: 1, limit: 1 }, DANA);
    expect(Object.keys(r.body)).toEqual(['data', 'meta']);
    expect(r.body.meta).toEqual({ offset: 1, limit: 1, total: 2 });
    expect(r.body.data.map((c: { id: number }) => c.id)).toEqual([1007]);
  });

  it('Rule 3: "The export is complete when data has fewer items than limit, or offset + limit reaches meta.total"', async () => {
    const all = await allIds();
    const got: number[] = [];
    let offset = 0;
    for (let guard = 0; guard < 20; guard++) {
      const r = await w.call('getContacts', { offset, limit: 7 }, DANA);
      got.push(...r.body.data.map((c: { id: number }) => c.id));
      if (r.body.data.length < 7 || offset + 7 >= r.body.meta.total) break;
      offset += 7;
    }
    expect(got).toEqual(all);
    expect(got.length).toBe(48);
  });

  it('"offset … from 0"; "limit … 1 to 1000, default 100"', async () => {
    const r = await w.call('getContacts', { offset: 0 }, DANA);
    expect(r.body.meta.limit).toBe(100);
    expect((await w.call('getContacts', { limit: 1000 }, DANA)).status).toBe(200);
    const bad = await w.call('getContacts', { offset: -1, limit: 1001 }, DANA);
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual({
      offset: ['The offset field must be at least 0.'],
      limit: ['The limit field must be between 1 and 1000.'],
    });
    expect((await w.call('getContacts', { limit: 0 }, DANA)).status).toBe(422);
    const beyond = await w.call('getContacts', { offset: 5000 }, DANA);
    expect(beyond.body).toEqual({ data: [], meta: { offset: 5000, limit: 100, total: 48 } });
  });

  it('"date_from … created at or after"; "date_to … created at or before" this Unix time in seconds (inclusive)', async () => {
    const from = ts('2026-03-06T19:00:00Z'); // 1006
    const to = ts('2026-03-08T09:00:00Z'); // 1008
    expect(await allIds({ date_from: from, date_to: to })).toEqual([1006, 1007, 1008]);
    expect(await allIds({ date_from: from + 1, date_to: to - 1 })).toEqual([1007]);
    expect(await allIds({ date_to: ts('2026-03-02T15:00:00Z') })).toEqual([1001, 1002]);
    const page = await w.call('getContacts', { date_from: from, date_to: to, count: 2 }, DANA);
    expect(page.body.meta.total).toBe(3);
    expect(page.body.data.map((c: { id: number }) => c.id)).toEqual([1006, 1007]);
    const off = await w.call('getContacts', { date_from: from, date_to: to, offset: 1, limit: 1 }, DANA);
    expect(off.body).toMatchObject({ meta: { offset: 1, limit: 1, total: 3 } });
    expect(off.body.data[0].id).toBe(1007);
    expect((await w.call('getNumberOfContacts', { date_from: from, date_to: to }, DANA)).body).toEqual({ count: 3 });
  });

  it('"with … Accepted for compatibility; changes nothing (tags and variables are always returned)"', async () => {
    const plain = await w.call('getContacts', { bot_id: 11 }, DANA);
    for (const withValue of ['tags', 'variables,tags', ['tags', 'variables'], '']) {
      const r = await w.call('getContacts', { bot_id: 11, with: withValue }, DANA);
      expect(r.status).toBe(200);
      expect(r.text).toBe(plain.text);
    }
    expect(plain.body.data[0].variables.length).toBe(3);
  });

  it('Rule 5: "new contacts land at the end; date_to caps a growing export"', async () => {
    const cap = Math.floor(Date.now() / 1000) - 1;
    const before = await allIds({ date_to: cap });
    const made = await w.call('createOrUpdateContact', { bot_id: 12, messenger: 'max', max_id: 881234, name: 'Newcomer' }, DANA);
    expect(made.status).toBe(201);
    const after = await allIds();
    expect(after.at(-1)).toBe(made.body.data.id);
    expect(await allIds({ date_to: cap })).toEqual(before);
  });
});

describe('getNumberOfContacts', () => {
  it('"Response 200: {count: <integer>}, with no data wrapper"; GET and POST', async () => {
    const post = await w.call('getNumberOfContacts', { bot_id: 12 }, DANA);
    expect(post.status).toBe(200);
    expect(post.body).toEqual({ count: (await allIds({ bot_id: 12 })).length });
    const get = await w.call('getNumberOfContacts', {}, { ...DANA, verb: 'GET' });
    expect(get.body).toEqual({ count: (await allIds()).length });
  });

  it('"bot_id, date_from, date_to (all optional, as in getContacts)": a foreign bot counts 0, filters combine', async () => {
    expect((await w.call('getNumberOfContacts', { bot_id: 21 }, DANA)).body).toEqual({ count: 0 });
    expect((await w.call('getNumberOfContacts', { bot_id: 21 }, OLEG)).body).toEqual({ count: 1 });
    const at = ts('2026-03-02T15:00:00Z');
    expect((await w.call('getNumberOfContacts', { bot_id: 11, date_from: at, date_to: at }, DANA)).body).toEqual({ count: 1 });
    expect((await w.call('getNumberOfContacts', { date_from: 'x' }, DANA)).status).toBe(422);
  });

  it('date_from / date_to given as a date: 422 naming the Unix seconds the date means, for getContacts and getNumberOfContacts', async () => {
    for (const method of ['getContacts', 'getNumberOfContacts']) {
      const r = await w.call(method, { date_from: '2024-01-01', date_to: '2026-03-02T15:00:00Z' }, DANA);
      expect(r.status, method).toBe(422);
      expect(r.body, method).toEqual({
        message: 'The date from field must be an integer: Unix seconds, e.g. 1704067200 for 2024-01-01T00:00:00Z. (and 1 more error)',
        errors: {
          date_from: ['The date from field must be an integer: Unix seconds, e.g. 1704067200 for 2024-01-01T00:00:00Z.'],
          date_to: [`The date to field must be an integer: Unix seconds, e.g. ${ts('2026-03-02T15:00:00Z')} for 2026-03-02T15:00:00Z.`],
        },
      });
    }
    expect((await w.call('getNumberOfContacts', { date_from: 'x' }, DANA)).body.errors).toEqual({
      date_from: ['The date from field must be an integer.'],
    });
  });
});

describe('contact methods behind the key', () => {
  it('"A missing, wrong or regenerated key gives 401"; "without [Pro]: 402"', async () => {
    for (const method of ['getContacts', 'getNumberOfContacts', 'createOrUpdateContact']) {
      expect((await w.call(method, {}, { key: null })).body).toEqual({ error: 'unauthorized' });
      expect((await w.call(method, {}, { key: 'wrong' })).status).toBe(401);
      const free = await w.call(method, {}, { key: 'demo-fran-key' });
      expect(free.status).toBe(402);
      expect(free.body.code).toBe('pro_required');
    }
  });
});
