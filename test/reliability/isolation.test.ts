/**
 * Isolation sweep: for every method, another owner's ids (bot, contact, account, list, record,
 * project) never read or change anything, and a team member invited to a project reaches
 * nothing in it. Also: keys are hashed at rest and never appear in logs or error texts.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METHODS } from '../../src/api/catalog.js';
import type { MethodDef } from '../../src/api/define.js';
import type { Db } from '../../src/store/db.js';
import { baseFixture, startWorld, type World } from '../helpers/world.js';

const SECRET = 'AliceSecret';

function dump(db: Db): string {
  const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as {
    name: string;
  }[];
  return tables.map(({ name }) => `${name}:${(db.prepare(`SELECT * FROM "${name}"`).all() as object[]).map((r) => JSON.stringify(r)).sort().join('\n')}`).join('\n');
}

let w: World;
const ids: Record<string, unknown> = {};

beforeAll(async () => {
  const f = baseFixture();
  w = await startWorld({
    ...f,
    // Bob's project, which Alice is a member of, gets a bot and a contact of its own.
    bots: [...(f.bots as object[]), { id: 30, project_uuid: '5a2b3c4d-1111-4c1e-9a55-0b6f3d2e1a11', name: 'Bob second bot' }],
    contacts: [
      {
        id: 100,
        bot_id: 10,
        messenger: 'telegram',
        name: `${SECRET} contact`,
        telegram_id: '5001',
        phone: '79001234567',
        tags: [`${SECRET}-tag`],
        variables: [{ name: 'utm_source', value: `${SECRET}-utm`, type: 0 }],
      },
      { id: 101, bot_id: 10, messenger: 'telegram', name: `${SECRET} referral`, telegram_id: '5002', referrer_id: 100 },
      { id: 300, bot_id: 30, messenger: 'telegram', name: 'BobSecret contact', telegram_id: '7001' },
    ],
    accounts: [
      { id: 500, contact_id: 100, currency: 'USD', amount: 1000 },
      { id: 700, contact_id: 300, currency: 'USD', amount: 1000 },
    ],
  });
  ids.bot_id = 10;
  ids.contact_id = 100;
  ids.account_id = 500;
  ids.project_uuid = '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10';
  const list = await w.call('createListSchema', {
    name: `${SECRET} list`,
    bot_id: 10,
    fields: [{ name: 'Title', slug: 'title', type: 'string', is_required: false }],
  });
  if (list.status === 201) {
    ids.schema_id = list.body.data.id;
    const item = await w.call('addListItem', { schema_id: ids.schema_id, data: { title: `${SECRET} record` } });
    if (item.status === 201) ids.item_id = item.body.data.id;
  }
});
afterAll(() => w.close());

/** Plausible values for every other parameter, so the call gets past validation to the access check. */
const FILL: Record<string, unknown> = {
  name: 'Probe',
  currency: 'EUR',
  amount: 1,
  description: 'probe',
  messenger: 'telegram',
  telegram_id: 5001,
  fields: [{ name: 'A', slug: 'a', type: 'string' }],
  field: { name: 'B', slug: 'b', type: 'string' },
  slug: 'title',
  data: { title: 'x' },
  text: 'hello',
  value: 'v',
  url: 'http://localhost/s/abc',
  contact_external_id: '5001',
  id: 1,
};

function paramsFor(def: MethodDef, foreign: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(def.params)) {
    if (k in foreign) out[k] = foreign[k];
    else if (k in FILL) out[k] = FILL[k];
  }
  if ('bot_id' in def.params && 'project_uuid' in def.params) delete out.project_uuid;
  return out;
}

const foreignMethods = (METHODS as readonly MethodDef[]).filter((m) => m.name !== 'getMe' && m.name !== 'getBalance');

describe('another owner reaches nothing', () => {
  it.each(foreignMethods.map((m) => [m.name, m] as const))('%s with Alice’s ids, called by Bob', async (name, def) => {
    const before = dump(w.store.db);
    const r = await w.call(name, paramsFor(def, ids), { key: 'bob-key', verb: 'POST' });
    expect(r.status, r.text.slice(0, 300)).toBeLessThan(500);
    expect(r.text, `${name} leaked Alice's data`).not.toContain(SECRET);
    if (r.status < 300 && !def.annotations.readOnlyHint) {
      // A write that "succeeded" must have acted on Bob's own things only.
      expect(r.text).not.toContain(SECRET);
    }
    if (r.status >= 400 || def.annotations.readOnlyHint) expect(dump(w.store.db)).toBe(before);
    if (Object.keys(ids).some((k) => k in def.params) && !['getContacts', 'getNumberOfContacts'].includes(name)) {
      expect([403, 404, 422], `${name}: ${r.text.slice(0, 200)}`).toContain(r.status);
    }
  });

  it('getContacts and getNumberOfContacts with a foreign bot give an empty answer, no error', async () => {
    const list = await w.call('getContacts', { bot_id: 10 }, { key: 'bob-key' });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([]);
    const count = await w.call('getNumberOfContacts', { bot_id: 10 }, { key: 'bob-key' });
    expect(count.body).toEqual({ count: 0 });
  });

  it('a team member invited to a project reaches nothing in it', async () => {
    const bobIds = { bot_id: 30, contact_id: 300, account_id: 700, project_uuid: '5a2b3c4d-1111-4c1e-9a55-0b6f3d2e1a11' };
    for (const def of foreignMethods) {
      const before = dump(w.store.db);
      const r = await w.call(def.name, paramsFor(def, bobIds), { key: 'alice-key' });
      expect(r.text, def.name).not.toContain('BobSecret');
      if (r.status >= 400 || def.annotations.readOnlyHint) expect(dump(w.store.db), def.name).toBe(before);
    }
    const lists = await w.call('getListSchemas', {}, { key: 'alice-key' });
    if (lists.status === 200) expect(lists.body.data.every((l: { project: string }) => l.project !== bobIds.project_uuid)).toBe(true);
  });
});

describe('secrets', () => {
  it('keys are hashed at rest: the database file holds no key in clear text', () => {
    w.store.db.pragma('wal_checkpoint(TRUNCATE)');
    const raw = readFileSync(w.dbFile).toString('latin1');
    for (const key of ['alice-key', 'bob-key', 'fran-key', 'blocked-key']) expect(raw).not.toContain(key);
  });

  it('a wrong key, or an api_token in the URL, never shows up in an error text', async () => {
    const r = await w.call('getMe', { api_token: 'leaky-token-123' }, { key: null, verb: 'GET' });
    expect(r.status).toBe(401);
    expect(r.text).not.toContain('leaky-token-123');
    const v = await w.call('addFundsToContactAccount', { api_token: 'alice-key' }, { key: null });
    expect(v.status).toBe(422);
    expect(v.text).not.toContain('alice-key');
    expect(Object.keys(v.body.errors)).not.toContain('api_token');
  });
});
