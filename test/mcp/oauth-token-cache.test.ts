/**
 * The bearer keeps a token's read (the token, its grant, the key opened) for 1 s: a person's
 * calls come several a second, and each would otherwise read the shared database. A grant
 * revoked through the same server is refused at its next request, even when a read begun before
 * the revocation comes back after it; one revoked elsewhere (another instance, an administrator)
 * within that second. On the real SQLite state file, the store's reads counted.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { OAuthStore } from '../../src/oauth/store.js';
import { OAuthServer } from '../../src/oauth/server.js';
import { hashToken, sealerOf } from '../../src/oauth/secrets.js';
import { answeredAtOnce } from '../../src/state/async.js';
import { McpStateStore } from '../../src/state/mcp-state.js';
import { tempDir } from '../helpers/world.js';

const BASE = 'http://127.0.0.1:9999';
const TOKEN = 'wmo_at_cache';
const sealer = sealerOf(Buffer.alloc(32, 9));
const closing: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of closing.splice(0)) await c();
});

/** A server over a new state file holding one grant of owner 1 and its access token; its store's token reads counted, each held until `gate` lets it go. */
async function world() {
  const state = McpStateStore.open(join(tempDir(), 'mcp-state.sqlite'));
  const sync = state.oauth();
  sync.addGrant({
    id: 'g-1',
    owner_id: 1,
    client_id: 'c',
    client_name: 'App',
    resource: `${BASE}/mcp`,
    scope: 'workspace',
    sealed_key: sealer.seal('alice-key', 'g-1'),
    created_at: new Date().toISOString(),
    last_used_at: null,
    revoked_at: null,
    revoked_why: null,
  });
  sync.addToken({
    token_hash: hashToken(TOKEN),
    grant_id: 'g-1',
    kind: 'access',
    expires_ms: Date.now() + 3_600_000,
    used: 0,
    scope: null,
  });
  const real = answeredAtOnce(state).oauth();
  const reads = { n: 0, gate: Promise.resolve() };
  const store: OAuthStore = {
    ...real,
    access: async (hash) => {
      reads.n++;
      const row = await real.access(hash);
      await reads.gate;
      return row;
    },
  };
  const clock = { now: Date.now() };
  const oauth = new OAuthServer({
    publicUrl: new URL(BASE),
    store,
    sealer,
    checkKey: async () => ({ id: 1 }),
    now: () => clock.now,
  });
  closing.push(
    () => oauth.close(),
    () => state.close(),
  );
  const signedIn = async () => 'grant' in (await oauth.signedIn(`Bearer ${TOKEN}`));
  return { oauth, sync, reads, clock, signedIn };
}

describe("the bearer keeps a token's read for 1 s", () => {
  test('read once for the calls of a second, again after it', async () => {
    const w = await world();
    for (let i = 0; i < 5; i++) expect(await w.signedIn()).toBe(true);
    expect(w.reads.n).toBe(1);
    w.clock.now += 1_001;
    expect(await w.signedIn()).toBe(true);
    expect(w.reads.n).toBe(2);
  });

  test('revoked elsewhere (another process writes the state): served within the second, refused after it', async () => {
    const w = await world();
    expect(await w.signedIn()).toBe(true);
    w.sync.revokeGrant('g-1', 'an administrator revoked it', new Date().toISOString());
    expect(await w.signedIn()).toBe(true);
    w.clock.now += 1_001;
    expect(await w.signedIn()).toBe(false);
  });

  test('revoked through this server: refused at the next request', async () => {
    const w = await world();
    const who = await w.oauth.signedIn(`Bearer ${TOKEN}`);
    if (!('grant' in who)) throw new Error('not signed in');
    expect((await w.oauth.keyRefused(who.grant, 'regenerated')).status).toBe(401);
    expect(await w.signedIn()).toBe(false);
  });

  test('a read begun before a revocation through this server and answered after it is not kept', async () => {
    const w = await world();
    let release!: () => void;
    w.reads.gate = new Promise((r) => (release = r));
    // The read is made (the grant not yet revoked), its answer held back.
    const first = w.oauth.signedIn(`Bearer ${TOKEN}`);
    await new Promise((r) => setTimeout(r, 20));
    expect(w.reads.n).toBe(1);
    // Revoked through this server meanwhile (a replayed refresh token, RFC 7009, a key refused).
    w.reads.gate = Promise.resolve();
    const grant = (await w.sync.grant('g-1'))!;
    expect((await w.oauth.keyRefused(grant, 'regenerated')).status).toBe(401);
    release();
    // The request in hand was read before the revocation; the next one is refused.
    expect('grant' in (await first)).toBe(true);
    expect(await w.signedIn()).toBe(false);
  });
});
