/**
 * OAuth sign-in's parts in-process, where the built CLI cannot reach: Client ID Metadata
 * Documents served by the test on loopback (allowed: the deployment's public URL is loopback),
 * the documents refused and why, the SSRF guard of a deployment on an https public URL (no
 * connection made to a private address), and the clock (a code past its minute, a token past its
 * hour). The real OAuthServer over a real MCP state file, served on 127.0.0.1; keys checked
 * against a real seeded store.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { OAuthServer } from '../../src/oauth/server.js';
import { sealerOf } from '../../src/oauth/secrets.js';
import { McpStateStore } from '../../src/state/mcp-state.js';
import { answeredAtOnce } from '../../src/state/async.js';
import { hashKey } from '../../src/store/keys.js';
import { openStore, seedStore } from '../helpers/store.js';
import { tempDir } from '../helpers/world.js';
import { authorizeGet, authorizeParams, consentForm, consentPost, exchange, pkce, REDIRECT, register } from './oauth-flow.js';
import { mcpFixture } from './harness.js';

const servers: Server[] = [];
const closing: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const c of closing.splice(0)) await c();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  servers.push(server);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` })),
  );
}

/** The authorization server in-process: `publicUrl` its issuer (undefined: its own loopback address), `clock` its time. */
async function startServer(
  publicUrl?: string,
  clock = { now: Date.now() },
): Promise<{ base: string; oauth: OAuthServer; clock: { now: number } }> {
  const store = openStore(seedStore(mcpFixture()));
  const state = McpStateStore.open(join(tempDir(), 'mcp-state.sqlite'));
  let oauth: OAuthServer | undefined;
  const { server, url } = await listen((req, res) => {
    void oauth!.serve(req, res, new URL(req.url ?? '/', 'http://x').pathname).then((served) => {
      if (!served) res.writeHead(404).end();
    });
  });
  oauth = new OAuthServer({
    publicUrl: new URL(publicUrl ?? url),
    store: answeredAtOnce(state).oauth(),
    sealer: sealerOf(Buffer.alloc(32, 7)),
    checkKey: async (key) => {
      const owner = store.owners.byHash(hashKey(key));
      return owner && owner.plan === 'pro' && !owner.blocked_at ? { id: owner.id } : { status: 401, message: 'unauthorized' };
    },
    now: () => clock.now,
  });
  closing.push(
    () => oauth!.close(),
    () => state.close(),
  );
  void server;
  return { base: url, oauth, clock };
}

/** A loopback server of metadata documents: each path's answer, and every request it saw. */
async function documents(answers: Record<string, (self: string) => { status?: number; headers?: Record<string, string>; body: string }>) {
  const seen: string[] = [];
  const { url } = await listen((req, res) => {
    seen.push(req.url ?? '');
    const a = answers[req.url ?? '']?.(`${url}${req.url}`);
    if (!a) return res.writeHead(404).end();
    res.writeHead(a.status ?? 200, { 'Content-Type': 'application/json', ...a.headers }).end(a.body);
  });
  return { url, seen };
}

const doc = (self: string, more: object = {}) =>
  JSON.stringify({ client_id: self, client_name: 'Doc app', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', ...more });

describe('Client ID Metadata Documents on a loopback deployment', () => {
  let base: string;
  let docs: Awaited<ReturnType<typeof documents>>;
  beforeAll(async () => {
    ({ base } = await startServer());
    docs = await documents({
      '/good.json': (self) => ({ body: doc(self), headers: { 'Cache-Control': 'max-age=600' } }),
      '/other-id.json': (self) => ({ body: doc(self.replace('other-id', 'good')) }),
      '/big.json': (self) => ({ body: doc(self, { padding: 'x'.repeat(20_000) }) }),
      '/not-json.json': () => ({ body: '<html>hello</html>' }),
      '/moved.json': (self) => ({ status: 302, headers: { Location: self.replace('moved', 'good') }, body: '' }),
      '/bad-redirect.json': (self) => ({ body: doc(self, { redirect_uris: ['javascript:alert(1)'] }) }),
      '/secret-client.json': (self) => ({ body: doc(self, { token_endpoint_auth_method: 'private_key_jwt' }) }),
    });
  });

  test('a document whose client_id is its own URL: the consent page names its client, and the flow gives a code', async () => {
    const clientId = `${docs.url}/good.json`;
    const { verifier, challenge } = pkce();
    const page = await authorizeGet(base, authorizeParams(base, clientId, challenge));
    expect(page.status, page.text).toBe(200);
    expect(page.text).toMatch(/Doc app/);
    const back = await consentPost(base, consentForm(page), { key: 'alice-key' });
    const code = back.location!.searchParams.get('code')!;
    expect(code).toMatch(/^wmo_code_/);
    const t = await exchange(base, { code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT });
    expect(t.status, t.text).toBe(200);
    // Kept: fetched once for both requests.
    expect(docs.seen.filter((p) => p === '/good.json')).toHaveLength(1);
  });

  test.each([
    ['/other-id.json', /does not name its own URL/],
    ['/big.json', /over 16384 bytes/],
    ['/not-json.json', /not JSON/],
    ['/moved.json', /answered 302/],
    ['/missing.json', /answered 404/],
    ['/bad-redirect.json', /redirect_uris/],
    ['/secret-client.json', /token_endpoint_auth_method/],
  ])('%s is refused with a page that says why, and nothing is sent anywhere', async (path, why) => {
    const r = await authorizeGet(base, authorizeParams(base, `${docs.url}${path}`, pkce().challenge));
    expect([r.status, r.location]).toEqual([400, undefined]);
    expect(r.text).toMatch(why);
    // The redirect of /moved.json was not followed.
    expect(docs.seen.filter((p) => p === '/good.json').length).toBeLessThanOrEqual(1);
  });
});

describe('the SSRF guard of a deployment on https', () => {
  let base: string;
  let docs: Awaited<ReturnType<typeof documents>>;
  beforeAll(async () => {
    ({ base } = await startServer('https://mcp.example.com'));
    docs = await documents({ '/good.json': (self) => ({ body: doc(self) }) });
  });
  afterEach(() => {
    expect(docs.seen).toEqual([]);
  });

  test.each([
    'https://10.0.0.1/x',
    'https://169.254.169.254/latest',
    'https://[fd00::1]/x',
    // An IPv4-mapped address, as URL writes it (::ffff:10.0.0.1).
    'https://[::ffff:a00:1]/x',
    'https://192.168.1.1/client.json',
    'https://100.64.0.1/x',
    'https://[fe80::1]/x',
    // Teredo (2001::/32): the IPv4 address it tunnels to is in the address itself; and 6to4 (2002::/16), NAT64 (64:ff9b::/96), alike.
    'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/x',
    'https://[2001::a00:1]/x',
    'https://[2002:a00:1::]/x',
    'https://[64:ff9b::a00:1]/x',
  ])('%s: refused without a connection', async (clientId) => {
    const started = Date.now();
    const r = await authorizeGet(base, authorizeParams(base, clientId, pkce().challenge));
    expect([r.status, r.location]).toEqual([400, undefined]);
    expect(r.text).toMatch(/private or reserved address/);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  test('loopback, while the public URL is not: by address, by name, over http: refused, the listening server sees nothing', async () => {
    const port = new URL(docs.url).port;
    for (const clientId of [
      `https://127.0.0.1:${port}/good.json`,
      `https://localhost:${port}/good.json`,
      `http://127.0.0.1:${port}/good.json`,
      `https://[::1]:${port}/good.json`,
      `https://[::ffff:7f00:1]:${port}/good.json`,
    ]) {
      const started = Date.now();
      const r = await authorizeGet(base, authorizeParams(base, clientId, pkce().challenge));
      expect([r.status, r.location], clientId).toEqual([400, undefined]);
      expect(r.text, clientId).toMatch(/loopback address|could not be fetched|no client is registered/);
      expect(Date.now() - started).toBeLessThan(1000);
    }
  });
});

describe('the clock', () => {
  test('a code past its minute is invalid_grant; an access token past its hour is refused', async () => {
    const { base, oauth, clock } = await startServer();
    const clientId = await register(base);
    const { verifier, challenge } = pkce();
    const page = await authorizeGet(base, authorizeParams(base, clientId, challenge));
    const code = (await consentPost(base, consentForm(page), { key: 'alice-key' })).location!.searchParams.get('code')!;
    clock.now += 61_000;
    const late = await exchange(base, { code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT });
    expect([late.status, JSON.parse(late.text).error]).toEqual([400, 'invalid_grant']);
    expect(JSON.parse(late.text).error_description).toMatch(/expired/);
    // In time: tokens, then the access token's hour passes.
    const again = consentForm(await authorizeGet(base, authorizeParams(base, clientId, challenge)));
    const code2 = (await consentPost(base, again, { key: 'alice-key' })).location!.searchParams.get('code')!;
    const t = JSON.parse(
      (await exchange(base, { code: code2, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT })).text,
    );
    expect('grant' in (await oauth.signedIn(`Bearer ${t.access_token}`))).toBe(true);
    clock.now += 3600_000;
    const refused = await oauth.signedIn(`Bearer ${t.access_token}`);
    expect(refused).toMatchObject({ status: 401, headers: { 'WWW-Authenticate': expect.stringMatching(/error="invalid_token"/) } });
  });
});
