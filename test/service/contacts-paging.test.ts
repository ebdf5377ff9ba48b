/**
 * Offset positions and totals come from per-block counts kept by triggers (not SQL OFFSET):
 * checked against a plain sorted list over many blocks, two bots, preview and deleted
 * contacts, and after deletions and creations. With a date window, a bot whose contacts are
 * in time order answers from the same blocks (the window is one id range): checked, property
 * style, against a plain sorted filter for bots in time order and a bot whose contacts were
 * created in decreasing time, through deletions and arrivals.
 */
import fc from 'fast-check';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '../../src/store/index.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { baseFixture, seedDb, tempDir, useWorld, type Fixture } from '../helpers/world.js';

interface Seeded {
  id: number;
  bot: number;
  ts: number;
  listed: boolean;
}

const T0 = Date.parse('2026-01-01T00:00:00Z') / 1000;
const seeded: Seeded[] = [];

function fixture(): Record<string, unknown> {
  const f = baseFixture() as Record<string, any>;
  f.bots.push({ id: 11, project_uuid: '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10', name: 'Second bot' });
  f.contacts = [];
  for (let k = 0; k < 2500; k++) {
    // Ids 5, 18, 31, ... spread over ~32 blocks of 1024 ids; creation times not in id order.
    const id = 5 + k * 13;
    const bot = k % 3 === 0 ? 11 : 10;
    const ts = T0 + ((k * 7919) % 2500) * 60;
    const preview = k % 17 === 0;
    const deleted = k % 19 === 0;
    seeded.push({ id, bot, ts, listed: !preview && !deleted });
    f.contacts.push({
      id,
      bot_id: bot,
      messenger: 'telegram',
      telegram_id: String(100000 + k),
      name: `C${k}`,
      created_at: new Date(ts * 1000).toISOString(),
      preview,
      deleted,
    });
  }
  return f;
}

const w = useWorld(fixture);

function expected(bots: number[], from = -Infinity, to = Infinity): number[] {
  return seeded
    .filter((c) => c.listed && bots.includes(c.bot) && c.ts >= from && c.ts <= to)
    .map((c) => c.id)
    .sort((a, b) => a - b);
}

async function page(params: Record<string, unknown>) {
  const r = await w.call('getContacts', params);
  expect(r.status).toBe(200);
  return { ids: r.body.data.map((c: { id: number }) => c.id) as number[], meta: r.body.meta };
}

async function checkAll(bots: number[], filter: Record<string, unknown>, want: number[]) {
  const offsets = [0, 1, 77, 500, 1023, 1024, 1025, want.length - 3, want.length - 1, want.length, want.length + 10];
  for (const offset of offsets.filter((o) => o >= 0)) {
    for (const limit of [1, 50, 1000]) {
      const got = await page({ ...filter, offset, limit });
      expect(got.meta).toEqual({ offset, limit, total: want.length });
      expect(got.ids).toEqual(want.slice(offset, offset + limit));
    }
  }
  const p = await page({ ...filter, count: 37, page: 9 });
  expect(p.ids).toEqual(want.slice(8 * 37, 9 * 37));
  expect(p.meta.total).toBe(want.length);
  expect((await w.call('getNumberOfContacts', filter)).body).toEqual({ count: want.length });
  expect(bots.length).toBeGreaterThan(0);
}

describe('offset paging over block counts', () => {
  it('every offset and limit gives the same contacts as a sorted list: one bot, all bots', async () => {
    await checkAll([10], { bot_id: 10 }, expected([10]));
    await checkAll([11], { bot_id: 11 }, expected([11]));
    await checkAll([10, 11], {}, expected([10, 11]));
  });

  it('with date_from / date_to (index path) the same holds', async () => {
    const from = T0 + 300 * 60;
    const to = T0 + 1700 * 60;
    await checkAll([10], { bot_id: 10, date_from: from, date_to: to }, expected([10], from, to));
    await checkAll([10, 11], { date_from: from, date_to: to }, expected([10, 11], from, to));
    await checkAll([10, 11], { date_to: to }, expected([10, 11], -Infinity, to));
  });

  it('deletions and new contacts keep totals and positions exact', async () => {
    const victims = expected([10, 11])
      .filter((_, i) => i % 11 === 5)
      .slice(0, 60);
    for (const id of victims) expect(w.store.admin.deleteContact(id)).toBe(true);
    for (const c of seeded) if (victims.includes(c.id)) c.listed = false;
    for (let i = 0; i < 5; i++) {
      const r = await w.call('createOrUpdateContact', { bot_id: 10, messenger: 'telegram', telegram_id: 555000 + i, name: `N${i}` });
      expect(r.status).toBe(201);
      seeded.push({ id: r.body.data.id, bot: 10, ts: Date.now() / 1000, listed: true });
    }
    await checkAll([10], { bot_id: 10 }, expected([10]));
    await checkAll([10, 11], {}, expected([10, 11]));
  });
});

describe('date windows over block counts when contacts are in time order', () => {
  // Bob: bots 20 and 21, contacts in time order (several share a second). Alice: bot 10 in time
  // order, bot 11 created in decreasing time. Preview and deleted contacts have times out of
  // order everywhere: they are not listed, so they do not break a bot's order.
  const ORDERED = [20, 21, 10];
  const OWNER: Record<number, string> = { 20: 'bob-key', 21: 'bob-key', 10: 'alice-key', 11: 'alice-key' };
  const model: Seeded[] = [];
  let clock = new Date((T0 + 10_000 * 60) * 1000);

  function orderedFixture(): Record<string, unknown> {
    const f = baseFixture() as Record<string, any>;
    f.bots.push({ id: 11, project_uuid: '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10', name: 'Decreasing bot' });
    f.bots.push({ id: 21, project_uuid: '5a2b3c4d-1111-4c1e-9a55-0b6f3d2e1a11', name: 'Bob second bot' });
    f.contacts = [];
    const N = 4000;
    for (let k = 0; k < N; k++) {
      const id = 3 + k * 9; // ~35 blocks of 1024 ids, bots interleaved
      const bot = [20, 21, 10, 11, 20, 20][k % 6]!;
      const preview = k % 17 === 0;
      const deleted = k % 23 === 0;
      const scrambled = T0 + ((k * 7919) % N) * 60;
      const ts = preview || deleted ? scrambled : bot === 11 ? T0 + (N - k) * 60 : T0 + Math.floor(k / 5) * 60;
      model.push({ id, bot, ts, listed: !preview && !deleted });
      f.contacts.push({
        id,
        bot_id: bot,
        messenger: 'telegram',
        telegram_id: String(700000 + k),
        name: `D${k}`,
        created_at: new Date(ts * 1000).toISOString(),
        preview,
        deleted,
      });
    }
    return f;
  }

  const v = useWorld(orderedFixture, { now: () => clock });

  function want(bots: number[], from?: number, to?: number): number[] {
    return model
      .filter((c) => c.listed && bots.includes(c.bot) && c.ts >= (from ?? -Infinity) && c.ts <= (to ?? Infinity))
      .map((c) => c.id)
      .sort((a, b) => a - b);
  }

  /** Whether the model's listed contacts of the bot have created_ts non-decreasing in id order. */
  function modelInOrder(bot: number): boolean {
    const ts = model
      .filter((c) => c.listed && c.bot === bot)
      .sort((a, b) => a.id - b.id)
      .map((c) => c.ts);
    return ts.every((t, i) => i === 0 || ts[i - 1]! <= t);
  }

  const scopes = [
    { key: 'bob-key', bot: 20 as number | undefined, bots: [20] },
    { key: 'bob-key', bot: 21, bots: [21] },
    { key: 'bob-key', bot: undefined, bots: [20, 21] },
    { key: 'alice-key', bot: 10, bots: [10] },
    { key: 'alice-key', bot: 11, bots: [11] },
    { key: 'alice-key', bot: undefined, bots: [10, 11] },
  ];

  /** A date bound: absent, at/around a listed contact's time, or far out. */
  function bound() {
    return fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 2 },
      {
        arbitrary: fc.tuple(fc.noBias(fc.nat(model.length - 1)), fc.integer({ min: -1, max: 1 })).map(([i, d]) => model[i]!.ts + d),
        weight: 6,
      },
      { arbitrary: fc.constantFrom(T0 - 86_400, T0 + 100_000 * 60), weight: 1 },
    );
  }

  /** Mostly from <= to; one in ten the other way round (an empty window). */
  function window() {
    return fc
      .tuple(bound(), bound(), fc.nat(9))
      .map(([a, b, turn]) => (a !== undefined && b !== undefined && a > b === (turn !== 0) ? [b, a] : [a, b]));
  }

  async function property(runs: number): Promise<void> {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...scopes),
        window(),
        // Where in the window the page starts (0 to just past the end), nudged by a few.
        fc.tuple(
          fc.noBias(fc.integer({ min: 0, max: 10_100 })).map((x) => x / 10_000),
          fc.integer({ min: -2, max: 2 }),
        ),
        fc.oneof(fc.constantFrom(1, 2, 100, 1000), fc.noBias(fc.integer({ min: 1, max: 1000 }))),
        async (scope, [from, to], [at, nudge], limit) => {
          const expected = want(scope.bots, from, to);
          const offset = Math.max(0, Math.floor(at * expected.length) + nudge);
          const filter: Record<string, unknown> = {};
          if (scope.bot !== undefined) filter.bot_id = scope.bot;
          if (from !== undefined) filter.date_from = from;
          if (to !== undefined) filter.date_to = to;
          const r = await v.call('getContacts', { ...filter, offset, limit }, { key: scope.key });
          expect(r.status).toBe(200);
          expect(r.body.meta).toEqual({ offset, limit, total: expected.length });
          expect(r.body.data.map((c: { id: number }) => c.id)).toEqual(expected.slice(offset, offset + limit));
          const count = Math.min(limit, 500);
          const pageNo = Math.floor(offset / count) + 1;
          const p = await v.call('getContacts', { ...filter, count, page: pageNo }, { key: scope.key });
          expect(p.body.meta.total).toBe(expected.length);
          expect(p.body.data.map((c: { id: number }) => c.id)).toEqual(expected.slice((pageNo - 1) * count, pageNo * count));
          const n = await v.call('getNumberOfContacts', filter, { key: scope.key });
          expect(n.body).toEqual({ count: expected.length });
        },
      ),
      { numRuns: runs, seed: 20260501 },
    );
  }

  function expectOrderFlags(inOrder: number[], outOfOrder: number[]): void {
    for (const bot of inOrder) expect([bot, v.store.contacts.inTimeOrder(bot)]).toEqual([bot, true]);
    for (const bot of outOfOrder) expect([bot, v.store.contacts.inTimeOrder(bot)]).toEqual([bot, false]);
    // Never claimed in order when it is not (a false "false" only costs speed; a false "true" would be wrong).
    for (const bot of [10, 11, 20, 21]) if (!modelInOrder(bot)) expect(v.store.contacts.inTimeOrder(bot)).toBe(false);
  }

  it('date_from / date_to are inclusive: any window, offset and limit equals a sorted filter (bots in and out of time order)', async () => {
    expectOrderFlags(ORDERED, [11]);
    expect(want([20])).toHaveLength(model.filter((c) => c.listed && c.bot === 20).length);
    await property(250);
    // The edges of every block: windows that start and end inside a block.
    for (const bot of ORDERED) {
      const ids = want([bot]);
      const byId = new Map(model.map((c) => [c.id, c.ts]));
      const from = byId.get(ids[40]!)!;
      const to = byId.get(ids[ids.length - 40]!)!;
      const expected = want([bot], from, to);
      const key = OWNER[bot]!;
      for (const offset of [0, 1, 100, 101, 102, 113, 114, expected.length - 1, expected.length]) {
        const r = await v.call('getContacts', { bot_id: bot, date_from: from, date_to: to, offset, limit: 113 }, { key });
        expect(r.body.meta.total).toBe(expected.length);
        expect(r.body.data.map((c: { id: number }) => c.id)).toEqual(expected.slice(offset, offset + 113));
      }
    }
  });

  it('deletions and new contacts keep date windows exact; contacts arriving later keep a bot in time order', async () => {
    const victims = model.filter((c, i) => c.listed && i % 13 === 4).slice(0, 150);
    for (const c of victims) {
      expect(v.store.admin.deleteContact(c.id)).toBe(true);
      c.listed = false;
    }
    for (let i = 0; i < 30; i++) {
      clock = new Date(clock.getTime() + (i % 3) * 1000); // some arrive in the same second
      const bot = [20, 21, 10, 11][i % 4]!;
      const r = await v.call(
        'createOrUpdateContact',
        { bot_id: bot, messenger: 'telegram', telegram_id: 880000 + i, name: `New${i}` },
        { key: OWNER[bot] },
      );
      expect(r.status).toBe(201);
      model.push({ id: r.body.data.id, bot, ts: Math.floor(clock.getTime() / 1000), listed: true });
    }
    expectOrderFlags(ORDERED, [11]);
    await property(150);
  });

  it('a contact created earlier than the newest one takes its bot out of time order; answers stay exact', async () => {
    clock = new Date((T0 + 5 * 60) * 1000); // the clock went back
    const r = await v.call(
      'createOrUpdateContact',
      { bot_id: 21, messenger: 'telegram', telegram_id: 990001, name: 'Late' },
      { key: 'bob-key' },
    );
    expect(r.status).toBe(201);
    model.push({ id: r.body.data.id, bot: 21, ts: T0 + 5 * 60, listed: true });
    expect(modelInOrder(21)).toBe(false);
    expectOrderFlags([20, 10], [11, 21]);
    await property(150);
  });
});

describe('the time-order flag (migration 4) is kept by triggers', () => {
  const at = (min: number) => new Date((T0 + min * 60) * 1000).toISOString();
  const contact = (id: number, bot: number, min: number, extra: Record<string, unknown> = {}) => ({
    id,
    bot_id: bot,
    messenger: 'telegram',
    telegram_id: String(id),
    name: `F${id}`,
    created_at: at(min),
    ...extra,
  });
  function withStore(fixture: Fixture, fn: (store: Store) => void): void {
    const store = Store.open(seedDb(fixture, 'flag.db'));
    try {
      fn(store);
    } finally {
      store.close();
    }
  }

  it('inserts below existing ids are checked against the next contact too; preview and deleted ones do not count', () => {
    const f = baseFixture() as Record<string, any>;
    f.bots.push({ id: 12, project_uuid: '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10', name: 'Twelve' });
    f.contacts = [
      // Bot 10: loaded from the highest id down, times falling with the ids: in time order.
      contact(300, 10, 3),
      contact(200, 10, 2),
      contact(100, 10, 1),
      contact(250, 10, 0, { preview: true }),
      contact(150, 10, 9, { deleted: true }),
      // Bot 12: a lower id created later than a higher one.
      contact(500, 12, 1),
      contact(400, 12, 2),
      // Bot 20: equal times are in order.
      contact(600, 20, 5),
      contact(700, 20, 5),
      contact(650, 20, 5),
    ];
    withStore(f, (store) => {
      expect([store.contacts.inTimeOrder(10), store.contacts.inTimeOrder(12), store.contacts.inTimeOrder(20)]).toEqual([true, false, true]);
      expect(store.contacts.inTimeOrder(999)).toBe(true); // no contacts: nothing out of order
      // A preview contact becoming listed is checked like a new one: 250 at minute 0 sits after 200 at minute 2.
      store.db.prepare('UPDATE contacts SET preview = 0 WHERE id = 250').run();
      expect(store.contacts.inTimeOrder(10)).toBe(false);
      // So is a changed creation time.
      store.db.prepare('UPDATE contacts SET created_ts = created_ts + 3600 WHERE id = 650').run();
      expect(store.contacts.inTimeOrder(20)).toBe(false);
    });
  });

  it('a database migrated from version 3 gets the flag from its contacts', () => {
    const dir = tempDir();
    const file = join(dir, 'v3.db');
    const db = new Database(file);
    for (const sql of MIGRATIONS.slice(0, 3)) db.exec(sql);
    db.pragma('user_version = 3');
    db.exec(`INSERT INTO owners (id, name, created_at) VALUES (1, 'O', '${at(0)}');
      INSERT INTO projects (uuid, owner_id, name, created_at) VALUES ('p', 1, 'P', '${at(0)}');
      INSERT INTO bots (id, project_uuid, name, created_at) VALUES (1, 'p', 'A', '${at(0)}'), (2, 'p', 'B', '${at(0)}'), (3, 'p', 'C', '${at(0)}');`);
    const ins = db.prepare(
      `INSERT INTO contacts (id, bot_id, messenger, name, created_at, created_ts, preview) VALUES (?, ?, 'web', 'x', '', ?, ?)`,
    );
    // Bot 1 in order (its out-of-order contact is a preview one), bot 2 not, bot 3 only a preview contact.
    for (const [id, bot, ts, preview] of [
      [1, 1, 10, 0],
      [2, 2, 50, 0],
      [3, 1, 10, 0],
      [4, 2, 40, 0],
      [5, 1, 5, 1],
      [6, 1, 11, 0],
      [7, 3, 1, 1],
    ]) {
      ins.run(id, bot, ts, preview);
    }
    db.close();
    const store = Store.open(file);
    try {
      expect([1, 2, 3].map((b) => store.contacts.inTimeOrder(b))).toEqual([true, false, true]);
      expect(store.contacts.count([1], { from: 10, to: 11 })).toBe(3);
      expect(store.contacts.pageIds([1], 1, 5, { from: 10 })).toEqual([3, 6]);
      expect(store.contacts.count([2], { to: 45 })).toBe(1);
    } finally {
      store.close();
    }
  });
});
