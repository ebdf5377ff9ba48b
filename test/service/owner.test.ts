/** getBalance (extended: `{data: {balance, currency}}`, the platform account's own balance), over real HTTP. */
import { describe, expect, it } from 'vitest';
import { extendedFixture } from '../helpers/extended.js';
import { useWorld } from '../helpers/world.js';

const w = useWorld(extendedFixture);

describe('getBalance', () => {
  it('answers {data: {balance, currency}}: a new owner has 0 USD', async () => {
    const res = await w.call('getBalance', {}, { verb: 'GET' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { balance: 0, currency: 'USD' } });
  });

  it("is the key holder's own balance, in minor units, as loaded by fixture", async () => {
    const res = await w.call('getBalance', {}, { key: 'bob-key' });
    expect(res.body).toEqual({ data: { balance: 123456, currency: 'EUR' } });
  });

  it('refuses a missing key (401) and a free plan (402)', async () => {
    expect((await w.call('getBalance', {}, { key: null })).status).toBe(401);
    expect((await w.call('getBalance', {}, { key: 'fran-key' })).status).toBe(402);
  });
});
