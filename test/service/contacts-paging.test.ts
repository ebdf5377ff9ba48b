/**
 * Offset positions and totals come from per-block counts kept by triggers (not SQL OFFSET):
 * checked against a plain sorted list over many blocks, two bots, preview and deleted
 * contacts, and after deletions and creations.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseFixture, startWorld, type World } from '../helpers/world.js';

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
      id, bot_id: bot, messenger: 'telegram', telegram_id: String(100000 + k), name: `C${k}`,
      created_at: new Date(ts * 1000).toISOString(), preview, deleted,
    });
  }
  return f;
}

let w: World;
beforeAll(async () => {
  w = await startWorld(fixture());
});
afterAll(async () => {
  await w.close();
});

function expected(bots: number[], from = -Infinity, to = Infinity): number[] {
  return seeded.filter((c) => c.listed && bots.includes(c.bot) && c.ts >= from && c.ts <= to).map((c) => c.id).sort((a, b) => a - b);
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
    const victims = expected([10, 11]).filter((_, i) => i % 11 === 5).slice(0, 60);
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
