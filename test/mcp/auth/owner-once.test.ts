/**
 * One owner read a request (`--auth key`, `--auth oauth` on the built-in service): the owner the
 * request's admission read (`Service.ownerOf`, `ownerOfAsync`) is handed to that key's next call
 * instead of read again; a second call reads it again, and a refusal at admission leaves nothing
 * to hand on, so a regenerated key stops the call that follows.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LocalBackend } from '../../../src/service/backend.js';
import { hashKey } from '../../../src/store/keys.js';
import type { StoreApi } from '../../../src/store/store-api.js';
import { openStore } from '../../helpers/store.js';
import { baseFixture, seedDb, testService } from '../../helpers/world.js';

const opened: StoreApi[] = [];
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});

/** The service over a seeded file, counting the reads of owners by key hash. */
function counted() {
  const store = openStore(seedDb(baseFixture()));
  opened.push(store);
  const reads = { n: 0 };
  const byHash = store.owners.byHash.bind(store.owners);
  store.owners.byHash = (h: string) => {
    reads.n++;
    return byHash(h);
  };
  const service = testService(store);
  return { store, service, reads, alice: new LocalBackend(service, { keyHash: hashKey('alice-key') }) };
}

const id = (body: unknown) => (body as { data: { id: number } }).data.id;

describe('the owner read once a request', () => {
  it("admission's read is the call's: one read, then the next call reads again", async () => {
    const { service, reads, alice } = counted();
    const who = service.ownerOf(hashKey('alice-key'));
    expect(who).toMatchObject({ id: 1 });
    expect(reads.n).toBe(1);
    const first = await alice.call('getMe', {});
    expect([first.status, id(first.body)]).toEqual([200, 1]);
    expect(reads.n).toBe(1);
    const second = await alice.call('getMe', {});
    expect(second.status).toBe(200);
    expect(reads.n).toBe(2);
  });

  it('the async read (on PostgreSQL, the pool) is handed on alike, with the same checks', async () => {
    const { store, service, reads, alice } = counted();
    const who = await service.ownerOfAsync(hashKey('alice-key'), async (h) => store.owners.byHash(h));
    expect(who).toMatchObject({ id: 1 });
    expect(reads.n).toBe(1);
    expect((await alice.call('getMe', {})).status).toBe(200);
    expect(reads.n).toBe(1);
    // A free plan's key is refused at admission with the pipeline's own answer.
    const fran = await service.ownerOfAsync(hashKey('fran-key'), async (h) => store.owners.byHash(h));
    expect(fran).toMatchObject({ status: 402 });
  });

  it('a key regenerated between two requests: the second admission refuses it, and its call is refused too', async () => {
    const { store, service, alice } = counted();
    expect(service.ownerOf(hashKey('alice-key'))).toMatchObject({ id: 1 });
    expect((await alice.call('getMe', {})).status).toBe(200);
    expect(service.ownerOf(hashKey('alice-key'))).toMatchObject({ id: 1 });
    store.owners.regenerateKey(1);
    expect(service.ownerOf(hashKey('alice-key'))).toMatchObject({ status: 401 });
    expect((await alice.call('getMe', {})).status).toBe(401);
  });
});
