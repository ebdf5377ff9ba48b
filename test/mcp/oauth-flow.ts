/**
 * `mcp --http --auth oauth` as a client meets it, without a browser: the built CLI started on a
 * seeded world (SQLite file or PostgreSQL database; Alice: owner 1, Bob: owner 2), and the
 * OAuth flow spoken in raw HTTP: register, GET the consent page, read its hidden fields and its
 * cookie, POST them back with a key, exchange the code. Shared by the OAuth endpoint tests, their
 * fuzz and the two-people isolation checks.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import pg from 'pg';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { cliEnv, runCliAsync, spawnAnnounced, type Announced } from '../helpers/cli.js';
import { seedDb, tempDir, type Fixture } from '../helpers/world.js';
import { stop } from '../helpers/temp.js';
import { mcpFixture } from './harness.js';

const SECRET = 'ab'.repeat(32);

/** The MCP fixture, with an account of Bob's: 600, of his contact 200. */
function twoOwners(): Fixture {
  const f = mcpFixture();
  return { ...f, accounts: [...(f.accounts as unknown[]), { id: 600, contact_id: 200, currency: 'USD', amount: 1000 }] };
}

/** A port free just now (the public URL must name it before the server starts). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface OAuthRun extends Announced {
  /** The public URL (the issuer): http://127.0.0.1:PORT. */
  base: string;
  /** `<base>/mcp`. */
  mcp: string;
  /** The database: a file or a postgres:// URL. */
  db: string;
  /** The data folder (the SQLite state file, exports). */
  dataDir: string;
  close(): Promise<void>;
}

/** Seed a world into a new SQLite file, or into `pgUrl` (a fresh database). */
export async function seedWorld(pgUrl?: string, fixture: Fixture = twoOwners()): Promise<string> {
  if (pgUrl === undefined) return seedDb(fixture);
  const file = join(tempDir(), 'world.json');
  writeFileSync(file, JSON.stringify(fixture));
  const seeded = await runCliAsync(['seed', file, '--db', pgUrl], cliEnv());
  if (seeded.status !== 0) throw new Error(`seed: ${seeded.stderr}`);
  return pgUrl;
}

/** The built CLI with `--auth oauth` on `db`, its public URL its own loopback address. */
export async function startOAuth(db: string, args: string[] = []): Promise<OAuthRun> {
  const dataDir = tempDir();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const started = await spawnAnnounced(
    ['mcp', '--http', '--auth', 'oauth', '--public-url', base, '--port', String(port), '--db', db, ...args],
    /(http:\/\/\S+\/mcp)/,
    cliEnv({ WORKSPACE_DATA_DIR: dataDir, WORKSPACE_SECRET: SECRET }),
  );
  return { ...started, base, mcp: `${base}/mcp`, db, dataDir, close: () => stop(started.proc) };
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** The Location of a redirect, parsed. */
  location?: URL;
}

/** One request, redirects not followed. */
export async function http(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, { redirect: 'manual', ...init });
  const text = await res.text();
  const loc = res.headers.get('location');
  return { status: res.status, headers: res.headers, text, location: loc ? new URL(loc) : undefined };
}

export const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
});

export const REDIRECT = 'http://127.0.0.1:9/callback';

/** Registers a public client (RFC 7591); its client_id. */
export async function register(base: string, redirectUris = [REDIRECT], name = 'Test app'): Promise<string> {
  const r = await http(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: redirectUris, token_endpoint_auth_method: 'none' }),
  });
  if (r.status !== 201) throw new Error(`register: ${r.status} ${r.text}`);
  return (JSON.parse(r.text) as { client_id: string }).client_id;
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** An authorization request's parameters, right unless `over` says otherwise (undefined: left out). */
export function authorizeParams(
  base: string,
  clientId: string,
  challenge: string,
  over: Record<string, string | undefined> = {},
): Record<string, string> {
  const all: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'st-' + randomBytes(6).toString('hex'),
    resource: `${base}/mcp`,
    ...over,
  };
  return Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined));
}

const unescape = (s: string) =>
  s.replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!);

/** The consent page's hidden fields (csrf among them) and the cookie it set. */
export interface ConsentForm {
  fields: Record<string, string>;
  cookie: string;
}

export function consentForm(page: Answer): ConsentForm {
  const fields: Record<string, string> = {};
  for (const m of page.text.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) fields[unescape(m[1]!)] = unescape(m[2]!);
  const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0]!;
  return { fields, cookie };
}

/** GET the consent page for `params`. */
export function authorizeGet(base: string, params: Record<string, string>): Promise<Answer> {
  return http(`${base}/oauth/authorize?${new URLSearchParams(params)}`);
}

/** POST the consent form back: the person's key and decision, with the cookie (all overridable). */
export function consentPost(
  base: string,
  c: ConsentForm,
  o: { key?: string; decision?: string; cookie?: string; headers?: Record<string, string>; fields?: Record<string, string> } = {},
): Promise<Answer> {
  const fields = { ...c.fields, ...(o.key !== undefined ? { api_key: o.key } : {}), decision: o.decision ?? 'allow', ...o.fields };
  const f = form(fields);
  return http(`${base}/oauth/authorize`, {
    ...f,
    headers: { ...f.headers, ...((o.cookie ?? c.cookie) ? { Cookie: o.cookie ?? c.cookie } : {}), ...o.headers },
  });
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  token_type: string;
}

/** Exchange a code at the token endpoint. */
export function exchange(base: string, fields: Record<string, string>): Promise<Answer> {
  return http(`${base}/oauth/token`, form({ grant_type: 'authorization_code', resource: `${base}/mcp`, ...fields }));
}

/** The whole flow as a client and a person do it, the person pasting `key`: the code, its verifier and the tokens. */
export async function signIn(
  base: string,
  key: string,
  clientId?: string,
): Promise<{ clientId: string; code: string; verifier: string; tokens: Tokens }> {
  const { code, verifier, clientId: id } = await codeFor(base, key, clientId);
  const t = await exchange(base, { code, code_verifier: verifier, client_id: id, redirect_uri: REDIRECT });
  if (t.status !== 200) throw new Error(`token: ${t.status} ${t.text}`);
  return { clientId: id, code, verifier, tokens: JSON.parse(t.text) as Tokens };
}

/** Register (unless given a client), consent with `key`: the code from the redirect and its verifier. */
export async function codeFor(base: string, key: string, clientId?: string): Promise<{ clientId: string; code: string; verifier: string }> {
  const id = clientId ?? (await register(base));
  const { verifier, challenge } = pkce();
  const params = authorizeParams(base, id, challenge);
  const page = await authorizeGet(base, params);
  if (page.status !== 200) throw new Error(`authorize: ${page.status} ${page.text}`);
  const back = await consentPost(base, consentForm(page), { key });
  const code = back.location?.searchParams.get('code');
  if (back.status !== 302 || !code) throw new Error(`consent: ${back.status} ${back.text}`);
  if (back.location!.searchParams.get('state') !== params.state) throw new Error('consent: the state did not come back');
  return { clientId: id, code, verifier };
}

/** An initialize request to the MCP endpoint with `token` as its bearer (none: no Authorization header). */
export function mcpInit(mcp: string, token: string | undefined): Promise<Answer> {
  return http(mcp, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...(token !== undefined ? { Authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }),
  });
}

/** What the server keeps of sign-in, read straight from its state store; `raw`, everything stored there as text (SQLite: the file's bytes). */
export interface Kept {
  clients: number;
  grants: Array<Record<string, any>>;
  codes: Array<Record<string, any>>;
  tokens: Array<Record<string, any>>;
  raw: string;
}

const TABLES = ['clients', 'grants', 'codes', 'tokens'] as const;

export async function kept(run: Pick<OAuthRun, 'db' | 'dataDir'>): Promise<Kept> {
  const rows: Record<string, Array<Record<string, any>>> = {};
  let raw = '';
  if (run.db.startsWith('postgres')) {
    const client = new pg.Client({ connectionString: run.db });
    await client.connect();
    try {
      for (const t of TABLES) rows[t] = (await client.query(`SELECT * FROM mcp_oauth_${t}`)).rows;
    } finally {
      await client.end();
    }
    raw = JSON.stringify(rows);
  } else {
    const file = join(run.dataDir, 'mcp-state.sqlite');
    const db = new Database(file, { readonly: true });
    try {
      for (const t of TABLES) rows[t] = db.prepare(`SELECT * FROM oauth_${t}`).all() as Array<Record<string, any>>;
    } finally {
      db.close();
    }
    for (const f of [file, `${file}-wal`]) if (existsSync(f)) raw += readFileSync(f).toString('latin1');
  }
  return { clients: rows.clients!.length, grants: rows.grants!, codes: rows.codes!, tokens: rows.tokens!, raw };
}

/** A scope box of the consent page: its value, and whether it starts ticked, must stay ticked, or may not be ticked. */
export interface ScopeBox {
  value: string;
  checked: boolean;
  required: boolean;
  disabled: boolean;
}

/** The consent page's scope boxes (`<input type="checkbox" name="scope">`), in order. */
export function scopeBoxes(page: Answer): ScopeBox[] {
  return [...page.text.matchAll(/<input type="checkbox"([^>]*)>/g)]
    .map((m) => m[1]!)
    .filter((a) => / name="scope"/.test(a))
    .map((a) => ({
      value: unescape(/ value="([^"]*)"/.exec(a)?.[1] ?? ''),
      checked: / checked(\s|$)/.test(a),
      required: / required(\s|$)/.test(a),
      disabled: / disabled(\s|$)/.test(a),
    }));
}

/** POST the consent form back with `key`, allowing, the boxes `ticked` sent as a browser sends them (one `scope` field each). */
export function consentTicked(base: string, c: ConsentForm, key: string, ticked: string[]): Promise<Answer> {
  const body = new URLSearchParams({ ...c.fields, api_key: key, decision: 'allow' });
  for (const s of ticked) body.append('scope', s);
  return http(`${base}/oauth/authorize`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: c.cookie },
    body: body.toString(),
  });
}
