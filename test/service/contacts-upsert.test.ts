/** createOrUpdateContact over real HTTP, sentence by sentence of the spec. */
import { describe, expect, it } from 'vitest';
import { demoFixture, serveDb, useWorld } from '../helpers/world.js';

const DANA = { key: 'demo-dana-key' };
const OLEG = { key: 'demo-oleg-key' };

function fixture(): Record<string, unknown> {
  const f = demoFixture() as Record<string, any>;
  f.bots.push({ id: 15, project_uuid: '0b5c3f1e-2a4d-4e6f-8a9b-1c2d3e4f5a61', name: 'Old bot', deleted: true });
  return f;
}

const w = useWorld(fixture);

const upsert = (params: Record<string, unknown>, o: Record<string, unknown> = DANA) => w.call('createOrUpdateContact', params, o);
const subscribers = (bot: number) => w.store.projects.bot(bot)!.subscriber_count;
let next = 100;
/** A fresh telegram id. */
const tgId = () => 800000 + next++;

async function exported(id: number, bot: number) {
  const r = await w.call('getContacts', { bot_id: bot, limit: 1000 }, DANA);
  return r.body.data.find((c: { id: number }) => c.id === id);
}

describe('createOrUpdateContact: lookup, create, update', () => {
  it('"(none) → createOrUpdateContact, no contact found by messenger ID in the bot → contact exists, response 201"', async () => {
    const id = tgId();
    const r = await upsert({ bot_id: 11, messenger: 'telegram', telegram_id: id, name: 'Nina New' });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({ bot_id: 11, messenger: 'telegram', telegram_id: String(id), name: 'Nina New' });
    expect(await exported(r.body.data.id, 11)).toEqual(r.body.data);
  });

  it('"Response: {data: <contact>} with 201 when created and 200 when updated", in the contact shape', async () => {
    const id = tgId();
    const a = await upsert({ bot_id: 11, messenger: 'telegram', telegram_id: id, name: 'A' });
    const b = await upsert({ bot_id: 11, messenger: 'telegram', telegram_id: id, name: 'B' });
    expect([a.status, b.status]).toEqual([201, 200]);
    expect(Object.keys(b.body)).toEqual(['data']);
    expect(b.body.data.id).toBe(a.body.data.id);
    expect(Object.keys(b.body.data)).toEqual(Object.keys((await exported(a.body.data.id, 11)) as object));
  });

  it('"Methods: GET, POST"', async () => {
    const id = tgId();
    const r = await upsert(
      { bot_id: 11, messenger: 'telegram', telegram_id: id, name: 'Via GET', tags: ['a', 'b'] },
      { ...DANA, verb: 'GET' },
    );
    expect(r.status).toBe(201);
    expect(r.body.data.tags).toEqual(['a', 'b']);
    const f = await upsert({ bot_id: 11, messenger: 'telegram', telegram_id: id, name: 'Via form' }, { ...DANA, form: true });
    expect(f.status).toBe(200);
    expect(f.body.data.name).toBe('Via form');
  });

  it('"Looks up a contact in the bot by messenger ID (telegram_id, max_id, vk_id or viber_id); if found, updates it"', async () => {
    const cases = [
      [{ bot_id: 11, messenger: 'telegram', telegram_id: 700101 }, 1002],
      [{ bot_id: 12, messenger: 'max', max_id: 880002 }, 1007],
      [{ bot_id: 13, messenger: 'vk', vk_id: 990001 }, 1008],
      [{ bot_id: 14, messenger: 'viber', viber_id: 'vbr-AAA111==' }, 1009],
    ] as const;
    for (const [params, id] of cases) {
      const r = await upsert({ ...params, name: `Updated ${id}` });
      expect(r.status).toBe(200);
      expect(r.body.data).toMatchObject({ id, name: `Updated ${id}`, messenger: params.messenger });
    }
  });

  it('the lookup is "in the bot": the same messenger id in another bot makes a new contact there', async () => {
    const r = await upsert({ bot_id: 12, messenger: 'telegram', telegram_id: 700100, name: 'Anna elsewhere' });
    expect(r.status).toBe(201);
    expect(r.body.data.bot_id).toBe(12);
    expect(r.body.data.id).not.toBe(1001);
  });

  it('creates contacts of every messenger with their own fields: max, vk, viber', async () => {
    const max = await upsert({ bot_id: 12, messenger: 'max', max_id: 889001, max_username: 'mm', name: 'M' });
    expect(max.status).toBe(201);
    expect(max.body.data).toMatchObject({ max_user_id: 889001, max_username: 'mm', vk_user_id: null });
    expect(max.body.data).not.toHaveProperty('telegram_id');
    const vk = await upsert({ bot_id: 13, messenger: 'vk', vk_id: 999001, name: 'V' });
    expect(vk.body.data).toMatchObject({ vk_user_id: 999001, messenger: 'vk' });
    expect(vk.body.data).not.toHaveProperty('max_user_id');
    const viber = await upsert({ bot_id: 14, messenger: 'viber', viber_id: 'vbr-NEW', name: 'Vi', telegram_id: 5 });
    expect(viber.body.data).toMatchObject({ viber_id: 'vbr-NEW', vk_user_id: null });
    expect(viber.body.data).not.toHaveProperty('telegram_id');
  });

  it('a deleted contact is not found: the same id makes a new contact (ours)', async () => {
    const r = await upsert({ bot_id: 11, messenger: 'telegram', telegram_id: 700103, name: 'Gary again' });
    expect(r.status).toBe(201);
    expect(r.body.data.id).not.toBe(1004);
  });

  it('a preview contact is found and updated, and stays out of exports (ours)', async () => {
    const r = await upsert({ bot_id: 11, messenger: 'telegram', telegram_id: 700102, name: 'Still preview' });
    expect(r.status).toBe(200);
    expect(r.body.data.id).toBe(1003);
    expect(await exported(1003, 11)).toBeUndefined();
  });
});

describe('createOrUpdateContact: rules', () => {
  it('Rule 1: "On an existing contact name always changes"', async () => {
    const r = await upsert({ bot_id: 11, messenger: 'telegram', telegram_id: 700104, name: 'Quinn Renamed' });
    expect(r.body.data.name).toBe('Quinn Renamed');
    expect((await exported(1005, 11)).name).toBe('Quinn Renamed');
  });

  it('Rule 2: email, address, phone, telegram_username "change only when passed and non-empty; they cannot be cleared"', async () => {
    const base = { bot_id: 11, messenger: 'telegram', telegram_id: 700100 };
    for (const empty of [
      {},
      { email: '', address: '', phone: '', telegram_username: '' },
      { email: null, address: null, phone: null, telegram_username: null },
    ]) {
      const r = await upsert({ ...base, name: 'Anna Smith', ...empty });
      expect(r.status).toBe(200);
      expect(r.body.data).toMatchObject({ email: 'anna@example.com', phone: '447700900123', telegram_username: 'anna_s' });
    }
    const r = await upsert({
      ...base,
      name: 'Anna Smith',
      email: 'a2@example.com',
      address: '1 Main St',
      phone: '+15550001111',
      telegram_username: '@anna_new',
    });
    expect(r.body.data).toMatchObject({
      email: 'a2@example.com',
      address: '1 Main St',
      phone: '15550001111',
      telegram_username: 'anna_new',
    });
    const again = await upsert({ ...base, name: 'Anna Smith' });
    expect(again.body.data).toMatchObject({
      email: 'a2@example.com',
      address: '1 Main St',
      phone: '15550001111',
      telegram_username: 'anna_new',
    });
  });

  it('Rule 2: max_username changes only when passed and non-empty', async () => {
    const base = { bot_id: 12, messenger: 'max', max_id: 880001, name: 'Maria Ivanova' };
    expect((await upsert({ ...base, max_username: '' })).body.data.max_username).toBe('maria');
    expect((await upsert({ ...base, max_username: 'maria2' })).body.data.max_username).toBe('maria2');
    expect((await upsert(base)).body.data.max_username).toBe('maria2');
  });

  it('Rule 3: "tags, when passed, replace the whole set; [] removes all tags"', async () => {
    const base = { bot_id: 11, messenger: 'telegram', telegram_id: 720000, name: 'Guest 1' };
    expect((await upsert(base)).body.data.tags).toEqual(['guest']);
    expect((await upsert({ ...base, tags: ['x', 'y', 'x'] })).body.data.tags).toEqual(['x', 'y']);
    expect((await upsert(base)).body.data.tags).toEqual(['x', 'y']);
    expect((await upsert({ ...base, tags: ['z'] })).body.data.tags).toEqual(['z']);
    expect((await upsert({ ...base, tags: [] })).body.data.tags).toEqual([]);
    expect((await exported(1011, 11)).tags).toEqual([]);
  });

  it('Rule 4: "Contact variables are not touched"', async () => {
    const before = (await exported(1001, 11)).variables;
    expect(before.length).toBe(3);
    const r = await upsert({ bot_id: 11, messenger: 'telegram', telegram_id: 700100, name: 'Anna Smith', tags: [] });
    expect(r.body.data.variables).toEqual(before);
    expect(r.body.data.utm).toEqual({ utm_source: 'instagram', utm_campaign: 'spring' });
  });

  it('Rule 5: a new contact "appears in the bot\'s contact list with the first message Created from API and increases the bot\'s subscriber count"', async () => {
    const subs = subscribers(13);
    const count = (await w.call('getNumberOfContacts', { bot_id: 13 }, DANA)).body.count;
    const r = await upsert({ bot_id: 13, messenger: 'vk', vk_id: 995555, name: 'Vera' });
    expect(r.status).toBe(201);
    expect(subscribers(13)).toBe(subs + 1);
    expect((await w.call('getNumberOfContacts', { bot_id: 13 }, DANA)).body.count).toBe(count + 1);
    const conv = w.store.admin.conversation(r.body.data.id)!;
    // "nothing is sent to the contact": the one entry is the note, recorded as incoming.
    expect(conv.map((m) => [m.direction, m.text])).toEqual([['in', 'Created from API']]);
    // An update adds no message and no subscriber.
    await upsert({ bot_id: 13, messenger: 'vk', vk_id: 995555, name: 'Vera 2' });
    expect(subscribers(13)).toBe(subs + 1);
    expect(w.store.admin.conversation(r.body.data.id)!.length).toBe(1);
  });

  it('Rule 6: "phone in the response has no +"', async () => {
    const r = await upsert({ bot_id: 11, messenger: 'telegram', telegram_id: tgId(), name: 'P', phone: '+447700900999' });
    expect(r.body.data.phone).toBe('447700900999');
  });

  it('"phone … + followed by digits, 9 to 16 characters including the plus"; "null equals not passing it"', async () => {
    const make = (phone: unknown) => upsert({ bot_id: 11, messenger: 'telegram', telegram_id: tgId(), name: 'P', phone });
    expect((await make('+12345678')).body.data.phone).toBe('12345678');
    expect((await make('+123456789012345')).body.data.phone).toBe('123456789012345');
    expect((await make(null)).status).toBe(201);
    for (const bad of ['+1234567', '+1234567890123456', '12345678901', '+1234-56789', '+ 12345678', 12345678901]) {
      const r = await make(bad);
      expect(r.status).toBe(422);
      expect(Object.keys(r.body.errors)).toEqual(['phone']);
    }
    expect((await make('+1')).body.errors.phone).toEqual(['The phone field format is invalid.']);
  });

  it('"email … Email": an invalid one gives 422', async () => {
    const r = await upsert({ bot_id: 11, messenger: 'telegram', telegram_id: tgId(), name: 'E', email: 'not an email' });
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual({ email: ['The email field must be a valid email address.'] });
  });
});

describe('createOrUpdateContact: errors and limits', () => {
  it('404 "bot_id does not exist or belongs to another account; error on bot_id" (also deleted or invited bots)', async () => {
    for (const [bot_id, key] of [
      [21, DANA],
      [999999, DANA],
      [15, DANA],
      [13, OLEG],
    ] as const) {
      const r = await upsert({ bot_id, messenger: 'telegram', telegram_id: tgId(), name: 'N' }, key);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ message: 'Bot not found.', error: 'Bot not found.', errors: { bot_id: ['Bot not found.'] } });
    }
    expect(subscribers(21)).toBe(1);
  });

  it('422 "Messenger ID for the chosen messenger missing"', async () => {
    const cases = [
      ['telegram', 'telegram_id'],
      ['max', 'max_id'],
      ['vk', 'vk_id'],
      ['viber', 'viber_id'],
    ] as const;
    for (const [messenger, key] of cases) {
      const r = await upsert({ bot_id: 11, messenger, name: 'N', telegram_id: messenger === 'telegram' ? null : 1 });
      expect(r.status).toBe(422);
      expect(r.body.errors).toEqual({ [key]: [`The ${key.replace('_', ' ')} field is required when messenger is ${messenger}.`] });
    }
  });

  it('422 lists every failing field at once: messenger id, phone and email', async () => {
    const r = await upsert({ bot_id: 11, messenger: 'telegram', name: 'N', phone: 'x', email: 'y' });
    expect(r.status).toBe(422);
    expect(Object.keys(r.body.errors)).toEqual(['telegram_id', 'phone', 'email']);
    expect(r.body.message).toBe('The telegram id field is required when messenger is telegram. (and 2 more errors)');
  });

  it('"bot_id, messenger, name … required"; messenger is "telegram, max, viber or vk" (not web)', async () => {
    const r = await upsert({});
    expect(r.status).toBe(422);
    expect(Object.keys(r.body.errors)).toEqual(['bot_id', 'messenger', 'name']);
    const web = await upsert({ bot_id: 11, messenger: 'web', name: 'W' });
    expect(web.body.errors).toEqual({ messenger: ['The selected messenger is invalid.'] });
  });

  it('Limits: "tags … up to 100, each up to 255 characters"', async () => {
    const base = { bot_id: 11, messenger: 'telegram', telegram_id: tgId(), name: 'T' };
    const ok = await upsert({ ...base, tags: Array.from({ length: 100 }, (_, i) => `t${i}`.padEnd(255, 'x')) });
    expect(ok.status).toBe(201);
    expect(ok.body.data.tags.length).toBe(100);
    const many = await upsert({ ...base, tags: Array.from({ length: 101 }, (_, i) => `t${i}`) });
    expect(many.body.errors).toEqual({ tags: ['The tags field must not have more than 100 items.'] });
    const long = await upsert({ ...base, tags: ['ok', 'é'.repeat(256)] });
    expect(long.body.errors).toEqual({ 'tags.1': ['The tags.1 field must not be greater than 255 characters.'] });
  });

  it('Limits: "telegram_username, max_username, viber_id, address up to 255 characters"', async () => {
    const s255 = 'я'.repeat(255);
    const s256 = 'я'.repeat(256);
    const ok = await upsert({ bot_id: 14, messenger: 'viber', viber_id: s255, name: 'L', address: s255 });
    expect(ok.status).toBe(201);
    const bad = await upsert({
      bot_id: 14,
      messenger: 'viber',
      viber_id: s256,
      name: 'L',
      address: s256,
      telegram_username: s256,
      max_username: s256,
    });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['address', 'max_username', 'telegram_username', 'viber_id']);
  });

  it('Versioning: "max_user_id and vk_user_id are accepted as aliases of max_id and vk_id"', async () => {
    const max = await upsert({ bot_id: 12, messenger: 'max', max_user_id: 880001, name: 'Maria Ivanova' });
    expect(max.status).toBe(200);
    expect(max.body.data.id).toBe(1006);
    const vk = await upsert({ bot_id: 13, messenger: 'vk', vk_user_id: 990001, name: 'Ivan Sidorov' });
    expect(vk.status).toBe(200);
    expect(vk.body.data.id).toBe(1008);
    const fresh = await upsert({ bot_id: 13, messenger: 'vk', vk_user_id: '997777', name: 'New VK' });
    expect(fresh.status).toBe(201);
    expect(fresh.body.data.vk_user_id).toBe(997777);
  });
});

describe('createOrUpdateContact: simultaneous calls', () => {
  it('two simultaneous calls for the same messenger id make one contact, never two (also over two connections)', async () => {
    // A second service with its own connection to the same file, as a second process has.
    const second = await serveDb(w.dbFile);
    try {
      const id = tgId();
      const params = { bot_id: 11, messenger: 'telegram', telegram_id: id, name: 'Racer' };
      const subs = subscribers(11);
      const viaSecond = () => second.call('createOrUpdateContact', params, DANA);
      const results = await Promise.all([upsert(params), viaSecond(), upsert(params), viaSecond()]);
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 200, 200, 201]);
      expect(new Set(results.map((r) => r.body.data.id)).size).toBe(1);
      expect(subscribers(11)).toBe(subs + 1);
      const all = await w.call('getContacts', { bot_id: 11, limit: 1000 }, DANA);
      expect(all.body.data.filter((c: { telegram_id: string }) => c.telegram_id === String(id)).length).toBe(1);
    } finally {
      await second.close();
    }
  });
});
