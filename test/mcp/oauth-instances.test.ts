/**
 * `mcp --http --auth oauth` on PostgreSQL, two instances of the built CLI on one database behind
 * one public URL (as behind a balancer): a person signs in through one and works through the
 * other; once their grant is revoked (by the client, RFC 7009, through the first instance; by an
 * administrator, `admin revoke-grant`) or their key regenerated (`admin regenerate-key`), the
 * other instance refuses their token within 5 s, although it had just served it. What an
 * instance reads for a request (the token with its grant, the key's owner) is read afresh from
 * the shared database, off the serving thread.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cliEnv, runCliAsync, spawnAnnounced, type Announced } from '../helpers/cli.js';
import { usePostgres } from '../helpers/postgres.js';
import { stop } from '../helpers/temp.js';
import { tempDir } from '../helpers/world.js';
import { connectHttp } from './clients.js';
import { form, freePort, http, mcpInit, seedWorld, signIn } from './oauth-flow.js';

const pg = usePostgres();
const SECRET = 'ab'.repeat(32);
/** The bound of the issue: a revocation is refused by every instance within this long. */
const WITHIN_MS = 5_000;

let db: string;
let base: string;
const instances: Array<Announced & { mcp: string }> = [];

beforeAll(async () => {
  db = await seedWorld(await pg.server().database());
  const ports = [await freePort(), await freePort()];
  // Both instances answer for the first one's address: tokens are for that resource, whichever instance serves them.
  base = `http://127.0.0.1:${ports[0]}`;
  for (const port of ports) {
    const started = await spawnAnnounced(
      ['mcp', '--http', '--auth', 'oauth', '--public-url', base, '--port', String(port), '--db', db],
      /(http:\/\/\S+\/mcp)/,
      cliEnv({ WORKSPACE_DATA_DIR: tempDir(), WORKSPACE_SECRET: SECRET }),
    );
    instances.push({ ...started, mcp: `http://127.0.0.1:${port}/mcp` });
  }
}, 120_000);

afterAll(async () => {
  for (const i of instances) await stop(i.proc);
});

/** The owner getMe answers over instance `i` with `token`. */
async function me(i: number, token: string): Promise<unknown> {
  const client = await connectHttp('2026-07-28', instances[i]!.mcp, { Authorization: `Bearer ${token}` });
  try {
    const r = await client.callTool({ name: 'getMe', arguments: {} });
    return (JSON.parse((r.content as Array<{ text: string }>)[0]!.text) as { data: { id: number } }).data.id;
  } finally {
    await client.close();
  }
}

/** How long until instance `i` answers `token`'s initialize with 401 (polled; undefined: not within twice the bound). */
async function refusedAfter(i: number, token: string): Promise<number | undefined> {
  const started = Date.now();
  while (Date.now() - started < 2 * WITHIN_MS) {
    if ((await mcpInit(instances[i]!.mcp, token)).status === 401) return Date.now() - started;
    await new Promise((r) => setTimeout(r, 50));
  }
  return undefined;
}

describe('two instances on one PostgreSQL database, --auth oauth', () => {
  test('a grant revoked through one instance (RFC 7009) is refused by the other within 5 s', async () => {
    const { tokens, clientId } = await signIn(base, 'alice-key');
    // Signed in through the first, served by both.
    expect(await me(1, tokens.access_token)).toBe(1);
    expect(await me(0, tokens.access_token)).toBe(1);
    const revoked = await http(
      `${instances[0]!.mcp.replace(/\/mcp$/, '')}/oauth/revoke`,
      form({ token: tokens.refresh_token, client_id: clientId }),
    );
    expect(revoked.status).toBe(200);
    const after = await refusedAfter(1, tokens.access_token);
    expect(after, 'the other instance still served the revoked grant').toBeDefined();
    expect(after!).toBeLessThanOrEqual(WITHIN_MS);
    expect((await mcpInit(instances[0]!.mcp, tokens.access_token)).status).toBe(401);
  });

  test('a grant revoked by an administrator is refused by both instances within 5 s', async () => {
    const { tokens } = await signIn(base, 'bob-key');
    expect(await me(1, tokens.access_token)).toBe(2);
    const revoked = await runCliAsync(['admin', 'revoke-grant', '--owner', '2', '--db', db], cliEnv({ WORKSPACE_SECRET: SECRET }));
    expect(revoked.status, revoked.stderr).toBe(0);
    for (const i of [1, 0]) {
      const after = await refusedAfter(i, tokens.access_token);
      expect(after, `instance ${i} still served the revoked grant`).toBeDefined();
      expect(after!).toBeLessThanOrEqual(WITHIN_MS);
    }
  });

  test('a key regenerated: its grant is refused by the other instance within 5 s, and the new key signs in', async () => {
    const { tokens } = await signIn(base, 'alice-key');
    expect(await me(1, tokens.access_token)).toBe(1);
    expect(await me(0, tokens.access_token)).toBe(1);
    const regenerated = await runCliAsync(['admin', 'regenerate-key', '--owner', '1', '--db', db], cliEnv({ WORKSPACE_SECRET: SECRET }));
    expect(regenerated.status, regenerated.stderr).toBe(0);
    const fresh = regenerated.stdout.trim();
    const after = await refusedAfter(1, tokens.access_token);
    expect(after, 'the other instance still served the grant of a regenerated key').toBeDefined();
    expect(after!).toBeLessThanOrEqual(WITHIN_MS);
    // The grant is revoked in the shared state: the first instance refuses it too.
    expect((await mcpInit(instances[0]!.mcp, tokens.access_token)).status).toBe(401);
    const again = await signIn(base, fresh);
    expect(await me(1, again.tokens.access_token)).toBe(1);
  });
});
