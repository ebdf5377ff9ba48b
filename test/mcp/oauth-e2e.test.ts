/**
 * `mcp --http --auth oauth` end to end, as a person and a host would: the built CLI on a
 * seeded SQLite file and on PostgreSQL; the MCP SDK clients' own OAuth support (the v2 client
 * pinned to 2026-07-28 or to 2025-11-25, and the v1 client of 2025-era hosts) discover the
 * server from its 401, register (RFC 7591) or name themselves by a Client ID Metadata Document
 * the test serves on loopback, and send the person to the consent page; in headless Chromium
 * the person types their Workspace API key into the field named api_key and clicks Allow (or
 * Deny), the browser lands on the host's loopback callback, the SDK redeems the code and calls
 * tools as that person. World: Alice (owner 1, bot 10, Ann, account 500), Bob (owner 2, bot 20,
 * Bob fan, account 600) and Cleo (owner 5), whose key is regenerated.
 *
 * Chromium, openssl (the document's certificate) and PostgreSQL must start: when one cannot,
 * the tests fail and say why (never skipped).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Http } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError as V1Unauthorized, type OAuthClientProvider as V1Provider } from '@modelcontextprotocol/sdk/client/auth.js';
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Http,
  UnauthorizedError as V2Unauthorized,
} from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Browser, BrowserContext, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { launchBrowser } from '../helpers/browser.js';
import { cliEnv, runCliAsync, spawnAnnounced } from '../helpers/cli.js';
import { HostProvider, recordingFetch, startLoopbackHost, type LoopbackHost, type TokenCall } from '../helpers/oauth-host.js';
import { freePort, usePostgres } from '../helpers/postgres.js';
import { seedDb, tempDir, type Fixture } from '../helpers/world.js';
import { firstJson, mcpFixture } from './harness.js';

// What page.evaluate runs is in the browser; the tests are type-checked without the DOM library.
declare const document: any;

const SECRET = 'e7'.repeat(32);
const INFO = { name: 'oauth-e2e', version: '1.0.0' };

/** The MCP world with Bob's account 600 and a third owner, Cleo, whose key the tests regenerate. */
function world(): Fixture {
  const f = mcpFixture();
  return {
    ...f,
    owners: [...(f.owners as unknown[]), { id: 5, name: 'Cleo', email: 'cleo@example.com', plan: 'pro', api_key: 'cleo-key' }],
    accounts: [...(f.accounts as unknown[]), { id: 600, contact_id: 200, currency: 'USD', amount: 1000 }],
  };
}

/** How a host speaks: the v2 client pinned to an era, or the v1 client (2025-11-25). */
type Kind = 'v2 2026-07-28' | 'v2 2025-11-25' | 'v1';
/** How a host names itself: registered (RFC 7591) or by its metadata document's URL. */
type Naming = 'registration' | 'metadata document';

let browser: Browser;
let host: LoopbackHost;

beforeAll(async () => {
  [browser, host] = await Promise.all([launchBrowser().then((b) => b.browser), startLoopbackHost('Test host')]);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await host?.close();
});

/** A signed-in host's session with the server. */
interface Session {
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  readResource(uri: string): Promise<string>;
  /** The protocol revision spoken. */
  era(): string | undefined;
  /** The 2025-era session id (none on 2026-07-28). */
  sessionId(): string | undefined;
  close(): Promise<void>;
}

/** A host of `kind` talking to `url` through `provider`, noting its token endpoint calls. */
class Host {
  readonly tokenCalls: TokenCall[] = [];
  constructor(
    readonly kind: Kind,
    readonly url: string,
    readonly provider: HostProvider,
  ) {}

  /**
   * Connect; true when it is connected, false when the SDK sent the person to sign in (it threw
   * its UnauthorizedError after calling redirectToAuthorization).
   */
  async connect(): Promise<Session | undefined> {
    const fetch = recordingFetch(this.tokenCalls);
    try {
      if (this.kind === 'v1') {
        const transport = new V1Http(new URL(this.url), { authProvider: this.provider as V1Provider, fetch });
        const client = new V1Client(INFO);
        this.finish = (p) => transport.finishAuth(p.get('code')!);
        await client.connect(transport);
        return {
          call: (name, args = {}) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>,
          readResource: async (uri) => ((await client.readResource({ uri })).contents[0] as { text: string }).text,
          era: () => transport.protocolVersion,
          sessionId: () => transport.sessionId,
          close: () => client.close(),
        };
      }
      const transport = new V2Http(new URL(this.url), { authProvider: this.provider, fetch });
      // Pinned to 2026-07-28, or 'legacy' (initialize, 2025-11-25): the SDK pins modern revisions only.
      const mode = this.kind === 'v2 2026-07-28' ? { pin: '2026-07-28' } : 'legacy';
      const client = new V2Client(INFO, { versionNegotiation: { mode } });
      this.finish = (p) => transport.finishAuth(p);
      await client.connect(transport);
      return {
        call: (name, args = {}) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>,
        readResource: async (uri) => ((await client.readResource({ uri })).contents[0] as { text: string }).text,
        era: () => client.getNegotiatedProtocolVersion(),
        sessionId: () => transport.sessionId,
        close: () => client.close(),
      };
    } catch (e) {
      if (e instanceof V1Unauthorized || e instanceof V2Unauthorized) return undefined;
      throw e;
    }
  }

  /** Redeem the callback's answer with the transport that started the sign-in. */
  finish: (params: URLSearchParams) => Promise<void> = () => Promise.reject(new Error('no sign-in started'));

  /** Connect, signing the person in with `key` at the consent page when the server asks. */
  async signIn(key: string): Promise<Session> {
    expect(await this.connect(), 'a first connect without a token must be sent to sign in').toBeUndefined();
    const params = await consentWith(this.provider, key);
    await this.finish(params);
    const session = await this.connect();
    expect(session, 'connected after signing in').toBeDefined();
    return session!;
  }
}

/**
 * Each person's own browser profile (cookies of their own), kept until the browser closes.
 * (Chromium's shared-memory files a closing page's renderer can leave stay in the browser's own
 * temp folder: test/helpers/browser.ts.)
 */
const profiles = new Map<string, BrowserContext>();

/** The person `who` opens the consent page the host sent them to, in a window of their own browser. */
async function openConsent(url: URL, who: string): Promise<Page> {
  let profile = profiles.get(who);
  if (!profile) profiles.set(who, (profile = await browser.createBrowserContext()));
  const page = await profile.newPage();
  const res = await page.goto(url.href);
  expect(res?.status(), await res?.text()).toBe(200);
  return page;
}

/**
 * Type `key` (if any) and click Allow or Deny: the page's answer status, and, when the browser
 * landed on the host's callback, the query the callback heard (by the page's own URL: people
 * sign in at once).
 */
async function decide(
  page: Page,
  key: string | undefined,
  decision: 'allow' | 'deny',
): Promise<{ status?: number; heard?: URLSearchParams }> {
  if (key !== undefined) await page.type('input[name=api_key]', key);
  const [res] = await Promise.all([page.waitForNavigation(), page.click(`button[name=decision][value=${decision}]`)]);
  const landed = new URL(page.url());
  const heard = `${landed.origin}${landed.pathname}` === host.callback ? host.heard.find((q) => `?${q}` === landed.search) : undefined;
  if (`${landed.origin}${landed.pathname}` === host.callback) expect(heard, 'the callback heard what the browser landed on').toBeDefined();
  return { status: res?.status(), heard };
}

/** Sign in at the consent page with `key`: the callback's query, its state the one the host sent. */
async function consentWith(provider: HostProvider, key: string): Promise<URLSearchParams> {
  const page = await openConsent(provider.lastAuthorization(), key);
  try {
    const { heard } = await decide(page, key, 'allow');
    expect(heard?.get('code'), `no code: ${heard}`).toBeTruthy();
    expect(heard!.get('state')).toBe(provider.sentState);
    return heard!;
  } finally {
    await page.close();
  }
}

const data = (r: CallToolResult) => (r.structuredContent as { data: any }).data;
const me = async (s: Session) => data(await s.call('getMe')) as { id: number; name: string };

/** A raw JSON-RPC POST to the MCP endpoint: its status and WWW-Authenticate. */
async function post(url: string, headers: Record<string, string>, body: object): Promise<{ status: number; auth: string | null }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  await res.body?.cancel();
  return { status: res.status, auth: res.headers.get('www-authenticate') };
}

const TOOLS_LIST = { jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} };

/** The built CLI serving `db` with --auth oauth on a free loopback port (its public URL). */
async function serveOAuth(db: string): Promise<string> {
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const started = await spawnAnnounced(
    ['mcp', '--http', '--auth', 'oauth', '--public-url', publicUrl, '--port', String(port), '--db', db],
    /(http:\/\/\S+\/mcp)/,
    // The server trusts the loopback certificate the metadata document is served with, as it would a public CA's.
    cliEnv({ WORKSPACE_DATA_DIR: tempDir(), WORKSPACE_SECRET: SECRET, NODE_EXTRA_CA_CERTS: host.caFile }),
  );
  expect(started.url).toBe(`${publicUrl}/mcp`);
  return started.url;
}

const SIGN_INS: Array<[Kind, Naming]> = [
  ['v2 2026-07-28', 'registration'],
  ['v2 2026-07-28', 'metadata document'],
  ['v2 2025-11-25', 'registration'],
  ['v2 2025-11-25', 'metadata document'],
  ['v1', 'registration'],
  ['v1', 'metadata document'],
];

/** The same behaviour on each store: `database()` gives a seeded database's --db value. */
function onStore(database: () => Promise<string>) {
  let url: string;
  let db: string;

  beforeAll(async () => {
    db = await database();
    url = await serveOAuth(db);
  }, 60_000);

  const newHost = (kind: Kind, naming: Naming, name = `${kind} host`) =>
    new Host(kind, url, new HostProvider(name, host.callback, naming === 'metadata document' ? host.documentUrl : undefined));

  test.each(SIGN_INS)('%s, named by %s: discovers, signs the person in at the consent page, acts as them', async (kind, naming) => {
    const h = newHost(kind, naming);
    const fetchesBefore = host.documentFetches();
    const alice = await h.signIn('alice-key');
    try {
      if (naming === 'registration') expect(h.provider.clientId()).toMatch(/^wmc_[0-9a-f]{32}$/);
      else {
        expect(h.provider.clientId()).toBe(host.documentUrl);
        // The server fetched the document (or kept it from an earlier sign-in of this server).
        expect(host.documentFetches()).toBeGreaterThanOrEqual(fetchesBefore);
        expect(host.documentFetches()).toBeGreaterThan(0);
      }
      // The authorization request: PKCE S256, the MCP endpoint as the resource.
      const asked = h.provider.lastAuthorization().searchParams;
      expect(asked.get('code_challenge_method')).toBe('S256');
      expect(asked.get('resource')).toBe(url);
      expect(alice.era()).toBe(kind === 'v2 2026-07-28' ? '2026-07-28' : '2025-11-25');
      expect(alice.sessionId() !== undefined).toBe(kind !== 'v2 2026-07-28');
      expect(await me(alice)).toMatchObject({ id: 1, name: 'Alice' });
      const found = await alice.call('findContacts', { query: 'Ann' });
      expect(found.isError, JSON.stringify(found)).toBeFalsy();
      expect(JSON.stringify(found.structuredContent)).toMatch(/"Ann"/);
      expect(JSON.stringify(found.structuredContent)).not.toMatch(/Bob fan/);
      expect(h.tokenCalls).toEqual([{ grantType: 'authorization_code', status: 200 }]);
    } finally {
      await alice.close();
    }
  });

  test('a wrong key shows the problem and gives no code; Deny sends the client access_denied; then the right key signs in', async () => {
    const h = newHost('v2 2026-07-28', 'registration', 'Careful host');
    expect(await h.connect()).toBeUndefined();
    let page = await openConsent(h.provider.lastAuthorization(), 'careful');
    try {
      expect(await page.$eval('h1', (e: any) => e.textContent)).toBe('Allow Careful host to use your Workspace?');
      const wrong = await decide(page, 'nobody-key', 'allow');
      expect(wrong).toEqual({ status: 400, heard: undefined });
      expect(new URL(page.url()).pathname).toBe('/oauth/authorize');
      expect(await page.$eval('[role=alert]', (e: any) => e.textContent)).toMatch(/That key was not accepted/);
      expect(await page.$eval('input[name=api_key]', (e: any) => [e.getAttribute('aria-invalid'), e.value])).toEqual(['true', '']);
      expect(await page.content()).not.toContain('nobody-key');
      const denied = await decide(page, undefined, 'deny');
      expect(denied.heard?.get('error')).toBe('access_denied');
      expect(denied.heard?.get('code')).toBeNull();
      expect(denied.heard?.get('state')).toBe(h.provider.sentState);
      await expect(h.finish(denied.heard!)).rejects.toMatchObject({ code: 'access_denied' });
    } finally {
      await page.close();
    }
    // The person tries again: a wrong key, then the right one on the same page.
    expect(await h.connect()).toBeUndefined();
    page = await openConsent(h.provider.lastAuthorization(), 'careful');
    try {
      expect((await decide(page, 'alice-key-typo', 'allow')).heard).toBeUndefined();
      const right = await decide(page, 'alice-key', 'allow');
      expect(right.heard?.get('code')).toBeTruthy();
      await h.finish(right.heard!);
    } finally {
      await page.close();
    }
    const alice = (await h.connect())!;
    expect(await me(alice)).toMatchObject({ id: 1, name: 'Alice' });
    await alice.close();
  });

  test('a regenerated key: the next request is 401, the refresh fails, the person signs in again with the new key', async () => {
    const hosts = [newHost('v2 2026-07-28', 'registration'), newHost('v1', 'metadata document')];
    const sessions = [];
    for (const h of hosts) sessions.push(await h.signIn('cleo-key'));
    for (const s of sessions) expect(await me(s)).toMatchObject({ id: 5, name: 'Cleo' });
    const oldAccess = hosts[0]!.provider.tokens()!.access_token;
    const regenerated = await runCliAsync(['admin', 'regenerate-key', '--owner', '5', '--db', db], cliEnv({ WORKSPACE_SECRET: SECRET }));
    expect(regenerated.status, regenerated.stderr).toBe(0);
    const fresh = regenerated.stdout.trim();
    expect(fresh).not.toBe('cleo-key');
    for (const [i, h] of hosts.entries()) {
      // The call fails: the server answered 401, the SDK's refresh was refused, it sent Cleo to sign in again.
      const signInsBefore = h.provider.authorizations.length;
      await expect(sessions[i]!.call('getMe')).rejects.toThrow();
      expect(h.tokenCalls.at(-1)).toEqual({ grantType: 'refresh_token', status: 400, error: 'invalid_grant' });
      expect(h.provider.authorizations.length).toBe(signInsBefore + 1);
      await sessions[i]!.close().catch(() => {});
    }
    const refused = await post(url, { Authorization: `Bearer ${oldAccess}`, 'Mcp-Protocol-Version': '2025-11-25' }, TOOLS_LIST);
    expect(refused.status).toBe(401);
    expect(refused.auth).toMatch(/error="invalid_token"/);
    // The old key at the consent page gives no code; the new one signs in.
    const page = await openConsent(hosts[0]!.provider.lastAuthorization(), 'cleo');
    try {
      expect((await decide(page, 'cleo-key', 'allow')).heard).toBeUndefined();
      const right = await decide(page, fresh, 'allow');
      await hosts[0]!.finish(right.heard!);
    } finally {
      await page.close();
    }
    const again = (await hosts[0]!.connect())!;
    expect(await me(again)).toMatchObject({ id: 5, name: 'Cleo' });
    await again.close();
  });

  test("two people signed in at once: each is themselves; a 2025 session of one is 404 to the other; the audit names each one's client", async () => {
    const aliceHost = newHost('v1', 'registration', 'Alice host');
    const bobHost = newHost('v2 2026-07-28', 'metadata document');
    const [alice, bob] = await Promise.all([aliceHost.signIn('alice-key'), bobHost.signIn('bob-key')]);
    try {
      const names = await Promise.all([alice, bob, alice, bob].map(async (s) => (await me(s)).name));
      expect(names).toEqual(['Alice', 'Bob', 'Alice', 'Bob']);
      const theirs = await bob.call('findContacts', { query: 'Ann' });
      expect(JSON.stringify(theirs.structuredContent)).not.toMatch(/"Ann"/);
      expect((await bob.call('getContactAccounts', { contact_id: 100 })).isError).toBe(true);
      // Alice's 2025 session id with Bob's token: not found; with no token: sign in first.
      const session = { 'Mcp-Session-Id': alice.sessionId()!, 'Mcp-Protocol-Version': '2025-11-25' };
      const bobToken = bobHost.provider.tokens()!.access_token;
      expect((await post(url, { ...session, Authorization: `Bearer ${bobToken}` }, TOOLS_LIST)).status).toBe(404);
      expect((await post(url, session, TOOLS_LIST)).status).toBe(401);
      expect(await me(alice)).toMatchObject({ id: 1 });
      // A move of Alice's: her audit names her and the client she signed in with; Bob's holds none of it.
      const topUp = { account_id: 500, amount: 100, description: 'OAuth bonus', idempotency_key: `e2e-${Date.now()}` };
      expect((await alice.call('addFundsToContactAccount', topUp)).isError).toBeFalsy();
      const audit = async (s: Session) => JSON.parse(await s.readResource('workspace://audit')).data as Array<Record<string, any>>;
      const hers = (await audit(alice)).filter((e) => JSON.stringify(e).includes(topUp.idempotency_key));
      expect(hers).toHaveLength(1);
      expect(hers[0]).toMatchObject({ owner_id: 1, oauth_client: { id: aliceHost.provider.clientId(), name: 'Alice host' } });
      expect(JSON.stringify(await audit(bob))).not.toContain(topUp.idempotency_key);
      expect(firstJson(await bob.call('getWorkspace'))).toMatchObject({ owner: { id: 2 }, default_bot_id: 20 });
    } finally {
      await Promise.all([alice.close(), bob.close()]);
    }
  });
}

describe('mcp --http --auth oauth on a SQLite file', () => {
  onStore(async () => seedDb(world()));
});

describe('mcp --http --auth oauth on PostgreSQL', () => {
  const pg = usePostgres();
  onStore(async () => {
    const url = await pg.server().database();
    const fixture = join(tempDir(), 'world.json');
    writeFileSync(fixture, JSON.stringify(world()));
    const seeded = await runCliAsync(['seed', fixture, '--db', url], cliEnv());
    expect(seeded.status, seeded.stderr).toBe(0);
    return url;
  });
});
