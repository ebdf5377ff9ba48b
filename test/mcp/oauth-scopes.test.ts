/**
 * What each person lets their assistant do under `--auth oauth` (issue 48): "Four scopes:
 * `workspace:read`, `workspace:write`, `workspace:money`, `workspace:message`. `workspace` means
 * all four (grants made before scopes keep working)." The consent page's boxes as the request
 * asked, a narrowed form making a narrower grant, the token answer's scope, a refresh that keeps
 * it and refuses to widen, both metadata documents, the read-only door as a protected resource of
 * its own, through the built CLI over SQLite and PostgreSQL; the cap (the `scopes` option) and
 * grants made before scopes in-process, over a real state file.
 */
import { createServer } from 'node:http';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { SCOPES as API_SCOPES } from '../../src/api/scopes.js';
import { OAuthServer } from '../../src/oauth/server.js';
import { SCOPE_WORDS, SCOPES } from '../../src/oauth/scopes.js';
import { hashToken, sealerOf } from '../../src/oauth/secrets.js';
import { McpStateStore } from '../../src/state/mcp-state.js';
import { answeredAtOnce } from '../../src/state/async.js';
import { MCP_STATE_MIGRATIONS } from '../../src/state/schema.js';
import { openDb } from '../../src/store/db.js';
import { usePostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/world.js';
import {
  authorizeGet,
  authorizeParams,
  consentForm,
  consentTicked,
  exchange,
  form,
  freePort,
  http,
  kept,
  mcpInit,
  pkce,
  REDIRECT,
  register,
  scopeBoxes,
  seedWorld,
  startOAuth,
  type OAuthRun,
} from './oauth-flow.js';

const ALL_FOUR = ['workspace:read', 'workspace:write', 'workspace:money', 'workspace:message'];
const jsonOf = (text: string) => JSON.parse(text) as Record<string, any>;

test("the oauth layer's scopes are the API's, each with its plain words for the consent page", () => {
  expect([...SCOPES]).toEqual([...API_SCOPES]);
  expect(Object.keys(SCOPE_WORDS).sort()).toEqual([...API_SCOPES].sort());
  for (const s of SCOPES) expect(SCOPE_WORDS[s].length, s).toBeGreaterThan(20);
  expect(SCOPE_WORDS['workspace:read']).toMatch(/always granted/);
});

/** A sign-in asking `scope` (undefined: none) at `resource`, the boxes `ticked` (undefined: the form as it came): the page, the code's token answer. */
async function signInWith(
  base: string,
  o: { scope?: string; resource?: string; ticked?: string[]; key?: string } = {},
): Promise<{ page: Awaited<ReturnType<typeof authorizeGet>>; token: Record<string, any>; clientId: string; status: number }> {
  const clientId = await register(base);
  const { verifier, challenge } = pkce();
  const resource = o.resource ?? `${base}/mcp`;
  const page = await authorizeGet(base, authorizeParams(base, clientId, challenge, { scope: o.scope, resource }));
  expect(page.status, page.text).toBe(200);
  const c = consentForm(page);
  const back = await consentTicked(base, c, o.key ?? 'alice-key', o.ticked ?? []);
  expect(back.status, back.text).toBe(302);
  const code = back.location!.searchParams.get('code')!;
  const t = await exchange(base, { code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT, resource });
  return { page, token: jsonOf(t.text), clientId, status: t.status };
}

const refresh = (base: string, clientId: string, token: string, more: Record<string, string> = {}) =>
  http(`${base}/oauth/token`, form({ grant_type: 'refresh_token', refresh_token: token, client_id: clientId, ...more }));

function suite(dbOf: () => Promise<string>): void {
  let run: OAuthRun;
  let base: string;
  beforeAll(async () => {
    run = await startOAuth(await dbOf());
    base = run.base;
  }, 60_000);
  afterAll(() => run?.close());

  test('both metadata documents list the four; the read-only door has a document of its own, workspace:read alone', async () => {
    const pr = jsonOf((await http(`${base}/.well-known/oauth-protected-resource/mcp`)).text);
    expect(pr.scopes_supported).toEqual(ALL_FOUR);
    expect(jsonOf((await http(`${base}/.well-known/oauth-authorization-server`)).text).scopes_supported).toEqual(ALL_FOUR);
    const door = await http(`${base}/.well-known/oauth-protected-resource/mcp/read-only`);
    expect([door.status, door.headers.get('content-type')]).toEqual([200, expect.stringMatching(/^application\/json/)]);
    expect(jsonOf(door.text)).toEqual({
      resource: `${base}/mcp/read-only`,
      authorization_servers: [base],
      scopes_supported: ['workspace:read'],
      resource_name: 'Workspace (read-only)',
    });
    // The 401 still asks for a full sign-in.
    expect((await mcpInit(run.mcp, undefined)).headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="workspace"`,
    );
  });

  test('the page offers a box per scope, ticked as the request asked; read ticked and required; unknown values ignored', async () => {
    const clientId = await register(base);
    const boxes = async (scope: string | undefined) =>
      scopeBoxes(await authorizeGet(base, authorizeParams(base, clientId, pkce().challenge, { scope })));
    const all = await boxes(undefined);
    expect(all.map((b) => b.value)).toEqual(ALL_FOUR);
    expect(all.every((b) => b.checked && !b.disabled)).toBe(true);
    expect(all.map((b) => b.required)).toEqual([true, false, false, false]);
    expect(await boxes('workspace')).toEqual(all);
    // Only values this server does not know: as if none were named.
    expect(await boxes('openid profile')).toEqual(all);
    const some = await boxes('openid workspace:money');
    expect(some.map((b) => [b.value, b.checked, b.disabled])).toEqual([
      ['workspace:read', true, false],
      ['workspace:write', false, true],
      ['workspace:money', true, false],
      ['workspace:message', false, true],
    ]);
    // Accessible and script-free: a fieldset with its legend, a label for each box, its words.
    const page = (await authorizeGet(base, authorizeParams(base, clientId, pkce().challenge))).text;
    expect(page).toMatch(/<fieldset><legend>[^<]+<\/legend>/);
    for (const s of ALL_FOUR) {
      const id = `scope-${s.split(':')[1]}`;
      expect(page).toContain(`<label class="scope" for="${id}"><input type="checkbox" id="${id}" name="scope" value="${s}"`);
      expect(page).toContain(SCOPE_WORDS[s as keyof typeof SCOPE_WORDS].replace(/'/g, '&#39;'));
    }
    expect(page).not.toMatch(/<script/i);
    // The request's scope travels as requested_scope, so the form's scope values are the boxes alone.
    expect(
      consentForm(await authorizeGet(base, authorizeParams(base, clientId, pkce().challenge, { scope: 'x workspace:money' }))).fields,
    ).toMatchObject({ requested_scope: 'workspace:money' });
  });

  test('a narrowed form makes a narrower grant; boxes not asked for add nothing; the token answer names what was granted', async () => {
    const narrowed = await signInWith(base, { ticked: ['workspace:read', 'workspace:money'] });
    expect(narrowed.status).toBe(200);
    expect(narrowed.token.scope).toBe('workspace:read workspace:money');
    // Read comes whether its box was sent or not.
    expect((await signInWith(base, { ticked: ['workspace:message'] })).token.scope).toBe('workspace:read workspace:message');
    // The person may only narrow: a box the request did not ask for, sent anyway, is dropped.
    const asked = await signInWith(base, { scope: 'workspace:money', ticked: ['workspace:read', 'workspace:write', 'workspace:message'] });
    expect(asked.token.scope).toBe('workspace:read');
    // Asked by name, granted by name; the form as it came (no box sent): what was asked.
    expect((await signInWith(base, { scope: ALL_FOUR.join(' ') })).token.scope).toBe(ALL_FOUR.join(' '));
    expect((await signInWith(base, { scope: 'workspace' })).token.scope).toBe('workspace');
    expect((await signInWith(base, { scope: 'workspace:write' })).token.scope).toBe('workspace:read workspace:write');
    // Kept as granted.
    const grants = (await kept(run)).grants;
    const mine = grants.find((g) => g.client_id === narrowed.clientId)!;
    expect([mine.scope, mine.resource]).toEqual(['workspace:read workspace:money', `${base}/mcp`]);
    // The narrower token works at /mcp.
    expect((await mcpInit(run.mcp, narrowed.token.access_token)).status).toBe(200);
  });

  test('a refresh keeps the scope, may narrow its access token (RFC 6749 §6), and never widens it', async () => {
    const s = await signInWith(base, { ticked: ['workspace:read', 'workspace:money'] });
    let rt = s.token.refresh_token as string;
    const again = await refresh(base, s.clientId, rt);
    expect(again.status, again.text).toBe(200);
    expect(jsonOf(again.text).scope).toBe('workspace:read workspace:money');
    rt = jsonOf(again.text).refresh_token;
    for (const wider of ['workspace', 'workspace:write', 'workspace:read workspace:message', 'openid']) {
      const r = await refresh(base, s.clientId, rt, { scope: wider });
      expect([r.status, jsonOf(r.text).error], wider).toEqual([400, 'invalid_scope']);
    }
    // Refused before the token was spent: it still works, narrowed to read.
    const narrow = await refresh(base, s.clientId, rt, { scope: 'workspace:read' });
    expect(narrow.status, narrow.text).toBe(200);
    expect(jsonOf(narrow.text).scope).toBe('workspace:read');
    expect((await mcpInit(run.mcp, jsonOf(narrow.text).access_token)).status).toBe(200);
    // The refresh token it came with keeps the whole grant.
    const whole = await refresh(base, s.clientId, jsonOf(narrow.text).refresh_token);
    expect(jsonOf(whole.text).scope).toBe('workspace:read workspace:money');
    const access = (await kept(run)).tokens.filter((t) => t.kind === 'access').map((t) => t.scope);
    expect(access).toContain('workspace:read');
    expect(access).toContain(null);
  });

  test('the read-only door: its page offers read alone, its grant holds read alone, its tokens are for the door only', async () => {
    const door = `${base}/mcp/read-only`;
    const s = await signInWith(base, { resource: door, scope: 'workspace', ticked: ALL_FOUR });
    expect(scopeBoxes(s.page)).toEqual([{ value: 'workspace:read', checked: true, required: true, disabled: false }]);
    expect(s.status).toBe(200);
    expect(s.token.scope).toBe('workspace:read');
    const grant = (await kept(run)).grants.find((g) => g.client_id === s.clientId)!;
    expect([grant.scope, grant.resource]).toEqual(['workspace:read', door]);
    // Not a token for the MCP endpoint.
    const full = await mcpInit(run.mcp, s.token.access_token);
    expect(full.status).toBe(401);
    expect(full.headers.get('www-authenticate')).toMatch(
      /^Bearer resource_metadata="[^"]+\/oauth-protected-resource\/mcp", scope="workspace", error="invalid_token"/,
    );
    // A refresh for the door is the door's; asking it for the MCP endpoint is refused, as is widening.
    expect(jsonOf((await refresh(base, s.clientId, s.token.refresh_token, { resource: run.mcp })).text).error).toBe('invalid_target');
    expect(jsonOf((await refresh(base, s.clientId, s.token.refresh_token, { scope: 'workspace:write' })).text).error).toBe('invalid_scope');
    const r = await refresh(base, s.clientId, s.token.refresh_token, { resource: door });
    expect([r.status, jsonOf(r.text).scope]).toEqual([200, 'workspace:read']);
  });

  test('a code for the door is not exchanged for the MCP endpoint, nor one for the endpoint for the door', async () => {
    const pairs: Array<[string, string]> = [
      [`${base}/mcp/read-only`, `${base}/mcp`],
      [`${base}/mcp`, `${base}/mcp/read-only`],
    ];
    for (const [at, other] of pairs) {
      const clientId = await register(base);
      const { verifier, challenge } = pkce();
      const page = await authorizeGet(base, authorizeParams(base, clientId, challenge, { resource: at }));
      const back = await consentTicked(base, consentForm(page), 'alice-key', []);
      const code = back.location!.searchParams.get('code')!;
      const t = await exchange(base, { code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT, resource: other });
      expect([t.status, jsonOf(t.text).error], at).toEqual([400, 'invalid_target']);
    }
  });
}

describe('scopes under --auth oauth over SQLite', () => {
  suite(() => seedWorld());
});

describe('scopes under --auth oauth over PostgreSQL', () => {
  const pg = usePostgres();
  suite(async () => seedWorld(await pg.server().database()));
});

describe('in-process: the cap, the door and grants made before scopes', () => {
  const closing: Array<() => unknown> = [];
  afterEach(async () => {
    for (const c of closing.splice(0)) await c();
  });
  const sealer = sealerOf(Buffer.alloc(32, 7));

  /** An OAuthServer over the state file `file` at `base`, its cap `scopes`, keys: alice-key is owner 1. */
  function server(file: string, scopes?: readonly string[], base = 'http://127.0.0.1:9999'): OAuthServer {
    const state = McpStateStore.open(file);
    const oauth = new OAuthServer({
      publicUrl: new URL(base),
      store: answeredAtOnce(state).oauth(),
      sealer,
      checkKey: async (key) => (key === 'alice-key' ? { id: 1 } : { status: 401, message: 'unauthorized' }),
      scopes,
    });
    closing.push(
      () => oauth.close(),
      () => state.close(),
    );
    return oauth;
  }

  /** A grant and an access token written straight into the state file, as a version before scopes left them. */
  function oldGrant(file: string, id: string, resource: string, token: string): void {
    const db = openDb(file, MCP_STATE_MIGRATIONS.slice(0, 4));
    db.prepare(
      `INSERT INTO oauth_grants (id, owner_id, client_id, client_name, resource, scope, sealed_key, created_at) VALUES (?, 1, 'c', 'Old app', ?, 'workspace', ?, ?)`,
    ).run(id, resource, sealer.seal('alice-key', id), new Date().toISOString());
    db.prepare(`INSERT INTO oauth_tokens (token_hash, grant_id, kind, expires_ms, used) VALUES (?, ?, 'access', ?, 0)`).run(
      hashToken(token),
      id,
      Date.now() + 3_600_000,
    );
    db.close();
  }

  test('a grant made before scopes (its state file migrated since) holds all four; within a narrower cap, the cap', async () => {
    const file = join(tempDir(), 'mcp-state.sqlite');
    oldGrant(file, 'g-old', 'http://127.0.0.1:9999/mcp', 'wmo_at_old');
    const oauth = server(file);
    const who = await oauth.signedIn('Bearer wmo_at_old');
    expect(who).toMatchObject({ key: 'alice-key', scopes: ALL_FOUR, auth: { scopes: ALL_FOUR } });
    for (const c of closing.splice(0)) await c();
    const capped = await server(file, ['workspace:read', 'workspace:money']).signedIn('Bearer wmo_at_old');
    expect(capped).toMatchObject({ scopes: ['workspace:read', 'workspace:money'] });
  });

  test('the cap: the metadata, the challenge, the page and the grant hold no more than the scopes option', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const oauth = server(join(tempDir(), 'mcp-state.sqlite'), ['workspace:write'], base);
    const httpServer = createServer((req, res) => {
      void oauth.serve(req, res, new URL(req.url ?? '/', 'http://x').pathname).then((served) => {
        if (!served) res.writeHead(404).end();
      });
    });
    await new Promise<void>((r) => httpServer.listen(port, '127.0.0.1', r));
    closing.push(() => new Promise((r) => httpServer.close(r)));
    const capped = ['workspace:read', 'workspace:write'];
    expect(jsonOf((await http(`${base}/.well-known/oauth-protected-resource/mcp`)).text).scopes_supported).toEqual(capped);
    expect(jsonOf((await http(`${base}/.well-known/oauth-authorization-server`)).text).scopes_supported).toEqual(capped);
    const refusal = await oauth.signedIn(undefined);
    expect('status' in refusal && refusal.headers['WWW-Authenticate']).toBe(
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="workspace:read workspace:write"`,
    );
    const s = await signInWith(base, { scope: 'workspace' });
    expect(scopeBoxes(s.page).map((b) => b.value)).toEqual(capped);
    expect(s.token.scope).toBe('workspace:read workspace:write');
    const who = await oauth.signedIn(`Bearer ${s.token.access_token}`);
    expect(who).toMatchObject({ scopes: capped });
  });

  test("the door's bearer check: its own tokens, read alone; the endpoint's refused there; its challenges name its document", async () => {
    const file = join(tempDir(), 'mcp-state.sqlite');
    const base = 'http://127.0.0.1:9999';
    oldGrant(file, 'g-door', `${base}/mcp/read-only`, 'wmo_at_door');
    const oauth = server(file);
    const doorDoc = `${base}/.well-known/oauth-protected-resource/mcp/read-only`;
    // Even a grant whose scope says workspace holds read alone at the door.
    expect(await oauth.signedIn('Bearer wmo_at_door', 'mcp/read-only')).toMatchObject({ scopes: ['workspace:read'] });
    const atMcp = await oauth.signedIn('Bearer wmo_at_door');
    expect('status' in atMcp && [atMcp.status, atMcp.headers['WWW-Authenticate']]).toEqual([
      401,
      expect.stringMatching(/^Bearer resource_metadata="[^"]+\/oauth-protected-resource\/mcp", scope="workspace", error="invalid_token"/),
    ]);
    const none = await oauth.signedIn(undefined, 'mcp/read-only');
    expect('status' in none && none.headers['WWW-Authenticate']).toBe(`Bearer resource_metadata="${doorDoc}", scope="workspace:read"`);
    // A key that stopped working: the challenge names the grant's own resource.
    const who = await oauth.signedIn('Bearer wmo_at_door', 'mcp/read-only');
    if (!('grant' in who)) throw new Error('not signed in');
    const refused = await oauth.keyRefused(who.grant, 'regenerated');
    expect(refused.headers['WWW-Authenticate']).toMatch(
      new RegExp(`^Bearer resource_metadata="${doorDoc}", scope="workspace:read", error="invalid_token"`),
    );
  });
});
