/**
 * A fuzz of `--auth oauth`'s endpoints (issue 31): malformed, replayed and mismatched
 * redirect_uri, state, verifier, resource and client_id, random bytes as bodies, wrong content
 * types; redirect URIs that only begin like a registered one, taken through consent with a good
 * key, so a code sent to one would show. Never a 500; no answer holds a key, a token, a stack trace or a path of this machine;
 * and nothing changes (no grant made, no token issued) unless the request was right. The built
 * CLI on a seeded SQLite world, raw HTTP on 127.0.0.1, the state file read directly.
 * FUZZ_RUNS sets fast-check's runs per property.
 */
import { homedir } from 'node:os';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  authorizeGet,
  authorizeParams,
  consentForm,
  consentPost,
  exchange,
  http,
  kept,
  pkce,
  REDIRECT,
  register,
  seedWorld,
  signIn,
  startOAuth,
  type Answer,
  type OAuthRun,
} from './oauth-flow.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 8);

let run: OAuthRun;
let clientId: string;
/** A signed-in grant's tokens: no answer may show them. */
let tokens: { access_token: string; refresh_token: string };
beforeAll(async () => {
  run = await startOAuth(await seedWorld());
  clientId = await register(run.base);
  ({ tokens } = await signIn(run.base, 'alice-key', clientId));
}, 60_000);
afterAll(() => run?.close());

/** Under 500, and nothing of the server's own in the answer. */
function sane(a: Answer, where: string): void {
  expect(a.status, `${where}: ${a.text.slice(0, 300)}`).toBeLessThan(500);
  const all = `${a.text}\n${[...a.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}`;
  for (const secret of ['alice-key', tokens.access_token, tokens.refresh_token, run.dataDir, process.cwd(), homedir(), 'node_modules'])
    expect(all.includes(secret), `${where} shows ${secret}`).toBe(false);
  expect(all, where).not.toMatch(/\n\s+at \S+ \(|\.(ts|js):\d+:\d+/);
}

/** How many grants and tokens are kept. */
async function counts(): Promise<{ grants: number; tokens: number }> {
  const k = await kept(run);
  return { grants: k.grants.length, tokens: k.tokens.length };
}

/** A value in place of a parameter: left out, empty, random, near the right one, or a second copy. */
const mutation = () =>
  fc
    .oneof(
      fc.constant({ kind: 'drop' as const }),
      fc.constant({ kind: 'set' as const, value: '' }),
      fc.string({ maxLength: 80 }).map((value) => ({ kind: 'set' as const, value })),
      fc
        .constantFrom(
          'https://evil.example/cb',
          'javascript:alert(1)',
          `${REDIRECT}#x`,
          `${REDIRECT}/..`,
          'http://127.0.0.1:9/callback?x=1',
        )
        .map((value) => ({ kind: 'set' as const, value })),
      fc.constant({ kind: 'suffix' as const }),
      fc.constant({ kind: 'twice' as const }),
    )
    .map((m): Mutation => m);

type Mutation = { kind: 'drop' | 'set' | 'suffix' | 'twice'; value?: string };

/**
 * `params` with `mutations` applied; whether the result differs from them in meaning (leaving out
 * one of `optional` does not: resource is optional (RFC 8707), as is redirect_uri where the client
 * registered one alone).
 */
function mutate(
  params: Record<string, string>,
  mutations: Record<string, Mutation>,
  optional: string[] = ['resource', 'redirect_uri'],
): { query: URLSearchParams; changed: boolean } {
  const query = new URLSearchParams();
  let changed = false;
  const names = new Set([...Object.keys(params), ...Object.keys(mutations)]);
  for (const name of names) {
    const right = params[name];
    const m = mutations[name];
    if (!m) {
      if (right !== undefined) query.append(name, right);
      continue;
    }
    if (m.kind === 'drop') changed ||= right !== undefined && !optional.includes(name);
    else if (m.kind === 'set') {
      query.append(name, m.value!);
      changed ||= m.value !== right;
    } else if (m.kind === 'suffix') {
      query.append(name, `${right ?? ''}x`);
      changed = true;
    } else {
      query.append(name, right ?? 'x');
      query.append(name, right ?? 'x');
      changed = true;
    }
  }
  return { query, changed };
}

const AUTHORIZE_FIELDS = [
  'client_id',
  'redirect_uri',
  'code_challenge',
  'code_challenge_method',
  'resource',
  'response_type',
  'state',
  'csrf',
];

test('the consent form posted back with its fields mismatched: a code only for the request the page was made for', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.dictionary(fc.constantFrom(...AUTHORIZE_FIELDS), mutation(), { maxKeys: 3 }),
      fc.constantFrom('alice-key', 'wrong-key', ''),
      async (mutations, key) => {
        const { challenge } = pkce();
        const page = await authorizeGet(run.base, authorizeParams(run.base, clientId, challenge));
        const form = consentForm(page);
        const { query, changed } = mutate({ ...form.fields, api_key: key, decision: 'allow' }, mutations);
        const before = await counts();
        const r = await http(`${run.base}/oauth/authorize`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: form.cookie },
          body: query.toString(),
        });
        sane(r, `consent ${query}`);
        const code = r.location?.searchParams.get('code');
        const right = !changed && key === 'alice-key';
        expect(Boolean(code), `consent ${query}`).toBe(right);
        expect((await counts()).grants, `consent ${query}`).toBe(before.grants + (right ? 1 : 0));
        if (code) expect(`${r.location!.origin}${r.location!.pathname}`).toBe(REDIRECT);
      },
    ),
    { numRuns: RUNS },
  );
});

test('the authorization request mismatched: never a 500, never a grant, a redirect only to the registered URI', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.dictionary(fc.constantFrom(...AUTHORIZE_FIELDS.filter((f) => f !== 'csrf')), mutation(), { maxKeys: 4 }),
      async (mutations) => {
        const { query } = mutate(authorizeParams(run.base, clientId, pkce().challenge), mutations);
        const before = await counts();
        const r = await http(`${run.base}/oauth/authorize?${query}`);
        sane(r, `authorize ${query}`);
        if (r.location) expect(`${r.location.origin}${r.location.pathname}`).toBe(REDIRECT);
        expect(r.location?.searchParams.has('code') ?? false).toBe(false);
        expect(await counts()).toEqual(before);
      },
    ),
    { numRuns: RUNS },
  );
});

/** What an attacker adds to a registered redirect URI so that it still begins like it (or differs by a character). */
const NEAR = [
  '.evil.test/cb',
  '.evil.test',
  '@evil.test/cb',
  ':8443/cb',
  '/',
  '/cbx',
  '/cb/../../evil',
  '?next=https://evil.test',
  '%2F%2Fevil.test',
  'x',
  '#frag',
  '',
];

test('a redirect_uri that only begins like a registered one: no consent page for it, and a code only ever to a registered URI', async () => {
  // https, not loopback: a loopback http URI may differ in its port (RFC 8252 §7.3), these only never.
  const registered = ['https://app.example', 'https://app.example/cb'];
  const id = await register(run.base, registered, 'Prefix app');
  const uri = fc
    .tuple(fc.constantFrom(...registered), fc.oneof(fc.constantFrom(...NEAR), fc.string({ maxLength: 20 })))
    .map(([r, tail]) => r + tail);
  await fc.assert(
    fc.asyncProperty(uri, async (redirectUri) => {
      const page = await authorizeGet(run.base, authorizeParams(run.base, id, pkce().challenge, { redirect_uri: redirectUri }));
      sane(page, `authorize ${redirectUri}`);
      if (page.status === 200) {
        // The person allows with a good key: where does the code go?
        const back = await consentPost(run.base, consentForm(page), { key: 'alice-key' });
        sane(back, `consent ${redirectUri}`);
        if (back.location?.searchParams.has('code')) {
          const to = new URL(back.location);
          for (const added of ['code', 'state', 'iss']) to.searchParams.delete(added);
          expect(
            registered.map((r) => new URL(r).href),
            `a code went to ${back.location.href}`,
          ).toContain(to.href);
        }
      }
      expect(page.status, redirectUri).toBe(registered.includes(redirectUri) ? 200 : 400);
    }),
    { numRuns: RUNS * 4, examples: NEAR.map((tail) => [`${registered[0]}${tail}`]) },
  );
});

const TOKEN_FIELDS = ['grant_type', 'code', 'code_verifier', 'client_id', 'redirect_uri', 'resource'];

test('a code exchanged with its fields mismatched or replayed: tokens only when every field is right, and only once', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.dictionary(fc.constantFrom(...TOKEN_FIELDS), mutation(), { maxKeys: 3 }),
      fc.boolean(),
      async (mutations, replay) => {
        const { verifier, challenge } = pkce();
        const page = await authorizeGet(run.base, authorizeParams(run.base, clientId, challenge));
        const code = (await consentPost(run.base, consentForm(page), { key: 'alice-key' })).location!.searchParams.get('code')!;
        const right = {
          grant_type: 'authorization_code',
          code,
          code_verifier: verifier,
          client_id: clientId,
          redirect_uri: REDIRECT,
          resource: run.mcp,
        };
        if (replay) expect((await exchange(run.base, right)).status).toBe(200);
        const { query, changed } = mutate(right, mutations);
        const before = await counts();
        const r = await http(`${run.base}/oauth/token`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: query.toString(),
        });
        sane(r, `token ${query}`);
        const issued = r.status === 200;
        expect(issued, `token ${query}: ${r.text}`).toBe(!changed && !replay);
        expect((await counts()).tokens).toBe(before.tokens + (issued ? 2 : 0));
      },
    ),
    { numRuns: RUNS },
  );
});

const PATHS = [
  '/oauth/authorize',
  '/oauth/token',
  '/oauth/register',
  '/oauth/revoke',
  '/.well-known/oauth-authorization-server',
  '/.well-known/oauth-protected-resource/mcp',
  '/mcp',
];
const TYPES = [
  undefined,
  'application/json',
  'application/x-www-form-urlencoded',
  'text/plain',
  'application/octet-stream',
  'multipart/form-data; boundary=x',
  'application/x-www-form-urlencoded; charset=utf-16',
  'application/json; charset=latin1',
];

test('random bytes, forms and JSON to every endpoint, under any content type: never a 500, nothing leaks, no grant or token', async () => {
  const body = fc.oneof(
    fc.uint8Array({ maxLength: 2000 }).map((b) => Buffer.from(b)),
    fc
      .dictionary(
        fc.constantFrom('grant_type', 'code', 'token', 'refresh_token', 'client_id', 'redirect_uris', 'api_key', 'csrf'),
        fc.string(),
      )
      .map((d) => Buffer.from(new URLSearchParams(d).toString())),
    fc.json().map((j) => Buffer.from(j)),
    fc.constant(Buffer.from(`token=${'a'.repeat(20_000)}`)),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...PATHS),
      fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'OPTIONS'),
      fc.constantFrom(...TYPES),
      body,
      async (path, method, type, bytes) => {
        const before = await counts();
        const r = await http(`${run.base}${path}`, {
          method,
          headers: { ...(type ? { 'Content-Type': type } : {}), Accept: 'application/json, text/event-stream' },
          ...(method === 'GET' ? {} : { body: bytes }),
        });
        sane(r, `${method} ${path} ${type}`);
        expect(await counts()).toEqual(before);
      },
    ),
    { numRuns: RUNS * 4 },
  );
});
