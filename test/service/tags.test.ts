/** Tags (extended): getBotTags, getContactTags, attachTagToContact, detachTagFromContact, over real HTTP. */
import { describe, expect, it } from 'vitest';
import { extendedFixture } from '../helpers/extended.js';
import { useWorld } from '../helpers/world.js';

const w = useWorld(extendedFixture);

describe('getContactTags', () => {
  it('answers {data: ["name", ...]} in the contact\'s order', async () => {
    const res = await w.call('getContactTags', { contact_id: 100 }, { verb: 'GET' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: ['vip', 'new'] });
    expect((await w.call('getContactTags', { contact_id: 103 })).body).toEqual({ data: [] });
  });

  it('missing 404, deleted 404, foreign 403, contact_id required 422', async () => {
    expect((await w.call('getContactTags', { contact_id: 999 })).status).toBe(404);
    expect((await w.call('getContactTags', { contact_id: 101 })).status).toBe(404);
    expect((await w.call('getContactTags', { contact_id: 200 })).status).toBe(403);
    const bad = await w.call('getContactTags', {});
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors)).toEqual(['contact_id']);
  });
});

describe('attachTagToContact / detachTagFromContact', () => {
  it("attaching an unknown name creates the tag → the contact's tags after the change", async () => {
    const res = await w.call('attachTagToContact', { contact_id: 100, name: 'gold' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: ['vip', 'new', 'gold'] });
    // Attaching a tag the contact has changes nothing.
    expect((await w.call('attachTagToContact', { contact_id: 100, name: 'vip' })).body).toEqual({ data: ['vip', 'new', 'gold'] });
    expect((await w.call('getBotTags', { bot_id: 10 })).body.data).toContain('gold');
  });

  it("detaching → the contact's tags after the change; detaching an absent one is not an error", async () => {
    const res = await w.call('detachTagFromContact', { contact_id: 100, name: 'new' }, { form: true });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: ['vip', 'gold'] });
    const again = await w.call('detachTagFromContact', { contact_id: 100, name: 'new' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ data: ['vip', 'gold'] });
  });

  it('the tags show in the contact view', async () => {
    const res = await w.call('getContacts', { bot_id: 10 });
    const ann = (res.body.data as Array<{ id: number; tags: string[] }>).find((c) => c.id === 100)!;
    expect(ann.tags).toEqual(['vip', 'gold']);
  });

  it('are POST only (405)', async () => {
    expect((await w.call('attachTagToContact', { contact_id: 100, name: 'x' }, { verb: 'GET' })).status).toBe(405);
    expect((await w.call('detachTagFromContact', { contact_id: 100, name: 'x' }, { verb: 'GET' })).status).toBe(405);
  });

  it('name required, up to 255 characters (422)', async () => {
    for (const m of ['attachTagToContact', 'detachTagFromContact']) {
      const res = await w.call(m, { contact_id: 100 });
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual({ name: ['The name field is required.'] });
      const long = await w.call(m, { contact_id: 100, name: 't'.repeat(256) });
      expect(long.body.errors).toEqual({ name: ['The name field must not be greater than 255 characters.'] });
    }
  });

  it("missing 404, deleted 404, foreign 403; Bob's contact keeps its tags", async () => {
    for (const m of ['attachTagToContact', 'detachTagFromContact']) {
      expect((await w.call(m, { contact_id: 999, name: 'x' })).status).toBe(404);
      expect((await w.call(m, { contact_id: 101, name: 'x' })).status).toBe(404);
      expect((await w.call(m, { contact_id: 200, name: 'bobtag' })).status).toBe(403);
    }
    expect((await w.call('getContactTags', { contact_id: 200 }, { key: 'bob-key' })).body).toEqual({ data: ['bobtag'] });
  });
});

describe('getBotTags', () => {
  it('answers {data: ["name", ...]}: all tags used in the bot, in order of first use', async () => {
    const res = await w.call('getBotTags', { bot_id: 10 }, { verb: 'GET' });
    expect(res.status).toBe(200);
    // 'new' was detached from its only contact but stays listed: positions (tag ids) are stable.
    expect(res.body).toEqual({ data: ['vip', 'new', 'ghost', 'gold'] });
  });

  it('tags set by createOrUpdateContact join the list', async () => {
    await w.call('createOrUpdateContact', { bot_id: 10, messenger: 'telegram', telegram_id: 5555, name: 'Neo', tags: ['fresh'] });
    expect((await w.call('getBotTags', { bot_id: 10 })).body.data).toEqual(['vip', 'new', 'ghost', 'gold', 'fresh']);
  });

  it('missing 404, deleted bot 404, foreign 403, bot_id required 422', async () => {
    expect((await w.call('getBotTags', { bot_id: 999 })).status).toBe(404);
    expect((await w.call('getBotTags', { bot_id: 11 })).status).toBe(404);
    expect((await w.call('getBotTags', { bot_id: 20 })).status).toBe(403);
    const bad = await w.call('getBotTags', { bot_id: 'ten' });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual({ bot_id: ['The bot id field must be an integer.'] });
  });
});
