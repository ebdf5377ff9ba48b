/**
 * Isolation sweep: for every method, another owner's ids (bot, contact, account, list, record,
 * project, short link) get the spec's answer for another account's things (403, or the 404 or
 * empty answer the spec names), show nothing and change nothing; a team member invited to a
 * project reaches nothing in it either. The set-up checks that every one of those things
 * exists, so a refusal is never just a missing id. Also: keys are hashed at rest and never
 * appear in logs or error texts.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { METHODS } from '../../../src/api/catalog.js';
import type { MethodDef } from '../../../src/api/define.js';
import { dumpStore, TEST_STORE } from '../../helpers/store.js';
import { ANN, baseFixture, useWorld } from '../../helpers/world.js';

const ALICE_PROJECT = '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10';

const SECRET = 'AliceSecret';

const BOB_PROJECT = '5a2b3c4d-1111-4c1e-9a55-0b6f3d2e1a11';

const w = useWorld(() => {
  const f = baseFixture();
  return {
    ...f,
    // Bob's project, which Alice is a member of, gets a bot and a contact of its own.
    bots: [...(f.bots as object[]), { id: 30, project_uuid: BOB_PROJECT, name: 'Bob second bot' }],
    contacts: [
      {
        ...ANN,
        name: `${SECRET} contact`,
        phone: '79001234567',
        tags: [`${SECRET}-tag`],
        variables: [
          { name: 'utm_source', value: `${SECRET}-utm`, type: 0 },
          { name: 'photo', value: `https://files.example.com/${SECRET}.jpg`, type: 1 },
        ],
      },
      { id: 101, bot_id: 10, messenger: 'telegram', name: `${SECRET} referral`, telegram_id: '5002', referrer_id: 100 },
      {
        id: 300,
        bot_id: 30,
        messenger: 'telegram',
        name: 'BobSecret contact',
        telegram_id: '7001',
        tags: ['BobSecret-tag'],
        variables: [{ name: 'photo', value: 'https://files.example.com/BobSecret.jpg', type: 1 }],
      },
      { id: 301, bot_id: 30, messenger: 'telegram', name: 'BobSecret referral', telegram_id: '7002', referrer_id: 300 },
    ],
    accounts: [
      { id: 500, contact_id: 100, currency: 'USD', amount: 1000 },
      { id: 700, contact_id: 300, currency: 'USD', amount: 1000 },
    ],
  };
});

/** The ids of one owner's things, each made and checked in the set-up. */
type Ids = Record<string, unknown>;
let alice: Ids;
let bob: Ids;

/** A list with a record, and the short link of a media variable: made by `key`, every step checked. */
async function own(key: string, secret: string, bot: number, contact: number): Promise<Ids> {
  const list = await w.call(
    'createListSchema',
    { name: `${secret} list`, bot_id: bot, fields: [{ name: 'Title', slug: 'title', type: 'string', is_required: false }] },
    { key },
  );
  expect(list.status, list.text).toBe(201);
  const item = await w.call('addListItem', { schema_id: list.body.data.id, data: { title: `${secret} record` } }, { key });
  expect(item.status, item.text).toBe(201);
  const vars = await w.call('getContactVariables', { contact_id: contact }, { key });
  expect(vars.status, vars.text).toBe(200);
  const link = (vars.body.data as Array<{ name: string; value: string }>).find((v) => v.name === 'photo')!.value;
  expect(link).toMatch(/^http:\/\/localhost\/s\//);
  return { schema_id: list.body.data.id, item_id: item.body.data.id, url: link };
}

beforeAll(async () => {
  alice = { bot_id: 10, contact_id: 100, account_id: 500, project_uuid: ALICE_PROJECT, ...(await own('alice-key', SECRET, 10, 100)) };
  bob = { bot_id: 30, contact_id: 300, account_id: 700, project_uuid: BOB_PROJECT, ...(await own('bob-key', 'BobSecret', 30, 300)) };
});

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
  contact_external_id: '5001',
  id: 1,
};

function paramsFor(def: MethodDef, foreign: Ids): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(def.params)) {
    if (k in foreign) out[k] = foreign[k];
    else if (k in FILL) out[k] = FILL[k];
  }
  if ('bot_id' in def.params && 'project_uuid' in def.params) delete out.project_uuid;
  return out;
}

const foreignMethods = (METHODS as readonly MethodDef[]).filter((m) => m.name !== 'getMe' && m.name !== 'getBalance');

/**
 * What a call on another account's things answers, by the spec: 403 (another account's bot,
 * contact, account, list, record: "Every method acts only on the key holder's own bots and
 * contacts (403 for another account's …)"), except createOrUpdateContact's 404 on bot_id
 * ("bot_id does not exist or belongs to another account"), getContacts and getNumberOfContacts'
 * empty answers ("A bot_id that … is not the holder's gives no error: the list is empty"), and
 * getListSchemas, which lists the holder's own lists only.
 */
const ANSWER: Record<string, number> = { createOrUpdateContact: 404, getContacts: 200, getNumberOfContacts: 200, getListSchemas: 200 };

/** Call `def` as `key` on `foreign`'s ids: the spec's answer, nothing of theirs shown, nothing changed. */
async function probe(def: MethodDef, key: string, foreign: Ids, secret: string): Promise<void> {
  const before = dumpStore(w.store);
  const r = await w.call(def.name, paramsFor(def, foreign), { key });
  const where = `${def.name}: ${r.text.slice(0, 200)}`;
  expect(r.status, where).toBe(ANSWER[def.name] ?? 403);
  if (r.status === 403) expect(Object.keys(r.body), where).toEqual(['error']);
  if (r.status === 404) expect(Object.keys(r.body.errors), where).toEqual(['bot_id']);
  expect(r.text, `${def.name} showed another account's data`).not.toContain(secret);
  expect(dumpStore(w.store), `${def.name} changed the database`).toBe(before);
}

const each = foreignMethods.map((m) => [m.name, m] as const);

describe('another owner reaches nothing', () => {
  it.each(each)('%s with Alice’s ids, called by Bob', (_, def) => probe(def, 'bob-key', alice, SECRET));

  it.each(each)('%s with Bob’s ids, called by Alice, a team member of his project', (_, def) => probe(def, 'alice-key', bob, 'BobSecret'));

  it("createListSchema in another account's project, even one the holder was invited to: 403", async () => {
    const fields = [{ name: 'A', slug: 'a', type: 'string' }];
    expect((await w.call('createListSchema', { name: 'X', project_uuid: ALICE_PROJECT, fields }, { key: 'bob-key' })).status).toBe(403);
    expect((await w.call('createListSchema', { name: 'X', project_uuid: BOB_PROJECT, fields }, { key: 'alice-key' })).status).toBe(403);
  });

  it('getContacts and getNumberOfContacts with a foreign bot give an empty answer, no error', async () => {
    const list = await w.call('getContacts', { bot_id: 10 }, { key: 'bob-key' });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([]);
    const count = await w.call('getNumberOfContacts', { bot_id: 10 }, { key: 'bob-key' });
    expect(count.body).toEqual({ count: 0 });
  });

  it("getListSchemas lists the holder's own lists only, not those of a project he was invited to", async () => {
    const lists = await w.call('getListSchemas', {}, { key: 'alice-key' });
    expect(lists.status).toBe(200);
    expect(lists.body.data.map((l: { project: string }) => l.project)).toEqual([ALICE_PROJECT]);
  });
});

describe('secrets', () => {
  it('keys are hashed at rest: the database holds no key in clear text', () => {
    // A SQLite file is read raw (free pages too); a PostgreSQL database, every row of it.
    if (TEST_STORE === 'sqlite') w.sqlite.db.pragma('wal_checkpoint(TRUNCATE)');
    const raw = TEST_STORE === 'sqlite' ? readFileSync(w.dbFile).toString('latin1') : dumpStore(w.store);
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
