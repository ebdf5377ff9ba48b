/**
 * `mcp --http --auth oauth`'s endpoints, one by one, as a client (or an attacker) meets them:
 * the built CLI on a seeded world over SQLite and over PostgreSQL, raw HTTP on 127.0.0.1, the
 * state store read directly to see what was kept. Alice is owner 1 (alice-key), Bob owner 2.
 */
import { parseSetCookie } from 'cookie';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runCliAsync, cliEnv } from '../helpers/cli.js';
import { usePostgres } from '../helpers/postgres.js';
import {
  authorizeGet,
  authorizeParams,
  codeFor,
  consentForm,
  consentPost,
  exchange,
  form,
  http,
  kept,
  mcpInit,
  pkce,
  REDIRECT,
  register,
  seedWorld,
  signIn,
  startOAuth,
  type OAuthRun,
} from './oauth-flow.js';

/** `admin COMMAND` of the built CLI on the run's database and data folder. */
const admin = (run: OAuthRun, args: string[]) =>
  runCliAsync(['admin', ...args, '--db', run.db], cliEnv({ WORKSPACE_DATA_DIR: run.dataDir }));

/** JSON lines of `admin grants`. */
async function grants(run: OAuthRun): Promise<Array<Record<string, unknown>>> {
  const r = await admin(run, ['grants']);
  expect(r.status, r.stderr).toBe(0);
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const jsonOf = (text: string) => JSON.parse(text) as Record<string, any>;

function suite(dbOf: () => Promise<string>): void {
  let run: OAuthRun;
  let base: string;
  beforeAll(async () => {
    run = await startOAuth(await dbOf());
    base = run.base;
  }, 60_000);
  afterAll(() => run?.close());

  test('the metadata documents: exactly the fields the contract names, and the MCP SDK builds from', async () => {
    const pr = await http(`${base}/.well-known/oauth-protected-resource/mcp`);
    expect(pr.status).toBe(200);
    // "RFC 9728 metadata, `resource` = the MCP endpoint, `authorization_servers` = [public url]"
    expect(jsonOf(pr.text)).toEqual({
      resource: `${base}/mcp`,
      authorization_servers: [base],
      scopes_supported: ['workspace:read', 'workspace:write', 'workspace:money', 'workspace:message'],
      resource_name: 'Workspace',
    });
    expect((await http(`${base}/.well-known/oauth-protected-resource`)).text).toBe(pr.text);
    const as = await http(`${base}/.well-known/oauth-authorization-server`);
    expect(as.status).toBe(200);
    // "RFC 8414 metadata with `authorization_endpoint`, `token_endpoint`, `registration_endpoint` (RFC 7591, public
    // clients), `revocation_endpoint` (RFC 7009), `code_challenge_methods_supported` ⊇ `S256`, `grant_types_supported`
    // ⊇ `authorization_code`, `refresh_token`, and `client_id_metadata_document_supported: true`"
    expect(jsonOf(as.text)).toEqual({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      registration_endpoint: `${base}/oauth/register`,
      revocation_endpoint: `${base}/oauth/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none'],
      scopes_supported: ['workspace:read', 'workspace:write', 'workspace:money', 'workspace:message'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
  });

  test('Client ID Metadata Documents are offered as clients look for them: supported, and token endpoint auth none', async () => {
    // The rule clients follow: a client picks CIMD (its client_id a URL of its metadata document, no
    // registration) only when the server advertises `client_id_metadata_document_supported: true`
    // *and* lists `none` in `token_endpoint_auth_methods_supported` (opencode and Codex check both;
    // Claude's documentation requires `none`). A document client holds no secret, so a server without
    // `none` could not let it in at the token endpoint; missing either, these clients fall back to
    // registration or give up.
    const as = await http(`${base}/.well-known/oauth-authorization-server`);
    expect([as.status, as.headers.get('content-type')]).toEqual([200, expect.stringMatching(/^application\/json/)]);
    const doc = jsonOf(as.text);
    expect(doc.client_id_metadata_document_supported).toBe(true);
    expect(doc.token_endpoint_auth_methods_supported).toContain('none');
    // Revocation is asked for the same way by the same clients.
    expect(doc.revocation_endpoint_auth_methods_supported).toContain('none');
  });

  test('/mcp without a valid token: 401 with the challenge that starts sign-in (error="invalid_token" once a token was sent)', async () => {
    const challenge = `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="workspace"`;
    const none = await mcpInit(run.mcp, undefined);
    expect([none.status, none.headers.get('www-authenticate')]).toEqual([401, challenge]);
    for (const token of ['wmo_at_nothing', 'alice-key', '']) {
      const bad = await mcpInit(run.mcp, token);
      expect(bad.status, token).toBe(401);
      expect(bad.headers.get('www-authenticate'), token).toMatch(
        new RegExp(`^${challenge.replace(/[.?]/g, '\\$&')}, error="invalid_(token|request)"`),
      );
      expect(bad.text).not.toMatch(/serverInfo/);
    }
  });

  test('registration (RFC 7591): a public client is registered; refused redirect URIs and auth methods register nothing', async () => {
    const ok = await http(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_name: 'Good app', redirect_uris: ['https://app.example/cb', 'http://localhost:4000/cb'] }),
    });
    expect(ok.status, ok.text).toBe(201);
    expect(jsonOf(ok.text)).toMatchObject({ client_id: expect.stringMatching(/^wmc_[0-9a-f]{32}$/), token_endpoint_auth_method: 'none' });
    // claude.ai's registration asks for client_secret_post: registered as public all the same, the answer saying none (RFC 7591 §3.2.1).
    const claude = await http(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Claude',
        redirect_uris: ['https://claude.ai/api/mcp/auth_callback'],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
        scope: 'workspace',
      }),
    });
    expect(claude.status, claude.text).toBe(201);
    expect(jsonOf(claude.text)).toMatchObject({ token_endpoint_auth_method: 'none', client_name: 'Claude' });
    expect(jsonOf(claude.text)).not.toHaveProperty('client_secret');
    const before = (await kept(run)).clients;
    const refused: Array<[object, string]> = [
      [{ redirect_uris: ['http://app.example/cb'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['https://app.example/cb#x'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: [] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata'],
      [{ redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'tls_client_auth' }, 'invalid_client_metadata'],
      [{ redirect_uris: ['https://app.example/cb'], grant_types: ['client_credentials'] }, 'invalid_client_metadata'],
      [{ client_name: 'no uris' }, 'invalid_redirect_uri'],
    ];
    for (const [body, error] of refused) {
      const r = await http(`${base}/oauth/register`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect([r.status, jsonOf(r.text).error], JSON.stringify(body)).toEqual([400, error]);
    }
    expect((await kept(run)).clients).toBe(before);
  });

  test('authorize: an unknown client or an unregistered redirect_uri is a page, never a redirect; other faults go back as errors', async () => {
    const clientId = await register(base);
    const { challenge } = pkce();
    const p = (over: Record<string, string | undefined>) => authorizeParams(base, clientId, challenge, over);
    for (const params of [
      p({ client_id: 'wmc_unknown' }),
      p({ client_id: undefined }),
      p({ redirect_uri: 'https://evil.example/cb' }),
      p({ redirect_uri: 'http://127.0.0.1:9/other' }),
    ]) {
      const r = await authorizeGet(base, params);
      expect([r.status, r.location], JSON.stringify(params)).toEqual([400, undefined]);
      expect(r.headers.get('content-type')).toMatch(/^text\/html/);
      expect(r.text).toMatch(/Sign-in cannot go on/);
    }
    // A parameter given twice: refused without following either.
    const twice = new URLSearchParams(p({}));
    twice.append('redirect_uri', 'https://evil.example/cb');
    const dup = await http(`${base}/oauth/authorize?${twice}`);
    expect([dup.status, dup.location]).toEqual([400, undefined]);
    // Before the person has seen the page a fault is a page too, never a redirect: anyone may register
    // a redirect URI, and a redirect no one clicked would make the server an open redirector (RFC 9700 §4.11.2).
    const back = async (over: Record<string, string | undefined>, error: string) => {
      const r = await authorizeGet(base, p(over));
      expect([r.status, r.location], JSON.stringify(over)).toEqual([400, undefined]);
      expect(r.text).toContain(`(${error})`);
    };
    await back({ code_challenge: undefined, code_challenge_method: undefined }, 'invalid_request');
    await back({ code_challenge_method: 'plain' }, 'invalid_request');
    await back({ code_challenge_method: undefined }, 'invalid_request');
    await back({ code_challenge: 'short' }, 'invalid_request');
    await back({ resource: 'https://other.example/mcp' }, 'invalid_target');
    await back({ resource: `${base}/elsewhere` }, 'invalid_target');
    await back({ response_type: 'token' }, 'unsupported_response_type');
    // Right: the consent page, with the form and the cookie.
    const page = await authorizeGet(base, p({}));
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<form method="post"/);
    expect(page.text).toMatch(/name="api_key"/);
    // The same attributes whatever their order (RFC 6265 §5.2 gives it no meaning): the cookie package writes Max-Age first.
    expect(parseSetCookie(page.headers.get('set-cookie') ?? '')).toMatchObject({
      name: 'wmo_csrf',
      value: expect.stringMatching(/^[^;]+$/),
      path: '/',
      httpOnly: true,
      sameSite: 'strict',
    });
  });

  test('consent: no cookie, a forged csrf, a foreign Origin → 403; a wrong key → the page again, no code; deny → access_denied', async () => {
    const clientId = await register(base);
    const { challenge } = pkce();
    const params = authorizeParams(base, clientId, challenge);
    const c = consentForm(await authorizeGet(base, params));
    expect(c.fields.csrf).toBeTruthy();
    const grantsBefore = (await kept(run)).grants.length;
    const forbidden = [
      await consentPost(base, c, { key: 'alice-key', cookie: 'wmo_csrf=forged' }),
      await consentPost(base, { ...c, cookie: '' }, { key: 'alice-key' }),
      await consentPost(base, c, { key: 'alice-key', fields: { csrf: 'forged' } }),
      await consentPost(base, c, { key: 'alice-key', fields: { csrf: '' } }),
      // The csrf is bound to the request: another state or redirect is not the page's.
      await consentPost(base, c, { key: 'alice-key', fields: { state: 'other' } }),
      await consentPost(base, c, { key: 'alice-key', headers: { Origin: 'https://evil.example' } }),
    ];
    for (const r of forbidden) expect([r.status, r.location]).toEqual([403, undefined]);
    for (const key of ['wrong-key', 'fran-key', 'blocked-key', '']) {
      const r = await consentPost(base, c, { key });
      expect([r.status, r.location], key).toEqual([400, undefined]);
      expect(r.text).toMatch(/class="problem"/);
      if (key) expect(r.text).not.toContain(key);
    }
    expect((await kept(run)).grants.length).toBe(grantsBefore);
    const denied = await consentPost(base, c, { key: 'alice-key', decision: 'deny' });
    expect(denied.status).toBe(302);
    expect(Object.fromEntries(denied.location!.searchParams)).toMatchObject({ error: 'access_denied', state: params.state, iss: base });
    expect(denied.location!.searchParams.has('code')).toBe(false);
    expect((await kept(run)).grants.length).toBe(grantsBefore);
    // The same page's form, the right key, from the issuer's own origin: a code, once.
    const ok = await consentPost(base, c, { key: 'alice-key', headers: { Origin: base } });
    expect(ok.status).toBe(302);
    expect(ok.location!.searchParams.get('code')).toMatch(/^wmo_code_/);
    expect((await kept(run)).grants.length).toBe(grantsBefore + 1);
  });

  test('token: a code works once; its second use is invalid_grant and stops the tokens it gave', async () => {
    const { clientId, code, verifier, tokens } = await signIn(base, 'alice-key');
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    expect(tokens.access_token).toMatch(/^wmo_at_/);
    expect((await mcpInit(run.mcp, tokens.access_token)).status).toBe(200);
    const again = await exchange(base, { code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT });
    expect([again.status, jsonOf(again.text).error]).toEqual([400, 'invalid_grant']);
    const after = await mcpInit(run.mcp, tokens.access_token);
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    const refreshed = await http(
      `${base}/oauth/token`,
      form({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId }),
    );
    expect([refreshed.status, jsonOf(refreshed.text).error]).toEqual([400, 'invalid_grant']);
    const grant = (await grants(run)).find((g) => g.client_id === clientId)!;
    expect(grant).toMatchObject({ owner_id: 1, revoked_why: 'an authorization code was used twice' });
  });

  test('token: a wrong verifier, redirect_uri, client_id or resource gives no token', async () => {
    const other = await register(base);
    const cases: Array<[(c: { clientId: string; code: string; verifier: string }) => Record<string, string>, string]> = [
      [(c) => ({ code: c.code, code_verifier: pkce().verifier, client_id: c.clientId }), 'invalid_grant'],
      [(c) => ({ code: c.code, code_verifier: c.verifier.slice(1), client_id: c.clientId }), 'invalid_grant'],
      [
        (c) => ({ code: c.code, code_verifier: c.verifier, client_id: c.clientId, redirect_uri: 'http://127.0.0.1:9/other' }),
        'invalid_grant',
      ],
      [(c) => ({ code: c.code, code_verifier: c.verifier, client_id: other }), 'invalid_grant'],
      [
        (c) => ({ code: c.code, code_verifier: c.verifier, client_id: c.clientId, resource: 'https://other.example/mcp' }),
        'invalid_target',
      ],
      [(c) => ({ code: `${c.code}x`, code_verifier: c.verifier, client_id: c.clientId }), 'invalid_grant'],
      [(c) => ({ code: c.code, client_id: c.clientId }), 'invalid_request'],
      [(c) => ({ code: c.code, code_verifier: c.verifier }), 'invalid_client'],
    ];
    for (const [fields, error] of cases) {
      const c = await codeFor(base, 'alice-key');
      const tokensBefore = (await kept(run)).tokens.length;
      const r = await exchange(base, fields(c));
      expect(jsonOf(r.text).error, JSON.stringify(fields(c))).toBe(error);
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.text).not.toMatch(/access_token/);
      expect((await kept(run)).tokens.length).toBe(tokensBefore);
    }
  });

  test('a wrong try does not spend the code: the right exchange after it still works (client_id from Basic auth too)', async () => {
    const c = await codeFor(base, 'alice-key');
    const wrong = await exchange(base, { code: c.code, code_verifier: pkce().verifier, client_id: c.clientId });
    expect(jsonOf(wrong.text).error).toBe('invalid_grant');
    // A client that authenticates with Basic (its secret, if any, is not needed: clients here are public).
    const basic = `Basic ${Buffer.from(`${encodeURIComponent(c.clientId)}:unused`).toString('base64')}`;
    const f = new URLSearchParams({ grant_type: 'authorization_code', code: c.code, code_verifier: c.verifier, redirect_uri: REDIRECT });
    const right = await http(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: basic },
      body: f.toString(),
    });
    expect(right.status, right.text).toBe(200);
    expect(jsonOf(right.text)).toMatchObject({ token_type: 'Bearer', scope: 'workspace' });
  });

  test('refused keys are counted per address, before the check: a client cannot spread them over X-Forwarded-For entries of its own', async () => {
    const clientId = await register(base);
    const page = await authorizeGet(base, authorizeParams(base, clientId, pkce().challenge));
    const c = consentForm(page);
    const statuses: number[] = [];
    // Behind the TLS proxy on loopback, the proxy's own last entry names the client; what the client wrote before it changes nothing.
    const tries = Array.from({ length: 24 }, (_, i) =>
      consentPost(base, c, { key: `wrong-key-${i}`, headers: { 'X-Forwarded-For': `10.0.0.${i}, 203.0.113.7` } }),
    );
    for (const r of await Promise.all(tries)) statuses.push(r.status);
    expect(statuses.filter((s) => s === 400).length).toBe(20);
    expect(statuses.filter((s) => s === 429).length).toBe(4);
    // Another address still signs in.
    const other = await consentPost(base, c, { key: 'alice-key', headers: { 'X-Forwarded-For': '203.0.113.8' } });
    expect(other.status).toBe(302);
  });

  test('refresh tokens rotate: the new pair works, an old refresh token is invalid_grant and revokes the grant', async () => {
    const { clientId, tokens } = await signIn(base, 'alice-key');
    const refresh = (token: string, client = clientId) =>
      http(`${base}/oauth/token`, form({ grant_type: 'refresh_token', refresh_token: token, client_id: client }));
    const wrongClient = await refresh(tokens.refresh_token, await register(base));
    expect([wrongClient.status, jsonOf(wrongClient.text).error]).toEqual([400, 'invalid_grant']);
    const first = await refresh(tokens.refresh_token);
    expect(first.status, first.text).toBe(200);
    const next = jsonOf(first.text) as { access_token: string; refresh_token: string };
    expect(next.refresh_token).not.toBe(tokens.refresh_token);
    expect((await mcpInit(run.mcp, next.access_token)).status).toBe(200);
    const replay = await refresh(tokens.refresh_token);
    expect([replay.status, jsonOf(replay.text).error]).toEqual([400, 'invalid_grant']);
    for (const t of [next.access_token, tokens.access_token]) expect((await mcpInit(run.mcp, t)).status).toBe(401);
    expect((await refresh(next.refresh_token)).status).toBe(400);
    expect((await grants(run)).find((g) => g.client_id === clientId)).toMatchObject({ revoked_why: 'a refresh token was used twice' });
  });

  test('revocation (RFC 7009): 200 whatever the token; a revoked token stops working, another client cannot revoke it', async () => {
    const { clientId, tokens } = await signIn(base, 'alice-key');
    const revoke = (fields: Record<string, string>) => http(`${base}/oauth/revoke`, form(fields));
    for (const token of ['wmo_at_unknown', 'nothing', 'x'.repeat(5000)]) expect((await revoke({ token })).status).toBe(200);
    expect((await revoke({ token: tokens.access_token, client_id: await register(base) })).status).toBe(200);
    expect((await mcpInit(run.mcp, tokens.access_token)).status).toBe(200);
    const r = await revoke({ token: tokens.refresh_token, client_id: clientId });
    expect([r.status, r.text]).toEqual([200, '{}']);
    expect((await mcpInit(run.mcp, tokens.access_token)).status).toBe(401);
    expect((await revoke({ token: tokens.access_token })).status).toBe(200);
  });

  test('a key regenerated (admin regenerate-key): the next /mcp request is 401 invalid_token, the grant shows revoked and why', async () => {
    const { clientId, tokens } = await signIn(base, 'bob-key');
    expect((await mcpInit(run.mcp, tokens.access_token)).status).toBe(200);
    const regenerated = await admin(run, ['regenerate-key', '--owner', '2']);
    expect(regenerated.status, regenerated.stderr).toBe(0);
    const after = await mcpInit(run.mcp, tokens.access_token);
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    const grant = (await grants(run)).find((g) => g.client_id === clientId)!;
    expect(grant).toMatchObject({
      owner_id: 2,
      revoked_at: expect.any(String),
      revoked_why: expect.stringMatching(/^the key stopped working/),
    });
    // The new key signs in again.
    const fresh = await signIn(base, regenerated.stdout.trim());
    expect((await mcpInit(run.mcp, fresh.tokens.access_token)).status).toBe(200);
  });

  test("admin grants lists every grant without its key; revoke-grant stops one (or an owner's all); unknown ones exit 2", async () => {
    const a = await signIn(base, 'alice-key');
    const b = await signIn(base, 'alice-key');
    const listed = await grants(run);
    const mine = listed.find((g) => g.client_id === a.clientId)!;
    expect(Object.keys(mine).sort()).toEqual(
      ['id', 'owner_id', 'client_id', 'client_name', 'created_at', 'last_used_at', 'revoked_at', 'revoked_why'].sort(),
    );
    expect(mine).toMatchObject({ owner_id: 1, client_name: 'Test app', revoked_at: null });
    const revoked = await admin(run, ['revoke-grant', '--grant', String(mine.id)]);
    expect(revoked.status, revoked.stderr).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ id: mine.id, revoked_why: 'revoked by an administrator' });
    expect((await mcpInit(run.mcp, a.tokens.access_token)).status).toBe(401);
    expect((await mcpInit(run.mcp, b.tokens.access_token)).status).toBe(200);
    for (const args of [['--grant', String(mine.id)], ['--grant', 'no-such-grant'], ['--owner', '99'], []]) {
      const r = await admin(run, ['revoke-grant', ...args]);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
    const all = await admin(run, ['revoke-grant', '--owner', '1']);
    expect(all.status, all.stderr).toBe(0);
    expect(
      all.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).owner_id),
    ).toContain(1);
    expect((await mcpInit(run.mcp, b.tokens.access_token)).status).toBe(401);
    expect((await grants(run)).filter((g) => g.owner_id === 1 && g.revoked_at === null)).toEqual([]);
  });

  test('kept encrypted: no key and no token in the state store, the sealed key holds no trace of the key', async () => {
    const { code, tokens } = await signIn(base, 'alice-key');
    const k = await kept(run);
    expect(k.grants.length).toBeGreaterThan(0);
    const secrets = [
      'alice-key',
      Buffer.from('alice-key').toString('base64'),
      Buffer.from('alice-key').toString('hex'),
      code,
      tokens.access_token,
      tokens.refresh_token,
    ];
    for (const s of secrets) expect(k.raw.includes(s), s).toBe(false);
    // A live grant holds its key sealed; a revoked one holds nothing.
    expect(k.grants.filter((g) => g.sealed_key.length > 20).length).toBeGreaterThan(0);
    for (const g of k.grants) {
      expect(g.sealed_key).not.toMatch(/alice|bob-key/);
      expect(g.sealed_key.length > 20 || g.revoked_at !== null, g.id).toBe(true);
    }
    // Codes and tokens by hash only (64 hex characters).
    for (const row of [...k.codes.map((c) => c.code_hash), ...k.tokens.map((t) => t.token_hash)]) expect(row).toMatch(/^[0-9a-f]{64}$/);
  });
}

describe('--auth oauth endpoints over SQLite', () => {
  suite(() => seedWorld());
});

describe('--auth oauth endpoints over PostgreSQL', () => {
  const pg = usePostgres();
  suite(async () => seedWorld(await pg.server().database()));
});
