/**
 * The PostgreSQL store's parts so far, on a real throwaway PostgreSQL: the same answers as the
 * SQLite store for the same calls, migrations once however many instances start together, and
 * the state several instances share (keys, the rate limit's window, deprecations, the ledger)
 * shared, with the ledger exact under concurrent debits from two processes.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Service } from '../../src/service/pipeline.js';
import { ContactSearch } from '../../src/state/contact-query.js';
import type { StoreApi } from '../../src/store/store-api.js';
import { Store } from '../../src/store/index.js';
import { FixtureError, loadFixture } from '../../src/store/seed.js';
import { PgConnection } from '../../src/store/pg/connection.js';
import { MIGRATION_LOCK, migratePg, PgSchemaProblem, PG_MIGRATIONS } from '../../src/store/pg/migrations.js';
import { reindex } from '../../src/store/pg/search.js';
import { answerDetails } from '../../src/cli/search-wiring.js';
import { searchTokens } from '../../src/store/search-text.js';
import { PgStore } from '../../src/store/pg/index.js';
import { usePostgres } from '../helpers/postgres.js';
import { track } from '../helpers/temp.js';
import { readFileSync } from 'node:fs';
import { extendedFixture } from '../helpers/extended.js';
import { baseFixture, DEMO_FIXTURE, ROOT } from '../helpers/world.js';

const { server: pgServer, keep } = usePostgres();
const server = { database: () => pgServer().database() };

const T0 = '2026-01-01T00:00:00+00:00';
/** Rows both dialects take as they are: an owner's project, bot and two contacts. */
const WORLD = [
  `INSERT INTO projects (uuid, owner_id, name, created_at) VALUES ('p1', 1, 'P', '${T0}')`,
  `INSERT INTO bots (id, project_uuid, name, created_at) VALUES (7, 'p1', 'B', '${T0}')`,
  `INSERT INTO contacts (id, bot_id, messenger, name, created_at, created_ts) VALUES (11, 7, 'telegram', 'Ann', '${T0}', 1767225600)`,
  `INSERT INTO contacts (id, bot_id, messenger, name, created_at, created_ts) VALUES (12, 7, 'telegram', 'Ben', '${T0}', 1767225600)`,
];

/** The same calls on a store of either kind; everything they answer, in order. */
function script(
  store: Pick<StoreApi, 'owners' | 'settings' | 'balance' | 'contactAccounts' | 'audit' | 'rateWindows' | 'tx'>,
  world: (sql: string) => void,
): unknown[] {
  const out: unknown[] = [];
  const o1 = store.owners.insert({ name: 'Ann', email: 'ann@example.com', api_key: 'key-1', created_at: T0 });
  const o2 = store.owners.insert({ id: 40, name: 'Ben', plan: 'free', created_at: T0 });
  const o3 = store.owners.insert({ name: 'Cy', created_at: T0 });
  out.push(o1, o2, o3, store.owners.count(), store.owners.first(), store.owners.get(40), store.owners.get(99));
  out.push(store.owners.byKey('key-1')?.id, store.owners.byKey('key-2'), store.owners.setPlan(40, 'pro'), store.owners.setPlan(99, 'pro'));
  const key = store.owners.regenerateKey(o1)!;
  out.push(store.owners.byKey('key-1'), store.owners.byKey(key)?.id, store.owners.regenerateKey(99));
  out.push(store.owners.setBlocked(40, false), store.owners.get(40)?.blocked_at);
  store.settings.set('a', '1');
  store.settings.set('a', '2');
  store.settings.setDeprecation('getMe', '2027-01-01T00:00:00Z');
  out.push(store.settings.get('a'), store.settings.get('b'), store.settings.deprecation('getMe'), store.settings.deprecation('getBalance'));
  out.push(store.balance.set(o1, 500, 'EUR'), store.balance.get(o1), store.balance.get(99), store.balance.set(99, 1, 'USD'));

  for (const sql of WORLD) world(sql);
  const acc = store.contactAccounts;
  const usd = acc.open(11, 'USD', T0);
  out.push(usd, acc.open(11, 'USD', T0), acc.open(11, 'EUR', T0), acc.open(12, 'USD', T0));
  const id = (usd as { id: number }).id;
  out.push(store.tx(() => acc.move(id, 300, 300, 'Deposit via API', 'in', T0)));
  out.push(store.tx(() => acc.move(id, 120, -180, 'Debit via API', 'out', T0)));
  out.push(acc.get(id), acc.get(999), acc.byCurrency(11, 'EUR'), acc.byCurrency(11, 'GBP'), acc.listByContact(11), [
    ...acc.listByContacts([12, 11, 5]),
  ]);
  out.push(acc.removeEmpty(id), acc.removeEmpty((acc.byCurrency(11, 'EUR') as { id: number }).id), acc.listByContact(11));
  // An id is never given out twice: the next account gets a new one even after deletes.
  out.push(acc.open(11, 'EUR', T0));
  // A failed step rolls its transaction back whole.
  out.push(
    (() => {
      try {
        store.tx(() => {
          acc.move(id, 0, -120, 'Debit via API', 'all', T0);
          throw new Error('check failed');
        });
      } catch (e) {
        return (e as Error).message;
      }
    })(),
    acc.get(id)?.amount,
  );

  for (const [tool, contact] of [
    ['a', 11],
    ['b', null],
    ['a', 12],
  ] as const) {
    store.audit.append({
      at: T0,
      owner_id: o1,
      client: null,
      session: null,
      tool,
      arguments: { z: 1, a: 2 },
      contact_id: contact,
      status: 200,
      code: null,
    } as never);
  }
  out.push(
    store.audit.read({ limit: 2 }),
    store.audit.read({ tool: 'a', limit: 5 }),
    store.audit.read({ contact: 12, limit: 5 }),
    store.audit.read({ before: 2, limit: 5 }),
  );

  const win = (ms: number) => store.rateWindows.hit(o1, ms, 60_000, 3);
  out.push([1000, 2000, 3000, 4000, 60_999, 61_000, 61_001].map(win));
  return out;
}

type Parts = Pick<
  StoreApi,
  'owners' | 'projects' | 'contacts' | 'variables' | 'tags' | 'messages' | 'admin' | 'referrals' | 'directory' | 'contactAccounts' | 'tx'
>;

/** The same calls on the parts of a workspace (projects, bots, contacts and what hangs on them). */
function workspaceScript(store: Parts, world: (sql: string) => void): unknown[] {
  const out: unknown[] = [];
  const ann = store.owners.insert({ name: 'Ann', created_at: T0 });
  const ben = store.owners.insert({ name: 'Ben', created_at: T0 });
  const p1 = store.projects.insert({ uuid: 'p-1', owner_id: ann, name: 'One' });
  const p2 = store.projects.insert({ uuid: 'p-0', owner_id: ann, name: 'Zero' });
  store.projects.insert({ uuid: 'p-b2', owner_id: ben, name: 'Ben 2' });
  store.projects.insert({ uuid: 'p-b1', owner_id: ben, name: 'Ben 1' });
  store.projects.insertMember({ owner_id: ann, project_uuid: 'p-b2' });
  store.projects.insertMember({ owner_id: ann, project_uuid: 'p-b1' });
  const b1 = store.projects.insertBot({ project_uuid: p1, name: 'Bot 1' });
  const b2 = store.projects.insertBot({ id: 50, project_uuid: p2, name: 'Bot 50' });
  const b3 = store.projects.insertBot({ project_uuid: p2, name: 'Bot 51' });
  const gone = store.projects.insertBot({ project_uuid: p1, name: 'Gone', deleted: true });
  out.push(b1, b2, b3, gone, store.projects.get(p1), store.projects.get('none'), store.projects.bot(b2), store.projects.bot(999));
  out.push(
    store.projects.firstProject(ann),
    store.projects.firstProject(99),
    store.projects.ownerBotIds(ann),
    store.projects.deleteBot(b3),
    store.projects.deleteBot(b3),
  );

  const up = (externalId: string | number, name: string, extra: Partial<Parameters<Parts['contacts']['createOrUpdate']>[0]> = {}) =>
    store.contacts.createOrUpdate({ botId: b1, messenger: 'telegram', externalId, name, firstMessage: 'hello', now: T0, ...extra });
  out.push(up('100', 'Ann One', { phone: '+7 916 555-12-34', tags: ['vip', 'new', 'vip'] }));
  out.push(up('100', 'Ann Uno', { email: 'ann@example.com', username: 'ann', tags: ['new'] }));
  out.push(up(7001, 'Max Person', { messenger: 'max', username: 'maxp' }));
  out.push(up(9001, 'Vk Person', { messenger: 'vk', botId: b2, now: '2026-02-01T00:00:00+00:00' }));
  out.push(up('v-1', 'Viber Person', { messenger: 'viber', tags: ['old'] }));
  const ids = [1, 2, 3, 4, 5];
  out.push(store.contacts.access(1), store.contacts.access(99), store.contacts.rowsByIds(ids), [...store.contacts.tagsByContact(ids)]);
  out.push(
    store.contacts.count([b1, b2]),
    store.contacts.count([b1], { from: 0, to: 1 }),
    store.contacts.count([]),
    store.contacts.inTimeOrder(b1),
  );
  out.push(
    store.contacts.pageIds([b1, b2], 0, 2),
    store.contacts.pageIds([b1, b2], 2, 10),
    store.contacts.pageIds([b1, b2], 1, 10, { from: 1769904000 }),
    store.contacts.pageIds([b1], -1, 5),
  );

  out.push(
    store.variables.set(1, 'city', 'Riga', true),
    store.variables.set(1, 'zip', '1000', false),
    store.variables.set(1, 'city', 'Oslo', false),
  );
  out.push(
    store.variables.list(1),
    store.variables.byName(1, 'zip'),
    store.variables.byName(1, 'none'),
    store.variables.byId(2),
    store.variables.delete(2),
    store.variables.delete(2),
  );
  out.push([...store.contacts.variablesByContact([1, 2])]);

  store.tags.attach(2, 'blue');
  store.tags.attach(2, 'blue');
  store.tags.attach(1, 'red');
  store.tags.detach(1, 'new');
  store.tags.detach(1, 'absent');
  out.push([...store.contacts.tagsByContact([1, 2])], store.tags.botTags(b1), store.tags.botTags(b2));

  out.push(
    store.messages.findContact(b1, 'telegram', '100'),
    store.messages.findContact(b1, 'max', '7001'),
    store.messages.findContact(b1, 'telegram', '+7 916 555-12-34'),
  );
  out.push(store.messages.findContact(b1, 'telegram', '999'), store.messages.findContact(b2, 'vk', '9001'));
  store.messages.send({ contactId: 1, text: 'hi', image: null, file: 'f.pdf', now: T0 });
  out.push(store.admin.conversation(1), store.admin.conversation(99));

  world('UPDATE contacts SET referrer_id = 1 WHERE id IN (2, 3, 5)');
  out.push(
    store.referrals.contact(2),
    store.referrals.contact(99),
    store.referrals.count(1, null),
    store.referrals.count(1, ['old', 'blue']),
    store.referrals.page(1, null, 2, 1),
    store.referrals.page(1, ['maxp', 'old'], 5, 0),
  );

  const acc = store.contactAccounts.open(3, 'EUR', T0) as { id: number };
  store.contactAccounts.open(1, 'USD', T0);
  store.contactAccounts.open(2, 'USD', T0);
  store.tx(() => store.contactAccounts.move(acc.id, 50, 50, 'Deposit via API', 'x', T0));
  out.push(
    store.admin.journal(acc.id),
    store.admin.journal(99),
    store.admin.setAccountBlocked(acc.id, true),
    store.admin.setAccountBlocked(99, true),
  );
  out.push(store.directory.projects(ann), store.directory.projects(ben), store.directory.bots(ann), store.directory.currencies(ann));
  out.push(
    store.admin.deleteContact(3),
    store.admin.deleteContact(3),
    store.admin.deleteContact(99),
    store.projects.bot(b1)?.subscriber_count,
    store.contacts.count([b1]),
  );
  out.push(store.messages.findContact(b1, 'max', '7001'), up(7001, 'Max Again', { messenger: 'max' }));
  return out;
}

/** The same calls on lists and records: filters, sorts of every kind of value, a field deleted. */
function listScript(store: Pick<StoreApi, 'owners' | 'projects' | 'lists' | 'tx'>): unknown[] {
  const out: unknown[] = [];
  const ann = store.owners.insert({ name: 'Ann', created_at: T0 });
  const p = store.projects.insert({ uuid: 'p-1', owner_id: ann, name: 'One' });
  const bot = store.projects.insertBot({ project_uuid: p, name: 'Bot' });
  const field = (slug: string, type: string, extra: object = {}) => ({
    slug,
    name: slug,
    type,
    is_required: false,
    is_hidden: false,
    is_encryptable: false,
    ...extra,
  });
  const fields = [
    field('n', 'number'),
    field('s', 'string'),
    field('ok', 'boolean'),
    field('bot', 'bot'),
    field('who', 'contact'),
    field('secret', 'string', { is_encryptable: true }),
  ];
  store.lists.insert({ id: 'list-a', project_uuid: p, bot_id: bot, name: 'A', is_menu: false, fields, now: T0 });
  store.lists.insert({ id: 'list-b', project_uuid: p, bot_id: null, name: 'B', is_menu: true, fields: [], now: T0 });
  const a = store.lists.byId('list-a')!;
  out.push(a, store.lists.byId('none'), store.lists.ownerPage(ann, 1, 1), store.lists.ownerPage(99, 5, 0), store.lists.projectCount(p));
  const values: Record<string, unknown>[] = [
    { n: 10, s: 'b', ok: true, bot, who: 5 },
    { n: 2.5, s: 'B', ok: false, who: 6 },
    { n: null, s: 'a', ok: true, secret: 'sealed' },
    { s: 'ä', ok: true, bot: 99, n: 10 },
    { n: 'text', s: '10', bot: String(bot) },
    {},
  ];
  values.forEach((data, i) => store.lists.insertRecord({ id: `r${i}`, schema_seq: a.seq, data, now: `2026-01-0${6 - i}T00:00:00+00:00` }));
  const page = (q: Partial<Parameters<StoreApi['lists']['recordPage']>[0]>) => {
    const r = store.lists.recordPage({ schemaSeq: a.seq, order: 'id', desc: false, limit: 10, offset: 0, ...q });
    return [r.total, r.rows.map((x) => x.id)];
  };
  for (const [order, slug] of [['id'], ['created_at'], ['slug', 'n'], ['slug', 's'], ['slug', 'ok'], ['slug', 'none']] as const) {
    out.push(page({ order, slug }), page({ order, slug, desc: true }), page({ order, slug, limit: 2, offset: 1 }));
  }
  out.push(
    page({ filters: { ok: 1 } }),
    page({ filters: { ok: 0 } }),
    page({ filters: { n: 10 } }),
    page({ filters: { n: null } }),
    page({ filters: { s: '10', n: 'text' } }),
  );
  out.push(
    page({ bot: { slugs: ['bot'], id: bot } }),
    page({ contact: { slugs: ['who'], id: 6 } }),
    page({ contact: { slugs: ['who', 'n'], id: 10 } }),
  );
  out.push(store.lists.oneEncryptedValue(), store.lists.record('r1'), store.lists.record('none'));
  const r1 = store.lists.record('r1')!;
  store.lists.updateRecord(r1.seq, { s: 'changed', n: 1 }, T0);
  out.push(store.lists.record('r1'), store.lists.deleteRecord(r1.seq), store.lists.deleteRecord(r1.seq));
  out.push(
    store.lists.deleteField(a.seq, fields.slice(1), 'n', T0),
    page({}),
    store.lists.record('r3')?.data,
    store.lists.byId('list-a')?.fields,
  );
  store.lists.delete(store.lists.byId('list-b')!.seq);
  out.push(store.lists.projectCount(p));
  return out;
}

/** The same contacts written to either store, then the same searches: every hit, total and cap. */
function searchScript(store: Pick<StoreApi, 'owners' | 'projects' | 'contacts' | 'contactAccounts' | 'admin' | 'search'>): unknown[] {
  const ann = store.owners.insert({ name: 'Ann', created_at: T0 });
  const p = store.projects.insert({ uuid: 'p-1', owner_id: ann, name: 'One' });
  const [b1, b2] = [store.projects.insertBot({ project_uuid: p, name: 'B1' }), store.projects.insertBot({ project_uuid: p, name: 'B2' })];
  const people: Array<[number, 'telegram' | 'max' | 'vk' | 'viber', string | number, string, Record<string, string>]> = [
    [b1, 'telegram', '501', 'Анна Каренина', { phone: '+7 (916) 555-12-34', email: 'Anna.K@Example.com', username: 'annak' }],
    [b1, 'telegram', '502', "Seán O'Brien", { phone: '8 916 555 12 34', username: '@sean' }],
    [b1, 'max', 7001, 'Σοφία Παπαδοπούλου', { username: 'sofia', email: 'sofia@mail.gr' }],
    [b1, 'vk', 9001, 'Ｊｏｈｎ Ｓｍｉｔｈ', { phone: '12025550123' }],
    [b2, 'viber', 'vib-1', 'Anna Smith', { email: ' anna@x.org ' }],
    [b2, 'telegram', '503', 'José Álvarez-Núñez', { phone: '555-1234' }],
    [b1, 'telegram', '504', 'Annabelle Lee', {}],
    [b1, 'telegram', '505', 'Deleted Anna', { phone: '79165551234' }],
    [b2, 'telegram', '506', 'Ann 2nd', { email: 'a@b' }],
    [b1, 'telegram', '507', 'Фёдор Достоевский', { username: 'fedor' }],
    // A Viber id that is also a name's word: "smith" finds it by the id, then reads the names again.
    [b2, 'viber', 'smith', 'Viber Smith Fan', {}],
    // "al smith": the name that holds both words comes before the shorter one that has "al" as a handle.
    [b2, 'telegram', '509', 'Smith', { username: 'al' }],
    [b2, 'telegram', '510', 'Al Smith Jones', {}],
  ];
  for (const [botId, messenger, externalId, name, extra] of people) {
    store.contacts.createOrUpdate({ botId, messenger, externalId, name, firstMessage: 'hi', now: T0, ...extra });
  }
  store.admin.deleteContact(8);
  // An update reindexes: the old name no longer finds it, the new one does.
  store.contacts.createOrUpdate({ botId: b1, messenger: 'telegram', externalId: '504', name: 'Bella Lee', firstMessage: 'hi', now: T0 });
  const queries = [
    // A Viber id reads as words too: found by the id, then the words read again for more names.
    'vib-1',
    'al smith',
    'anna',
    'Анна',
    'каренина',
    'ann',
    'an',
    'a',
    'obrien',
    "o'brien",
    'brien',
    'sean',
    '@sean',
    'sofia',
    'σοφια',
    'john',
    'smith',
    'jose',
    'alvarez',
    'nunez',
    'федор',
    'фед',
    '5551234',
    '+7 916 555-12-34',
    '89165551234',
    '555-1234',
    '12025550123',
    '1234',
    '501',
    '7001',
    'vib-1',
    '1',
    '3',
    'anna.k@example.com',
    'ANNA@X.ORG',
    'annak',
    '@fedor',
    'a@b',
    'annabelle',
    'bella',
    'lee',
    'deleted',
    'ann 2nd',
    '2nd',
    'anna smith',
    // Prefixes longer than the index keeps as terms (8 characters), alone and with other words.
    'достоевск',
    'παπαδοπουλ',
    'παπαδοπουλου σοφ',
    'anna smi',
    'smi anna',
    // A long prefix whose first six letters are a kept prefix of a token it is not the start of:
    // the prefix term leads, and each of its rows is still checked for the whole word.
    'достоевскиx',
    'παπαδοπουλε σοφ',
    'ann 2',
    'x',
    'nobody',
    '   ',
  ];
  return queries.flatMap((q) => [q, searched(store, q, [b1, b2], 5), searched(store, q, [b2], 2)]);
}

/**
 * A search's hits, total and cap, and what its answer shows of each hit (name, tags, accounts)
 * and the bots' count, read as localSearch reads them (answerDetails): PostgreSQL's come with a
 * query of words or from its own statement, SQLite's from the store's reads, and must say the same.
 */
function searched(store: Pick<StoreApi, 'contacts' | 'contactAccounts' | 'search'>, q: string, bots: number[], limit: number) {
  const { details: given, ...r } = new ContactSearch(store.search).search(q, bots, limit);
  const ids = r.hits.map((h) => h.id);
  const { rows, tags, accounts, listed } = answerDetails(store, ids, bots, given);
  const shown = ids.map((id) => [
    rows.find((row) => row.id === id)?.name,
    tags.get(id) ?? [],
    (accounts.get(id) ?? []).map((a) => [a.id, a.currency, a.amount, a.blocked_at]),
  ]);
  return { ...r, shown, listed };
}

/** A fixture loaded, then what every part reads back of it; and a bad fixture that writes nothing. */
function fixtureScript(store: StoreApi, fixture: Record<string, unknown>): unknown[] {
  const out: unknown[] = [loadFixture(store, fixture)];
  const owners = [1, 2, 3, 4, 5, 6];
  for (const o of owners) {
    const bots = store.projects.ownerBotIds(o);
    const ids = store.contacts.pageIds(bots, 0, 1000);
    out.push(
      store.owners.get(o),
      store.balance.get(o),
      store.directory.projects(o),
      store.directory.bots(o),
      store.directory.currencies(o),
      store.lists.ownerPage(o, 50, 0),
    );
    out.push(
      ids,
      store.contacts.count(bots),
      store.contacts.rowsByIds(ids),
      [...store.contacts.tagsByContact(ids)],
      [...store.contacts.variablesByContact(ids)],
      [...store.contactAccounts.listByContacts(ids)],
    );
    out.push(
      bots.map((b) => store.tags.botTags(b)),
      ids.map((id) => store.admin.conversation(id)),
      ids.map((id) => store.referrals.count(id, null)),
    );
    for (const q of ['an', 'ivan', '+7', '555', 'gmail.com', 'a']) out.push(searched(store, q, bots, 10));
  }
  out.push(store.settings.deprecation('getContacts'), store.settings.deprecation('getMe'));
  out.push(
    (() => {
      try {
        return loadFixture(store, {
          contacts: [
            { id: 900001, bot_id: store.projects.ownerBotIds(1)[0], messenger: 'telegram', name: 'Late', telegram_id: '1' },
            { id: 900002, bot_id: 999999, messenger: 'telegram', name: 'X', telegram_id: '2' },
          ],
        });
      } catch (e) {
        return e instanceof FixtureError ? e.message : String(e);
      }
    })(),
    store.contacts.rowsByIds([900001]),
  );
  // Made after the fixture: ids follow the fixture's.
  const bot = store.projects.ownerBotIds(1)[0]!;
  out.push(
    store.contacts.createOrUpdate({
      botId: bot,
      messenger: 'telegram',
      externalId: 'new-1',
      name: 'After Seed',
      firstMessage: 'hi',
      now: T0,
    }),
  );
  out.push(store.projects.insertBot({ project_uuid: store.projects.firstProject(1)!.uuid, name: 'Next' }));
  return out;
}

/** Times made at the moment of the call ("now") differ between two runs: equal as a kind, not a value. */
function timesAsNow(v: unknown): unknown {
  const now = Date.now() / 1000;
  return JSON.parse(JSON.stringify(v), (k, x: unknown) =>
    (typeof x === 'string' && x !== T0 && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/.test(x)) ||
    // The same moment as Unix seconds: the two stores' loads may fall in different seconds.
    (k === 'created_ts' && typeof x === 'number' && Math.abs(x - now) < 600)
      ? '<now>'
      : x,
  );
}

describe('PgStore', () => {
  it('loads a fixture (the demo, the extended test world) as the SQLite store does, all or nothing', async () => {
    for (const fixture of [JSON.parse(readFileSync(DEMO_FIXTURE, 'utf8')) as Record<string, unknown>, extendedFixture()]) {
      const lite = keep(Store.open(':memory:'));
      const pg = keep(PgStore.open(await server.database()));
      const expected = timesAsNow(fixtureScript(lite, fixture));
      expect(JSON.stringify(expected)).toContain('"matched":');
      expect(timesAsNow(fixtureScript(pg, fixture))).toEqual(expected);
    }
  });

  it('a large fixture (written in batches here) whose contact collides deep in a batch: the error names that contact, as on SQLite, and nothing is written', async () => {
    const contacts = Array.from({ length: 2500 }, (_, i) => ({
      id: 10_000 + i,
      bot_id: 10,
      messenger: 'telegram',
      name: `C${i}`,
      telegram_id: String(i),
      tags: ['t'],
      variables: [{ name: 'v', value: 'x' }],
    }));
    // The 2 100th contact has the 7th's Telegram id in the same bot.
    contacts[2100]!.telegram_id = '7';
    const fixture = { ...baseFixture(), contacts };
    const failure = (store: StoreApi) => {
      try {
        loadFixture(store, fixture);
      } catch (e) {
        return [e instanceof FixtureError, (e as Error).message.split(':')[0], store.owners.count(), store.contacts.count([10])];
      }
    };
    const expected = [true, 'contacts[2100] (id 12100)', 0, 0];
    expect(failure(keep(Store.open(':memory:')))).toEqual(expected);
    const pg = keep(PgStore.open(await server.database()));
    expect(failure(pg)).toEqual(expected);
    // The next load on the same store starts clean: nothing of the failed one comes back.
    contacts[2100]!.telegram_id = '2100';
    expect(loadFixture(pg, fixture).contacts).toBe(2500);
    expect(pg.contacts.count([10])).toBe(2500);
    expect(pg.projects.bot(10)!.subscriber_count).toBe(2500);
  });

  it('finds contacts as the SQLite store does: identifiers, phone suffixes, folded words and prefixes in every script, kept on every write', async () => {
    const lite = keep(Store.open(':memory:'));
    const pg = keep(PgStore.open(await server.database()));
    const expected = searchScript(lite);
    expect(JSON.stringify(expected)).toContain('"matched":"phone"');
    expect(searchScript(pg)).toEqual(expected);
    // A query of words gets its hits' details with the search (one round trip); an identifier, or
    // words whose lookup found someone, does not.
    const bots = pg.projects.ownerBotIds(pg.owners.first()!.id);
    const given = (q: string) => new ContactSearch(pg.search).search(q, bots, 5).details !== undefined;
    expect([given('anna'), given('фед'), given('nobody'), given('@sean'), given('5551234'), given('smith')]).toEqual([
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
  });

  it("migration 6 makes the search's terms from the arrays of migration 1's index: the very terms reindex writes, so a database indexed before finds as before", async () => {
    const c = keep(new PgConnection(await server.database()));
    migratePg(c, PG_MIGRATIONS.slice(0, 5));
    c.exec(`INSERT INTO owners (id, name, created_at) VALUES (1, 'O', '${T0}')`);
    c.exec(`INSERT INTO projects (uuid, owner_id, name, created_at) VALUES ('p1', 1, 'P', '${T0}')`);
    c.exec(`INSERT INTO bots (id, project_uuid, name, created_at) VALUES (7, 'p1', 'B', '${T0}'), (8, 'p1', 'C', '${T0}')`);
    const people: Array<[number, string, string | null, string | null]> = [
      [7, 'Анна Каренина', 'annak', 'Anna.K@Example.com'],
      [7, "Seán O'Brien 12ab", '@sean_1985', null],
      [8, 'Фёдор Достоевский', null, 'f.dostoevsky1821@mail.ru'],
      [8, 'Ann 2nd 12345', 'a', 'a@b'],
    ];
    people.forEach(([bot, name, username, email], i) =>
      c.query(
        `INSERT INTO contacts (id, bot_id, messenger, name, telegram_username, email, created_at, created_ts) VALUES ($1, $2, 'telegram', $3, $4, $5, '${T0}', 1767225600)`,
        [i + 1, bot, name, username, email],
      ),
    );
    // The arrays migration 1's index held, as its reindex wrote them: the name's tokens, the name's
    // and handles' tokens, and every prefix of 2 or more characters of those.
    for (const [i, [bot, name, username, email]] of people.entries()) {
      const handles = [username, email?.slice(0, email.indexOf('@')) ?? null].filter((h) => h !== null).join(' ');
      const nameWords = searchTokens(name);
      const all = [...new Set([...nameWords, ...searchTokens(handles)])];
      const prefixes = [...new Set(all.flatMap((w) => [...w].slice(1).map((_, n) => [...w].slice(0, n + 2).join(''))))];
      c.query('INSERT INTO contact_words (contact_id, bot_id, name_words, all_words, prefixes) VALUES ($1, $2, $3, $4, $5)', [
        i + 1,
        bot,
        nameWords,
        all,
        prefixes,
      ]);
    }
    migratePg(c);
    const terms = () => c.query('SELECT bot_id, term, contact_id, tokens, name_chars FROM contact_terms ORDER BY 1, 2, 3').rows;
    const migrated = terms();
    const dostoevsky = ' федор достоевскии | f dostoevsky1821 ';
    expect(migrated).toContainEqual({ bot_id: 8, term: 'pдостое', contact_id: 3, tokens: dostoevsky, name_chars: 17 });
    expect(migrated).toContainEqual({ bot_id: 8, term: 'nдостоевскии', contact_id: 3, tokens: dostoevsky, name_chars: 17 });
    expect(migrated).toContainEqual({ bot_id: 8, term: 'hdostoevsky1821', contact_id: 3, tokens: dostoevsky, name_chars: 17 });
    expect(migrated).not.toContainEqual(expect.objectContaining({ term: 'pдостоев' }));
    expect(migrated).toContainEqual(expect.objectContaining({ bot_id: 7, term: 'h1985', contact_id: 2 }));
    expect(migrated).not.toContainEqual(expect.objectContaining({ term: 'p12' }));
    expect(migrated).toContainEqual(expect.objectContaining({ term: 'p12a' }));
    c.tx(() => reindex(c, [1, 2, 3, 4]));
    expect(terms()).toEqual(migrated);
    expect(c.one("SELECT count(*) AS n FROM pg_tables WHERE tablename = 'contact_words'")).toEqual({ n: 0 });
  });

  it('answers the calls of lists and records (filters, sorts of mixed values, a field deleted) as the SQLite store does', async () => {
    const lite = keep(Store.open(':memory:'));
    const pg = keep(PgStore.open(await server.database()));
    expect(timesAsNow(listScript(pg))).toEqual(timesAsNow(listScript(lite)));
  });

  it('answers the calls of a workspace (projects, bots, contacts, variables, tags, messages, referrals, admin) as the SQLite store does', async () => {
    const lite = keep(Store.open(':memory:'));
    const pg = keep(PgStore.open(await server.database()));
    const expected = timesAsNow(workspaceScript(lite, (sql) => lite.db.exec(sql)));
    expect(timesAsNow(workspaceScript(pg, (sql) => pg.conn.exec(sql)))).toEqual(expected);
  });

  it('counts and pages contacts by block counts as the SQLite store does: any offset, several bots, after deletes, previews and moves; the counts match a recount', async () => {
    const lite = keep(Store.open(':memory:'));
    const pg = keep(PgStore.open(await server.database()));
    const expected = pagingScript(lite, (sql) => lite.db.exec(sql));
    expect(pagingScript(pg, (sql) => pg.conn.exec(sql))).toEqual(expected);
    expect((expected[0] as number[])[0]).toBeGreaterThan(4000);
    // What the triggers kept is what a count from scratch gives.
    const drift = pg.conn.query(
      `SELECT * FROM contact_blocks b FULL JOIN (SELECT bot_id, id >> 10 AS block, count(*) AS n FROM contacts
         WHERE preview = 0 AND deleted_at IS NULL GROUP BY 1, 2) r USING (bot_id, block) WHERE b.n IS DISTINCT FROM coalesce(r.n, 0)`,
    ).rows;
    expect(drift).toEqual([]);
  });

  it('answers every call as the SQLite store does', async () => {
    const lite = keep(Store.open(':memory:'));
    const pg = keep(PgStore.open(await server.database()));
    const expected = script(lite, (sql) => lite.db.exec(sql));
    const got = script(pg, (sql) => pg.conn.exec(sql));
    expect(got).toEqual(expected);
    // The journal sums to the balance.
    expect(pg.conn.one('SELECT sum(amount)::bigint AS s FROM account_journal WHERE account_id = 1')).toEqual({ s: 120 });
  });

  it('instances starting together migrate once, needing no extension; a database of another program or a newer version is refused', async () => {
    const url = await server.database();
    // Held here until all three wait for it, so that they start together for certain.
    const c = keep(new PgConnection(url));
    c.query('SELECT pg_advisory_lock($1, $2)', [...MIGRATION_LOCK]);
    const starting = Promise.all([1, 2, 3].map(() => child(url, `const s = PgStore.open(url); s.close(); out('ok');`)));
    const waiting = async () =>
      (
        await pgServer().admin(
          "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
          url.split('/').pop(),
        )
      ).rows[0].n;
    for (let i = 0; i < 300 && (await waiting()) < 3; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await waiting()).toBe(3);
    c.query('SELECT pg_advisory_unlock($1, $2)', [...MIGRATION_LOCK]);
    expect(await starting).toEqual(['ok', 'ok', 'ok']);
    expect(c.one('SELECT version FROM workspace_schema')).toEqual({ version: PG_MIGRATIONS.length });
    expect(c.one("SELECT count(*) AS n FROM pg_tables WHERE tablename = 'owners'")).toEqual({ n: 1 });
    // The MCP server's idempotency keys are mcp_idempotency_keys; SQLite's unused idempotency_keys (dropped by its migration 8) never was here.
    expect(c.one("SELECT count(*) AS n FROM pg_tables WHERE tablename = 'idempotency_keys'")).toEqual({ n: 0 });
    // No extension (pg_trgm, unaccent): a server that does not allow CREATE EXTENSION will do.
    expect(c.query('SELECT extname FROM pg_extension ORDER BY 1').rows).toEqual([{ extname: 'plpgsql' }]);

    c.query('UPDATE workspace_schema SET version = version + 1');
    expect(() => PgStore.open(url)).toThrow(/newer version/);
    const foreign = await server.database();
    keep(new PgConnection(foreign)).exec('CREATE TABLE invoices (id integer)');
    expect(() => PgStore.open(foreign)).toThrow(PgSchemaProblem);
  });

  it('two instances share keys, deprecations and the rate window: a rotated key is refused by the other at once; 121 requests get one 429', async () => {
    const url = await server.database();
    const [a, b] = [keep(PgStore.open(url)), keep(PgStore.open(url))];
    const owner = a.owners.insert({ name: 'Ann', api_key: 'old-key' });
    // getMe and getBalance need no part the PostgreSQL store lacks so far.
    const secrets = { encryptionKey: Buffer.alloc(32), signingKey: Buffer.alloc(32) };
    const service = (s: PgStore) => new Service(s as unknown as StoreApi, { secrets, rateLimit: 120 });
    const [sa, sb] = [service(a), service(b)];
    const call = (s: Service, method: string, bearer: string) =>
      s.call({ method, verb: 'GET', input: {}, bearer, wantsJson: true, baseUrl: 'http://x/api/v1' });
    expect(call(sb, 'getMe', 'old-key').status).toBe(200);
    const key = a.owners.regenerateKey(owner)!;
    expect(call(sb, 'getMe', 'old-key').status).toBe(401);
    expect(call(sb, 'getMe', key).status).toBe(200);

    // "Rate limiting: 120 requests per minute" per owner, across every instance. Two so far.
    const statuses: number[] = [];
    for (let i = 0; i < 119; i++) statuses.push(call(i % 2 ? sa : sb, 'getBalance', key).status);
    expect(statuses.filter((s) => s !== 200)).toEqual([429]);
    const refused = call(sa, 'getMe', key);
    expect(refused.status).toBe(429);
    expect(refused.headers['Retry-After']).toMatch(/^\d+$/);

    // A deprecation set through one instance is announced by the other.
    a.settings.setDeprecation('getBalance', '2030-01-01T00:00:00Z');
    expect(call(sb, 'getBalance', key).headers.Deprecation).toBe('true');
  });

  it('a request the database cannot answer in time answers 503 with Retry-After; a connection dropped between requests is replaced unseen', async () => {
    const url = await server.database();
    const a = keep(PgStore.open(url));
    const b = keep(PgStore.open(url, { statementTimeoutMs: 300 }));
    a.owners.insert({ name: 'Ann', api_key: 'k' });
    const s = new Service(b as unknown as StoreApi, {
      secrets: { encryptionKey: Buffer.alloc(32), signingKey: Buffer.alloc(32) },
      rateLimit: 0,
    });
    const getMe = () => s.call({ method: 'getMe', verb: 'GET', input: {}, bearer: 'k', wantsJson: true, baseUrl: 'http://x/api/v1' });
    expect(getMe().status).toBe(200);
    // Another session holds the owners table (a migration, a stuck transaction).
    a.conn.exec('BEGIN; LOCK TABLE owners IN ACCESS EXCLUSIVE MODE');
    const stuck = getMe();
    a.conn.exec('ROLLBACK');
    expect(stuck.status).toBe(503);
    expect(stuck.headers['Retry-After']).toBe('1');
    expect(stuck.body).toEqual({ message: 'Service Unavailable' });
    // The database ends b's idle session: the next request connects again and is served.
    const pid = b.conn.one<{ pid: number }>('SELECT pg_backend_pid() AS pid')!.pid;
    a.conn.query('SELECT pg_terminate_backend($1, 5000)', [pid]);
    expect(getMe().status).toBe(200);
    expect(b.conn.one<{ pid: number }>('SELECT pg_backend_pid() AS pid')!.pid).not.toBe(pid);
  });

  /** A new database with Ann's account of 1000 (one deposit in its journal). */
  async function ledgerOf1000() {
    const url = await server.database();
    const setup = keep(PgStore.open(url));
    setup.owners.insert({ id: 1, name: 'Ann' });
    for (const sql of WORLD) setup.conn.exec(sql);
    const account = setup.contactAccounts.open(11, 'USD', T0) as { id: number };
    setup.tx(() => setup.contactAccounts.move(account.id, 1000, 1000, 'Deposit via API', 'start', T0));
    return { url, setup, account };
  }

  it('concurrent debits from two processes end exact: never below zero, the journal sums to the balance', async () => {
    const { url, setup, account } = await ledgerOf1000();
    // Each process debits 7 forty times (280 each, 560 asked of 1000): the service's check, in its transaction.
    const debit = `
      const s = PgStore.open(url);
      let ok = 0, refused = 0;
      for (let i = 0; i < 40; i++) {
        const done = s.tx(() => {
          const a = s.contactAccounts.get(${account.id});
          if (a.amount < 7) return false;
          s.contactAccounts.move(a.id, a.amount - 7, -7, 'Debit via API', 'race', '${T0}');
          return true;
        });
        done ? ok++ : refused++;
      }
      s.close();
      out(ok + ' ' + refused);`;
    const results = await Promise.all([child(url, debit), child(url, debit)]);
    expect(results).toEqual(['40 0', '40 0']);
    expect(setup.contactAccounts.get(account.id)!.amount).toBe(1000 - 80 * 7);
    expect(setup.conn.one('SELECT sum(amount)::bigint AS s, count(*) AS n FROM account_journal')).toEqual({ s: 1000 - 80 * 7, n: 81 });

    // Past the balance: 160 asked of 440 each way; exactly 62 debits of 7 fit (434), none more.
    const drain = debit.replaceAll('i < 40', 'i < 160');
    const [x, y] = await Promise.all([child(url, drain), child(url, drain)]);
    const ok = Number(x!.split(' ')[0]) + Number(y!.split(' ')[0]);
    expect(ok).toBe(62);
    expect(setup.contactAccounts.get(account.id)!.amount).toBe(440 - 62 * 7);
    expect(setup.conn.one('SELECT sum(amount)::bigint AS s FROM account_journal')).toEqual({ s: 440 - 62 * 7 });
  });

  it('moves with row locks queue on the account instead of failing: no transaction is retried, and deposits and debits from two processes end exact', async () => {
    // "serialisation failures retried": with row locks there are none to retry. retryMs 0
    // makes a single one fail its move, so every move landing proves none happened.
    const { url, setup, account } = await ledgerOf1000();
    const moves = (n: number, depositEvery: number) => `
      const s = PgStore.open(url, { retryMs: 0 });
      let ok = 0, refused = 0;
      for (let i = 0; i < ${n}; i++) {
        const delta = i % ${depositEvery} === 0 ? 5 : -7;
        const moved = s.tx(() => s.contactAccounts.tryMove({ id: ${account.id}, ownerId: 1, delta, max: 10 ** 15,
          operation: delta > 0 ? 'Deposit via API' : 'Debit via API', description: 'race', now: '${T0}' }), { rowLocks: true });
        moved ? ok++ : refused++;
      }
      s.close();
      out(ok + ' ' + refused);`;
    // 60 moves each: 20 deposits of 5 and 40 debits of 7; all fit (1000 + 200 - 560).
    expect(await Promise.all([child(url, moves(60, 3)), child(url, moves(60, 3))])).toEqual(['60 0', '60 0']);
    expect(setup.contactAccounts.get(account.id)!.amount).toBe(640);
    expect(setup.conn.one('SELECT sum(amount)::bigint AS s, count(*) AS n FROM account_journal')).toEqual({ s: 640, n: 121 });
    // Debits only, 160 each way from 640: exactly 91 of 7 fit (637), none more, never below zero.
    const [x, y] = await Promise.all([child(url, moves(160, 1_000_000)), child(url, moves(160, 1_000_000))]);
    // i = 0 is a deposit of 5 in each: 650 to take from.
    expect(Number(x!.split(' ')[0]) + Number(y!.split(' ')[0])).toBe(2 + 92);
    expect(setup.contactAccounts.get(account.id)!.amount).toBe(650 - 92 * 7);
    expect(setup.conn.one('SELECT sum(amount)::bigint AS s FROM account_journal')).toEqual({ s: 650 - 92 * 7 });
  });
});

/**
 * 6000 contacts over five blocks of ids in two bots, then changed as the service and an
 * operator change them (deleted, previews listed, rows removed, contacts moved to the other
 * bot); the totals and pages at offsets across the blocks, with and without date windows.
 */
function pagingScript(store: StoreApi, world: (sql: string) => void): unknown[] {
  const owner = store.owners.insert({ name: 'Ann', created_at: T0 });
  const project = store.projects.insert({ uuid: 'p-paging', owner_id: owner, name: 'Paging' });
  const b1 = store.projects.insertBot({ project_uuid: project, name: 'One' });
  const b2 = store.projects.insertBot({ project_uuid: project, name: 'Two' });
  const T = 1769904000;
  for (let start = 1; start <= 6000; start += 1000) {
    const rows = Array.from({ length: 1000 }, (_, k) => {
      const id = start + k;
      return `(${id}, ${id % 7 < 5 ? b1 : b2}, 'telegram', 'C${id}', '${T0}', ${T + id}, ${id % 97 === 0 ? 1 : 0})`;
    });
    world(`INSERT INTO contacts (id, bot_id, messenger, name, created_at, created_ts, preview) VALUES ${rows.join(', ')}`);
  }
  world(`UPDATE contacts SET deleted_at = '${T0}' WHERE id % 13 = 0 AND id < 2500`);
  world('UPDATE contacts SET preview = 0 WHERE id IN (97, 194, 5044)');
  world('DELETE FROM contacts WHERE id BETWEEN 3000 AND 3100');
  world(`UPDATE contacts SET bot_id = ${b2} WHERE id BETWEEN 4000 AND 4050`);
  const out: unknown[] = [];
  const both = [b1, b2];
  const whole = { to: 2 ** 40 };
  const inside = { from: T + 1500, to: T + 5200 };
  out.push(
    [both, [b1], [b2]].flatMap((bots) => [
      store.contacts.count(bots),
      store.contacts.count(bots, whole),
      store.contacts.count(bots, inside),
    ]),
  );
  for (const bots of [both, [b1], [b2]]) {
    const total = store.contacts.count(bots);
    for (const offset of [0, 1, 1023, 1024, 2047, 2500, total - 3, total, total + 5]) {
      out.push(
        store.contacts.pageIds(bots, offset, 100),
        store.contacts.pageIds(bots, offset, 7, whole),
        store.contacts.pageIds(bots, offset, 50, inside),
      );
    }
    out.push(store.contacts.pageIds(bots, 0, 10_000).length);
  }
  return out;
}

/** Run `body` in a new Node process with the built PgStore and the database `url`; what it `out`s. */
function child(url: string, body: string): Promise<string> {
  const entry = join(ROOT, 'dist', 'store', 'pg', 'index.js');
  const code = `import { PgStore } from ${JSON.stringify(entry)}; const url = process.argv[1]; const out = (s) => process.stdout.write(String(s)); ${body}`;
  return new Promise((resolve, reject) => {
    const p = track(spawn(process.execPath, ['--input-type=module', '-e', code, url], { stdio: ['ignore', 'pipe', 'pipe'] }));
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d));
    p.stderr.on('data', (d: Buffer) => (stderr += d));
    p.on('close', (status) => (status === 0 ? resolve(stdout) : reject(new Error(`child exited ${status}: ${stderr}`))));
  });
}
