/**
 * Who a request is, and the bounds on each person (src/mcp/auth/callers.ts): `--person-rate`
 * through the built CLI, a grant's key re-checked once its `keyRecheckMs` has passed, and
 * `--auth oauth` over `--remote` (each getMe counts against the person's 120 a minute upstream,
 * so a grant's key is asked about at most every 30 s there) as a person signs in and works.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { cliEnv, runCli, spawnAnnounced, spawnServe, type Announced } from '../../helpers/cli.js';
import { stop } from '../../helpers/temp.js';
import { tempDir } from '../../helpers/world.js';
import { CallerCheck, type Grant, type KeyOwner } from '../../../src/mcp/auth/callers.js';
import { PersonRate } from '../../../src/mcp/auth/person-rate.js';
import { freePort, mcpInit, seedWorld, signIn } from '../oauth-flow.js';

const running: Announced[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) await stop(r.proc);
});

const JSON_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** A 2026-07-28 getMe over `url` with `bearer`: the status, the Retry-After and the answer. */
async function getMe(url: string, bearer: string): Promise<{ status: number; retryAfter: string | null; text: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      ...JSON_HEADERS,
      Authorization: `Bearer ${bearer}`,
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'tools/call',
      'Mcp-Name': 'getMe',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'getMe', arguments: {}, _meta: META } }),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), text: await res.text() };
}

describe('--person-rate', () => {
  test('one person over their bound gets 429 with Retry-After; another person is still served', async () => {
    const db = await seedWorld();
    const started = await spawnAnnounced(
      ['mcp', '--http', '--auth', 'key', '--person-rate', '3', '--port', '0', '--db', db],
      /(http:\/\/\S+\/mcp)/,
      cliEnv({ WORKSPACE_DATA_DIR: tempDir() }),
    );
    running.push(started);
    for (let i = 0; i < 3; i++) expect((await getMe(started.url, 'alice-key')).status).toBe(200);
    // The window slides: a minute that turned between the first and the fourth lets one more through.
    let over = await getMe(started.url, 'alice-key');
    for (let i = 0; i < 2 && over.status === 200; i++) over = await getMe(started.url, 'alice-key');
    expect(over.status).toBe(429);
    expect(Number(over.retryAfter)).toBeGreaterThan(0);
    expect(JSON.parse(over.text).error.message).toMatch(/at most 3 a minute; try again in \d+ s/);
    expect((await getMe(started.url, 'bob-key')).status).toBe(200);
  });
});

describe('the person rate (person-rate.ts)', () => {
  test('at most N a minute each; another person apart; the last minute weighs in as it slides', () => {
    const rate = new PersonRate(3);
    const t = 60_000 * 1000;
    for (let i = 0; i < 3; i++) expect(rate.take(1, t + i)).toBeUndefined();
    expect(rate.take(1, t + 10)).toBe(60);
    expect(rate.take(2, t + 10)).toBeUndefined();
    // Half-way into the next minute the last one's 3 count as 1.5: one more, then refused.
    expect(rate.take(1, t + 90_000)).toBeUndefined();
    expect(rate.take(1, t + 90_001)).toBeUndefined();
    expect(rate.take(1, t + 90_002)).toBe(30);
  });

  test('a request that waited, with a time of a minute already past, never resets the counts', () => {
    const rate = new PersonRate(3);
    const t = 60_000 * 1000;
    for (let i = 0; i < 3; i++) expect(rate.take(1, t + 60_100 + i)).toBeUndefined();
    expect(rate.take(1, t + 60_200)).toBeDefined();
    rate.take(2, t + 59_900);
    expect(rate.take(1, t + 60_300)).toBeDefined();
  });
});

describe("a grant's key re-checked (keyRecheckMs)", () => {
  const grant: Grant = { id: 'g1', owner_id: 1, client_id: 'c1', client_name: 'App' };

  /** A check whose sign-in holds `grant` with `key`, and whose backend answers getMe by `owners` (counted). */
  function checkOver(owners: Record<string, KeyOwner>, keyRecheckMs: number) {
    const asked: string[] = [];
    const check = new CallerCheck({
      owner: async (key) => {
        asked.push(key);
        return owners[key] ?? { status: 401, message: 'unauthorized' };
      },
      keyRecheckMs,
      perPersonPerMinute: 0,
      signIn: {
        hostName: 'mcp.example.test',
        serve: async () => false,
        signedIn: async () => ({ grant, key: 'alice-key', scopes: ['workspace'] }),
        keyRefused: async (g, why) => ({ status: 401, headers: {}, body: `${g.id} refused: ${why}` }),
      },
    });
    return { check, asked };
  }

  test('within the window the key is not asked again; once it has passed, it is, and a regenerated key ends the grant', async () => {
    const owners: Record<string, KeyOwner> = { 'alice-key': { id: 1 } };
    const { check, asked } = checkOver(owners, 30_000);
    const cred = { key: 'alice-key', grant };
    const t0 = 1_000_000;
    expect(await check.admit(cred, t0)).toMatchObject({ owner: { id: 1 }, auth: { clientId: 'c1' } });
    expect(await check.admit(cred, t0 + 29_000)).toMatchObject({ owner: { id: 1 } });
    expect(asked).toHaveLength(1);
    // The key was regenerated meanwhile: the next check after the window finds it refused.
    delete owners['alice-key'];
    expect(await check.admit(cred, t0 + 30_001)).toEqual({ status: 401, headers: {}, body: 'g1 refused: unauthorized' });
    expect(asked).toHaveLength(2);
  });

  test('each window is one check: after it passes, the answer is kept for the next window again', async () => {
    const { check, asked } = checkOver({ 'alice-key': { id: 1 } }, 30_000);
    const cred = { key: 'alice-key', grant };
    for (const at of [0, 10_000, 30_001, 40_000, 60_002, 70_000]) await check.admit(cred, 1_000_000 + at);
    expect(asked).toHaveLength(3);
  });

  test('a grant whose key now belongs to someone else is refused', async () => {
    const { check } = checkOver({ 'alice-key': { id: 2 } }, 0);
    expect(await check.admit({ key: 'alice-key', grant })).toMatchObject({ status: 401, body: /someone else/ });
  });
});

describe('--auth oauth over --remote', () => {
  test('a person signs in with their key of the remote API and works as its owner; a regenerated key stops their calls', async () => {
    const db = await seedWorld();
    const api = await spawnServe(['--db', db, '--rate-limit', '0']);
    running.push(api);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const mcp = await spawnAnnounced(
      ['mcp', '--http', '--auth', 'oauth', '--public-url', base, '--port', String(port), '--remote', api.baseUrl],
      /(http:\/\/\S+\/mcp)/,
      cliEnv({ WORKSPACE_DATA_DIR: tempDir(), WORKSPACE_SECRET: 'cd'.repeat(32) }),
    );
    running.push(mcp);
    // A key the remote API refuses gives no code.
    await expect(signIn(base, 'nobody-key')).rejects.toThrow(/^consent: [24]00 /);
    const { tokens } = await signIn(base, 'bob-key');
    expect((await mcpInit(`${base}/mcp`, tokens.access_token)).status).toBe(200);
    const me = await getMe(`${base}/mcp`, tokens.access_token);
    expect(me.status).toBe(200);
    expect(JSON.parse(me.text).result.structuredContent.data).toMatchObject({ id: 2, name: 'Bob' });
    // Bob's key regenerated on the remote API: his next call is refused, by the API itself or by the re-check.
    expect(runCli(['admin', 'regenerate-key', '--owner', '2', '--db', db]).status).toBe(0);
    const after = await getMe(`${base}/mcp`, tokens.access_token);
    expect(after.status === 401 || JSON.parse(after.text).result?.isError === true, after.text).toBe(true);
    expect(after.text).not.toMatch(/"name":"Bob"/);
  });
});
