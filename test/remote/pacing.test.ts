/**
 * The remote client's pacing against our own service at a limit of 10 a minute, both on one
 * clock (the client's waits move it): the service's X-RateLimit headers correct the pacer, so
 * requests it never sent (another process on the same key, this server before a restart), a
 * lower limit than its own and a 429's Retry-After never bring a refusal it could have seen
 * coming. A 429 is let through (max429Retries 0) so that any refusal shows.
 */
import { describe, expect, it } from 'vitest';
import { RemoteBackend } from '../../src/remote/client.js';
import { callApi } from '../helpers/http.js';
import { accountFixture, useWorld } from '../helpers/world.js';

let clock = Date.parse('2026-03-02T10:00:00Z');
const w = useWorld(accountFixture, { rateLimit: 10, now: () => new Date(clock) });

/** A client with its own pacer (as a freshly started server has), on the shared clock. */
function client() {
  const waits: number[] = [];
  const backend = new RemoteBackend({
    baseUrl: w.baseUrl,
    apiKey: 'alice-key',
    max429Retries: 0,
    now: () => clock,
    sleep: async (ms) => {
      waits.push(ms);
      clock += ms;
    },
  });
  return { backend, waits };
}

/** Requests of another process on the same key. */
async function others(n: number): Promise<void> {
  for (let i = 0; i < n; i++) expect((await callApi(w.baseUrl, 'getMe', {}, { verb: 'GET' })).status).toBe(200);
}

/** Start on a fresh window of the service's. */
const nextMinute = () => (clock += 61_000);

describe("pacing by the service's X-RateLimit headers", () => {
  it('requests another process sent this minute hold their slots: the client waits for the window instead of a 429', async () => {
    nextMinute();
    await others(7);
    const { backend, waits } = client();
    try {
      const statuses = [];
      for (let i = 0; i < 6; i++) statuses.push((await backend.call('getMe', {})).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
      // 7 + 2 fill the pace (11/12 of 10); the third waits out the minute the others' requests hold.
      expect(waits).toEqual([60_000]);
    } finally {
      await backend.close();
    }
  });

  it("a limit lower than the client's own: the pace follows the one the service names", async () => {
    nextMinute();
    const { backend, waits } = client();
    try {
      const statuses = [];
      for (let i = 0; i < 12; i++) statuses.push((await backend.call('getMe', {})).status);
      expect(statuses.every((s) => s === 200)).toBe(true);
      expect(waits).toEqual([60_000]);
    } finally {
      await backend.close();
    }
  });

  it('after a 429 (a window another process filled) the next request waits its Retry-After, not a second 429', async () => {
    nextMinute();
    await others(10);
    const { backend, waits } = client();
    try {
      clock += 20_000;
      expect((await backend.call('getMe', {})).status).toBe(429);
      expect((await backend.call('getMe', {})).status).toBe(200);
      expect(waits).toEqual([40_000]);
    } finally {
      await backend.close();
    }
  });
});
