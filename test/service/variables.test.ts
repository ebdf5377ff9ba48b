/** Contact variables (extended): getContactVariables, setContactVariable, deleteContactVariable, over real HTTP. */
import { describe, expect, it } from 'vitest';
import { extendedFixture } from '../helpers/extended.js';
import { useWorld } from '../helpers/world.js';

const w = useWorld(extendedFixture);

async function contact(id: number) {
  const res = await w.call('getContacts', { bot_id: 10, count: 500 });
  return (res.body.data as Array<Record<string, any>>).find((c) => c.id === id)!;
}

describe('getContactVariables', () => {
  it('answers {data: [{id, name, value, deletable}]}, oldest first; a media variable shows a short link', async () => {
    const res = await w.call('getContactVariables', { contact_id: 100 }, { verb: 'GET' });
    expect(res.status).toBe(200);
    const data = res.body.data as Array<Record<string, unknown>>;
    expect(data.map((v) => Object.keys(v))).toEqual([
      ['id', 'name', 'value', 'deletable'],
      ['id', 'name', 'value', 'deletable'],
      ['id', 'name', 'value', 'deletable'],
    ]);
    expect(data.map((v) => [v.name, v.deletable])).toEqual([
      ['utm_source', false],
      ['photo', false],
      ['city', false],
    ]);
    expect(data[0]!.value).toBe('ads');
    expect(data[1]!.value).toMatch(/^http:\/\/localhost\/s\/\d+-[A-Za-z0-9_-]{22}$/);
  });

  it("missing contact 404, deleted contact 404, contact of a deleted bot 404, another account's 403", async () => {
    expect((await w.call('getContactVariables', { contact_id: 999 })).status).toBe(404);
    expect((await w.call('getContactVariables', { contact_id: 101 })).status).toBe(404);
    expect((await w.call('getContactVariables', { contact_id: 110 })).status).toBe(404);
    expect((await w.call('getContactVariables', { contact_id: 200 })).status).toBe(403);
  });

  it('contact_id is required and an integer (422)', async () => {
    const res = await w.call('getContactVariables', {});
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ contact_id: ['The contact id field is required.'] });
    expect((await w.call('getContactVariables', { contact_id: 'x' })).body.errors).toEqual({
      contact_id: ['The contact id field must be an integer.'],
    });
  });
});

describe('setContactVariable', () => {
  it('creates the variable if the contact lacks it, deletable 0 by default → {data: {id, name, value, deletable}}', async () => {
    const res = await w.call('setContactVariable', { contact_id: 103, name: 'size', value: 'M' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { id: expect.any(Number), name: 'size', value: 'M', deletable: false } });
    const again = await w.call('setContactVariable', { contact_id: 103, name: 'size', value: 'L', deletable: 1 }, { form: true });
    expect(again.body.data).toEqual({ id: res.body.data.id, name: 'size', value: 'L', deletable: true });
    const list = await w.call('getContactVariables', { contact_id: 103 });
    expect(list.body.data).toEqual([again.body.data]);
  });

  it("a utm_* variable shows in the contact's utm at once", async () => {
    await w.call('setContactVariable', { contact_id: 103, name: 'utm_campaign', value: 'spring' });
    expect((await contact(103)).utm).toEqual({ utm_campaign: 'spring' });
    await w.call('setContactVariable', { contact_id: 100, name: 'utm_source', value: 'mail' });
    expect((await contact(100)).utm).toEqual({ utm_source: 'mail' });
  });

  it('createOrUpdateContact still never touches variables', async () => {
    const before = (await w.call('getContactVariables', { contact_id: 103 })).body.data;
    const up = await w.call('createOrUpdateContact', { bot_id: 10, messenger: 'vk', vk_id: 777, name: 'Vic 2', tags: [] });
    expect(up.status).toBe(200);
    expect((await w.call('getContactVariables', { contact_id: 103 })).body.data).toEqual(before);
  });

  it('is POST only (405 for GET)', async () => {
    const res = await w.call('setContactVariable', { contact_id: 103, name: 'a', value: 'b' }, { verb: 'GET' });
    expect(res.status).toBe(405);
  });

  it('name and value required, deletable 0 or 1, name up to 255 (422)', async () => {
    const res = await w.call('setContactVariable', { contact_id: 103, deletable: 'yes' });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(['name', 'value', 'deletable']);
    const long = await w.call('setContactVariable', { contact_id: 103, name: 'n'.repeat(256), value: 'v' });
    expect(long.body.errors).toEqual({ name: ['The name field must not be greater than 255 characters.'] });
  });

  it('a media variable keeps its type, so its new value must be a URL (422 on value)', async () => {
    const res = await w.call('setContactVariable', { contact_id: 100, name: 'photo', value: 'not a url' });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(['value']);
  });

  it('missing 404, deleted 404, foreign 403', async () => {
    expect((await w.call('setContactVariable', { contact_id: 999, name: 'a', value: 'b' })).status).toBe(404);
    expect((await w.call('setContactVariable', { contact_id: 101, name: 'a', value: 'b' })).status).toBe(404);
    expect((await w.call('setContactVariable', { contact_id: 200, name: 'a', value: 'b' })).status).toBe(403);
    const bob = await w.call('getContactVariables', { contact_id: 200 }, { key: 'bob-key' });
    expect(bob.body.data.map((v: { name: string }) => v.name)).toEqual(['scan']);
  });
});

describe('deleteContactVariable', () => {
  it('deletes by name or by id → 204 with no body; the utm entry goes with it', async () => {
    await w.call('setContactVariable', { contact_id: 103, name: 'utm_term', value: 'x' });
    const byName = await w.call('deleteContactVariable', { contact_id: 103, name: 'utm_term' });
    expect(byName.status).toBe(204);
    expect(byName.text).toBe('');
    expect((await contact(103)).utm).toEqual({ utm_campaign: 'spring' });
    const v = await w.call('setContactVariable', { contact_id: 103, name: 'temp', value: 'x' });
    const byId = await w.call('deleteContactVariable', { contact_id: 103, id: v.body.data.id });
    expect(byId.status).toBe(204);
    const names = (await w.call('getContactVariables', { contact_id: 103 })).body.data.map((x: { name: string }) => x.name);
    expect(names).not.toContain('temp');
  });

  it('a variable the contact does not have → 404 on the key used', async () => {
    const res = await w.call('deleteContactVariable', { contact_id: 103, name: 'nope' });
    expect(res.status).toBe(404);
    expect(res.body.errors).toEqual({ name: ['Variable not found.'] });
    // Another contact's variable id is not this contact's.
    const other = (await w.call('getContactVariables', { contact_id: 100 })).body.data[0].id;
    const res2 = await w.call('deleteContactVariable', { contact_id: 103, id: other });
    expect(res2.status).toBe(404);
    expect(res2.body.errors).toEqual({ id: ['Variable not found.'] });
  });

  it('id or name is required (422 required_without)', async () => {
    const res = await w.call('deleteContactVariable', { contact_id: 103 });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      id: ['The id field is required when name is not present.'],
      name: ['The name field is required when id is not present.'],
    });
  });

  it("missing contact 404, foreign 403 (Bob's variable stays)", async () => {
    expect((await w.call('deleteContactVariable', { contact_id: 999, name: 'scan' })).status).toBe(404);
    expect((await w.call('deleteContactVariable', { contact_id: 200, name: 'scan' })).status).toBe(403);
    const bob = await w.call('getContactVariables', { contact_id: 200 }, { key: 'bob-key' });
    expect(bob.body.data).toHaveLength(1);
  });
});
