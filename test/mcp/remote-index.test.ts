/**
 * The remote backend's search index: a copy of the owner's contacts synced by offset paging of
 * getContacts through the remote client, against our own service over real HTTP. It resumes
 * from its last page, refreshes in full when asked or when old, notices deletions, paces itself
 * below the service's rate limit, reports progress per page and says how fresh it is.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { SyncedContactIndex } from '../../src/mcp/remote/contact-index.js';
import type { Backend } from '../../src/api/backend.js';
import type { ApiResponse } from '../../src/api/backend.js';
import { ContactMirror } from '../../src/state/contact-mirror.js';
import { firstJson, mcpFixture, startMcp, type McpWorld, type StartOptions } from './harness.js';
import { sqliteOf } from '../helpers/store.js';

const PAGE = 500;
const EXTRA = 2500;
/** Alice's 3 contacts of the base world and EXTRA more in bot 10. */
const ALL = 3 + EXTRA;

function fixture(): Record<string, unknown> {
  const f = mcpFixture();
  const more = Array.from({ length: EXTRA }, (_, i) => ({
    id: 1000 + i,
    bot_id: 10,
    messenger: 'telegram',
    telegram_id: String(50_000 + i),
    name: `Person ${i} Nobody`,
    created_at: '2026-02-01T00:00:00Z',
  }));
  return { ...f, contacts: [...(f.contacts as unknown[]), ...more] };
}

interface Recorder {
  offsets: number[];
  statuses: number[];
  /** While true, getContacts answers 503 without reaching the service. */
  down: boolean;
  /** getContacts calls let through before going down by itself (-1: never). */
  downAfter: number;
  /** When set, getMe answers this without reaching the service. */
  getMe?: ApiResponse;
}

function recorder(): Recorder {
  return { offsets: [], statuses: [], down: false, downAfter: -1 };
}

function recording(rec: Recorder) {
  return (b: Backend): Backend => ({
    async call(method, params, o) {
      if (method === 'getMe' && rec.getMe) return rec.getMe;
      if (method === 'getContacts') {
        if (rec.downAfter === 0) rec.down = true;
        if (rec.downAfter > 0) rec.downAfter--;
        if (rec.down) return { status: 503, headers: {}, body: { message: 'Service Unavailable' } } satisfies ApiResponse;
        rec.offsets.push(params.offset as number);
      }
      const res = await b.call(method, params, o);
      rec.statuses.push(res.status);
      return res;
    },
    close: () => b.close(),
  });
}

let world: McpWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

async function start(rec: Recorder, o: StartOptions = {}): Promise<McpWorld> {
  return startMcp({ backend: 'remote', fixture: fixture(), wrap: recording(rec), ...o, sync: { pageSize: PAGE, catchUpMs: 0, ...o.sync } });
}

async function find(w: McpWorld, args: Record<string, unknown>, progress?: Array<{ progress: number; message?: string }>): Promise<any> {
  const r = await w.client.callTool(
    { name: 'findContacts', arguments: args },
    {
      onprogress: (p) => progress?.push({ progress: p.progress, message: p.message }),
    },
  );
  expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
  return firstJson(r);
}

describe('the remote search index', () => {
  test('a sync that stopped resumes from its last page, also after a restart', async () => {
    const rec = recorder();
    rec.downAfter = 2;
    world = await start(rec);
    const partial = await find(world, { query: 'Ann' });
    // Each page after the first starts one before the offset, to check that the list did not move.
    expect(partial.meta.index).toMatchObject({ source: 'remote', contacts: 2 * PAGE - 1, complete: false, as_of: null });
    expect(partial.meta.index.error).toMatch(/503/);
    expect(partial.warnings.join(' ')).toMatch(/stopped/);
    expect(partial.data.map((c: { id: number }) => c.id)).toEqual([100]); // Ann is on the first page

    // A new process on the same index file: it goes on from the offset the file kept.
    rec.down = false;
    rec.downAfter = -1;
    rec.offsets.length = 0;
    const [file] = readdirSync(join(world.dir, 'search')).filter((n) => n.endsWith('.db'));
    const restarted = new SyncedContactIndex(world.context.backend, () => ContactMirror.open(join(world!.dir, 'search', file!)), {
      pageSize: PAGE,
    });
    try {
      const found = await restarted.find(1, 'Person 2499', { limit: 3 });
      expect(rec.offsets[0]).toBe(2 * PAGE - 2);
      expect(found.index).toMatchObject({ contacts: ALL, complete: true, syncing: false });
      expect(found.hits[0]?.id).toBe(1000 + 2499);
    } finally {
      await restarted.close();
    }
  });

  test('progress per page, and meta.index says how fresh and complete the copy is', async () => {
    const rec = recorder();
    world = await start(rec, { sync: { waitMs: 0 } });
    // Not waiting: the first answer comes from an empty copy and says a sync is under way.
    const first = await find(world, { query: 'Nobody' });
    expect(first.meta.index).toMatchObject({ syncing: true, complete: false, as_of: null });
    expect(first.warnings.join(' ')).toMatch(/still syncing/);
    await world.close();

    const rec2 = recorder();
    world = await start(rec2);
    const progress: Array<{ progress: number; message?: string }> = [];
    const before = Date.now();
    const body = await find(world, { query: 'Nobody', limit: 5 }, progress);
    expect(body.meta).toMatchObject({ total: 1000, total_capped: true }); // EXTRA Nobodies, counted up to 1000
    expect(body.meta.index).toMatchObject({ source: 'remote', contacts: ALL, syncing: false, complete: true });
    expect(Date.parse(body.meta.index.as_of)).toBeGreaterThanOrEqual(before - 1000);
    expect(progress.map((p) => p.progress)).toEqual([500, 999, 1498, 1997, 2496, ALL]);
    expect(progress.at(-1)!.message).toMatch(new RegExp(`${ALL} of ${ALL}`));
  });

  test('new contacts: the next find reads only the end of the list', async () => {
    const rec = recorder();
    world = await start(rec);
    await find(world, { query: 'x' });
    rec.offsets.length = 0;
    const { loadFixture } = await import('../../src/store/seed.js');
    loadFixture(world.store, { contacts: [{ id: 9000, bot_id: 10, messenger: 'vk', name: 'Late Arrival', vk_user_id: 9 }] });
    const body = await find(world, { query: 'late arrival' });
    expect(body.data.map((c: { id: number }) => c.id)).toEqual([9000]);
    expect(rec.offsets).toEqual([ALL - 1]);
  });

  test('an owner the API refuses now (blocked) gets its refusal, not the copy; unblocked, the copy again', async () => {
    const rec = recorder();
    world = await start(rec);
    expect((await find(world, { query: 'Ann' })).data.map((c: { id: number }) => c.id)).toEqual([100]);
    world.store.owners.setBlocked(1, true);
    // The spec: "A blocked account gives `403`." (an error body `{error}`)
    const refused = await world.client.callTool({ name: 'findContacts', arguments: { query: 'Ann' } });
    expect(refused.isError).toBe(true);
    expect(firstJson(refused)).toMatchObject({ status: 403, error: 'Your account is blocked.' });
    expect(JSON.stringify(refused)).not.toContain('"name":"Ann"');
    world.store.owners.setBlocked(1, false);
    expect((await find(world, { query: 'Ann' })).data.map((c: { id: number }) => c.id)).toEqual([100]);
  });

  test('blocked within the catch-up time (no sync asked for): the live account read says so, and nothing of the copy is shown', async () => {
    const rec = recorder();
    world = await start(rec, { sync: { catchUpMs: 60_000 } });
    expect((await find(world, { query: 'Nobody', limit: 5 })).data).toHaveLength(5);
    world.store.owners.setBlocked(1, true);
    // "A blocked account gives `403`": the live read says so, and getMe tells it from a contact gone elsewhere.
    const refused = await world.client.callTool({ name: 'findContacts', arguments: { query: 'Nobody', limit: 5 } });
    expect(refused.isError).toBe(true);
    expect(firstJson(refused)).toMatchObject({ status: 403, error: 'Your account is blocked.' });
    expect(JSON.stringify(refused)).not.toContain('Nobody');
  });

  test("a contact no longer the owner's (a 403 for it alone) is left out, the rest shown, also when getMe cannot tell (429)", async () => {
    const rec = recorder();
    world = await start(rec, { sync: { catchUpMs: 60_000 } });
    const before = await find(world, { query: 'Nobody', limit: 5 });
    expect(before.data.map((c: { id: number }) => c.id)).toEqual([1000, 1001, 1002, 1003, 1004]);
    // Moved to Bob's bot: "Contact or account of another account's bot: 403".
    sqliteOf(world.store).db.prepare('UPDATE contacts SET bot_id = 20 WHERE id = ?').run(1000);
    // getMe rate limited says nothing of the owner: the contact is left out all the same.
    rec.getMe = { status: 429, headers: { 'retry-after': '30' }, body: { message: 'Too Many Attempts.' } };
    const after = await find(world, { query: 'Nobody', limit: 5 });
    expect(after.data.map((c: { id: number }) => c.id)).toEqual([1001, 1002, 1003, 1004]);
    expect(after.meta.total).toBe(before.meta.total - 1);
  });

  test("a sync left by an earlier request stopped by 401 (its request's key gone) does not refuse a later caller", async () => {
    const rec = recorder();
    world = await start(rec);
    let release!: (r: ApiResponse) => void;
    const gate = new Promise<ApiResponse>((resolve) => (release = resolve));
    // The first page passes; the next waits, then answers 401 as the remote client does once its
    // request's key is gone. Every later call has its caller's key again.
    const inner = world.context.backend;
    let gated = false;
    let pagesAfter = 0;
    const backend: Backend = {
      call: (method, params, o) => {
        if (gated && method === 'getContacts') pagesAfter++;
        if (method !== 'getContacts' || (params.offset as number) === 0 || gated) return inner.call(method, params, o);
        gated = true;
        return gate;
      },
      close: async () => {},
    };
    const index = new SyncedContactIndex(backend, () => ContactMirror.open(join(world!.dir, 'left-sync.db')), {
      pageSize: PAGE,
      catchUpMs: 0,
      waitMs: 50,
    });
    try {
      expect((await index.find(1, 'Ann', { limit: 3 })).hits.map((h) => h.id)).toEqual([100]);
      // The second find joins the sync still running; it stops on the 401 while this find waits.
      const second = index.find(1, 'Ann', { limit: 3 });
      release({ status: 401, headers: {}, body: { error: 'unauthorized' } });
      // Not refused: it starts a sync of its own, with its own key (the 401 was not this caller's).
      const found = await second;
      expect(found.hits.map((h) => h.id)).toEqual([100]);
      expect(pagesAfter).toBeGreaterThan(0);
      expect(rec.statuses.filter((s) => s === 401)).toEqual([]); // nothing of the service refused it
    } finally {
      await index.close();
    }
  });

  test('a sync stopped by a 503 leaves the copy searchable, its error in meta.index', async () => {
    const rec = recorder();
    world = await start(rec);
    await find(world, { query: 'Ann' });
    rec.down = true;
    const body = await find(world, { query: 'Ann' });
    expect(body.data.map((c: { id: number }) => c.id)).toEqual([100]);
    expect(body.meta.index.error).toMatch(/503/);
  });

  test('a full refresh when asked (refresh: true) or when the copy is older than its age', async () => {
    const rec = recorder();
    let clock = Date.parse('2026-03-01T10:00:00Z');
    world = await start(rec, { sync: { now: () => new Date(clock), maxAgeMs: 3_600_000 } });
    const first = await find(world, { query: 'x' });
    expect(first.meta.index.as_of).toBe('2026-03-01T10:00:00.000Z');
    // A change made elsewhere: the end of the list does not show it, a full pass does.
    sqliteOf(world.store).db.prepare('UPDATE contacts SET name = ? WHERE id = ?').run('Renamed Elsewhere', 1500);
    expect((await find(world, { query: 'renamed elsewhere' })).data).toEqual([]);
    clock += 60_000;
    rec.offsets.length = 0;
    const refreshed = await find(world, { query: 'renamed elsewhere', refresh: true });
    expect(refreshed.data.map((c: { id: number }) => c.id)).toEqual([1500]);
    expect(rec.offsets[0]).toBe(0);
    expect(refreshed.meta.index.as_of).toBe('2026-03-01T10:01:00.000Z');
    // An hour later the copy is stale: the next find reads it all again by itself.
    clock += 3_600_001;
    rec.offsets.length = 0;
    const aged = await find(world, { query: 'x' });
    expect(rec.offsets).toEqual([0, 499, 998, 1497, 1996, 2495]);
    expect(aged.meta.index.as_of).toBe(new Date(clock).toISOString());
  });

  test('a deleted contact moves the list: the sync notices and drops it from the copy', async () => {
    const rec = recorder();
    world = await start(rec);
    expect((await find(world, { query: 'Person 10 Nobody' })).data[0].id).toBe(1010);
    world.store.admin.deleteContact(1010);
    const body = await find(world, { query: 'Person 10 Nobody' });
    expect(body.data.map((c: { id: number }) => c.id)).not.toContain(1010);
    expect(body.meta.index.contacts).toBe(ALL - 1);
  });

  test('paces itself below the service limit: no 429 while syncing, waits reported as progress', async () => {
    const rec = recorder();
    let clock = Date.parse('2026-03-01T10:00:00Z');
    const sleep = async (ms: number) => {
      clock += ms; // the pacer's and the service's clocks move together, without real waiting
    };
    world = await start(rec, {
      rateLimit: 20,
      now: () => new Date(clock),
      // No 429 retries: one 429 would stop the sync and leave the copy incomplete.
      remote: { pacePerMinute: 15, max429Retries: 0, sleep, now: () => clock },
      sync: { pageSize: 100 },
    });
    const progress: Array<{ progress: number; message?: string }> = [];
    const body = await find(world, { query: 'Nobody', limit: 1 }, progress);
    expect(body.meta.index).toMatchObject({ contacts: ALL, complete: true });
    expect(rec.offsets.length).toBeGreaterThan(25);
    expect(rec.statuses).not.toContain(429);
    expect(progress.some((p) => /pacing requests: waiting/.test(p.message ?? ''))).toBe(true);
    expect(clock - Date.parse('2026-03-01T10:00:00Z')).toBeGreaterThanOrEqual(60_000); // 27+ calls at 15 a minute
  });
});
