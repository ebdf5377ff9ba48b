/**
 * `--auth oauth`: the server is the OAuth 2.1 authorization server of its own MCP endpoint, as
 * the MCP authorization spec describes: RFC 9728 and RFC 8414 metadata, RFC 7591 registration
 * and Client ID Metadata Documents, the authorization code flow with PKCE S256 only and the
 * RFC 8707 resource checked, single-use codes, refresh tokens rotated (a reused one revokes its
 * grant), RFC 7009 revocation. What is this product's own: the consent page, where a person
 * pastes their Workspace API key, checked with getMe, and the grant that keeps it sealed.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  buildOAuthProtectedResourceMetadata,
  OAuthError,
  OAuthErrorCode,
  verifyBearerToken,
  type AuthInfo,
} from '@modelcontextprotocol/server';
import type { OAuthMetadata } from '@modelcontextprotocol/server';
import { log } from '../shared/log.js';
import { readBody, TooLarge } from '../shared/read-body.js';
import { isLoopbackHost } from '../shared/loopback.js';
import { checkedMetadata, ClientDocuments, ClientError, redirectAllowed, type Client } from './clients.js';
import { consentPage, problemPage, type RequestFields } from './consent-page.js';
import { hashToken, newToken, pkceMatches, sameSecret, type Sealer } from './secrets.js';
import type { GrantRow, OAuthStore } from './store.js';

/** What a key check answers: its owner, or the backend's refusal. */
type KeyCheck = { id: number } | { status: number; message: string };

export interface OAuthOptions {
  /** Where people reach the server: an origin (`https://mcp.example.com`), no path. */
  publicUrl: URL;
  store: OAuthStore;
  sealer: Sealer;
  /** Checks a Workspace API key with getMe against the backend. */
  checkKey(key: string): Promise<KeyCheck>;
  now?: () => number;
  accessTtlMs?: number;
  refreshTtlMs?: number;
}

/** The lifetimes: an access token an hour, a refresh token 30 days from its last use, a code a minute. */
const ACCESS_TTL_MS = 60 * 60_000;
const REFRESH_TTL_MS = 30 * 24 * 60 * 60_000;
const CODE_TTL_MS = 60_000;
/** Registrations taken an hour, all clients together, and from one address (a host's servers share a few). */
const REGISTRATIONS_PER_HOUR = 10_000;
const REGISTRATIONS_PER_ADDRESS = 200;
/** Key checks of the consent page under way at once. */
const MAX_CHECKS_AT_ONCE = 32;
/** The one scope: everything the person's key may do. */
const SCOPE = 'workspace';
/** Failed key checks on the consent page, per address, in ten minutes. */
const KEY_TRIES = 20;
const MAX_FORM_BYTES = 16 * 1024;

/** The authorization request's parameters that travel through the consent form. */
const REQUEST_PARAMS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'code_challenge',
  'code_challenge_method',
  'state',
  'resource',
  'scope',
];

/** Who a request to the MCP endpoint is, once its token checked out: the grant and the API key it holds. */
export interface SignedIn {
  grant: GrantRow;
  key: string;
  auth: AuthInfo;
}

export type Refusal = { status: number; headers: Record<string, string>; body: string };

export class OAuthServer {
  readonly issuer: string;
  /** The MCP endpoint: the resource every token is for. */
  readonly resource: string;
  readonly resourceMetadataUrl: string;
  private readonly docs: ClientDocuments;
  private readonly now: () => number;
  private readonly accessTtl: number;
  private readonly refreshTtl: number;
  private readonly asMetadata: OAuthMetadata;
  private readonly prMetadata: object;
  /** Refused key checks per address (KEY_TRIES in ten minutes), and registrations per address (an hour). */
  private readonly tries = new Counts(KEY_TRIES, 10 * 60_000);
  private readonly registrations = new Counts(REGISTRATIONS_PER_ADDRESS, 60 * 60_000);
  /** Key checks under way: a bound, so a flood of pasted keys cannot queue up against the backend. */
  private checking = 0;
  private readonly touched = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly o: OAuthOptions) {
    this.issuer = o.publicUrl.origin;
    this.resource = `${this.issuer}/mcp`;
    this.resourceMetadataUrl = `${this.issuer}/.well-known/oauth-protected-resource/mcp`;
    this.docs = new ClientDocuments(isLoopbackHost(o.publicUrl.hostname));
    this.now = o.now ?? Date.now;
    this.accessTtl = o.accessTtlMs ?? ACCESS_TTL_MS;
    this.refreshTtl = o.refreshTtlMs ?? REFRESH_TTL_MS;
    this.asMetadata = {
      issuer: this.issuer,
      authorization_endpoint: `${this.issuer}/oauth/authorize`,
      token_endpoint: `${this.issuer}/oauth/token`,
      registration_endpoint: `${this.issuer}/oauth/register`,
      revocation_endpoint: `${this.issuer}/oauth/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none'],
      scopes_supported: ['workspace'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    } as OAuthMetadata;
    this.prMetadata = buildOAuthProtectedResourceMetadata({
      oauthMetadata: this.asMetadata,
      resourceServerUrl: new URL(this.resource),
      resourceName: 'Workspace',
      scopesSupported: ['workspace'],
      dangerouslyAllowInsecureIssuerUrl: o.publicUrl.protocol === 'http:',
    });
    this.sweeper = setInterval(() => this.sweep(), 10 * 60_000);
    this.sweeper.unref();
  }

  /** The host names requests may carry besides the bound address's: the public URL's. */
  get hostName(): string {
    return this.o.publicUrl.hostname.toLowerCase();
  }

  /** Answers a request for one of sign-in's addresses; false when `path` is none of them. */
  async serve(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
    switch (path) {
      case '/.well-known/oauth-protected-resource':
      case '/.well-known/oauth-protected-resource/mcp':
        return this.document(req, res, this.prMetadata);
      case '/.well-known/oauth-authorization-server':
        return this.document(req, res, this.asMetadata);
      case '/oauth/authorize':
        if (req.method === 'GET') await this.authorizeGet(req, res);
        else if (req.method === 'POST') await this.authorizePost(req, res);
        else send(res, 405, 'text/plain', 'Method not allowed', { Allow: 'GET, POST' });
        return true;
      case '/oauth/token':
        return this.api(req, res, () => this.token(req, res));
      case '/oauth/register':
        return this.api(req, res, () => this.register(req, res));
      case '/oauth/revoke':
        return this.api(req, res, () => this.revoke(req, res));
      default:
        return false;
    }
  }

  /**
   * The signed-in person behind a request to the MCP endpoint: the token checked with the SDK's
   * bearer check (unknown, revoked, expired or for another resource: 401 with the challenge that
   * starts sign-in), its grant and the key it holds.
   */
  async signedIn(header: string | undefined): Promise<SignedIn | Refusal> {
    let found: { grant: GrantRow } | undefined;
    try {
      const auth = await verifyBearerToken(header, {
        resourceMetadataUrl: this.resourceMetadataUrl,
        expectedResource: new URL(this.resource),
        verifier: {
          verifyAccessToken: async (token) => {
            const hash = hashToken(token);
            const t = this.o.store.token(hash);
            const grant = t && t.kind === 'access' && sameSecret(t.token_hash, hash) ? this.o.store.grant(t.grant_id) : undefined;
            if (!t || !grant || grant.revoked_at !== null || t.expires_ms <= this.now())
              throw new OAuthError(OAuthErrorCode.InvalidToken, 'The access token is unknown, expired or revoked; sign in again');
            found = { grant };
            return {
              token: '',
              clientId: grant.client_id,
              scopes: [],
              expiresAt: Math.floor(t.expires_ms / 1000),
              resource: new URL(grant.resource),
              extra: { grant: grant.id, owner: grant.owner_id, client: grant.client_name },
            };
          },
        },
      });
      const key = this.o.sealer.open(found!.grant.sealed_key, found!.grant.id);
      if (key === undefined)
        throw new OAuthError(OAuthErrorCode.InvalidToken, 'The grant cannot be opened here (another WORKSPACE_SECRET); sign in again');
      this.touch(found!.grant.id);
      return { grant: found!.grant, key, auth };
    } catch (e) {
      return this.challenge(
        e instanceof OAuthError ? e : new OAuthError(OAuthErrorCode.InvalidToken, 'The access token was refused'),
        header !== undefined,
      );
    }
  }

  /** The key behind a grant stopped working (regenerated, blocked, plan lapsed): the grant is revoked, and the 401 starts sign-in again. */
  keyRefused(grant: GrantRow, why: string): Refusal {
    if (this.o.store.revokeGrant(grant.id, `the key stopped working: ${why}`, new Date(this.now()).toISOString()))
      log.info({ grant: grant.id, owner: grant.owner_id, client: grant.client_name }, 'OAuth grant revoked: its key stopped working');
    return this.challenge(
      new OAuthError(OAuthErrorCode.InvalidToken, `Your Workspace API key stopped working (${why}); sign in again`),
      true,
    );
  }

  /** A 401 with `WWW-Authenticate: Bearer resource_metadata=…` (and the error when a token was sent). */
  private challenge(e: OAuthError, tokenSent: boolean): Refusal {
    const parts = [`resource_metadata="${this.resourceMetadataUrl}"`];
    parts.push(`scope="${SCOPE}"`);
    // A header takes printable ASCII only: an upstream's message may hold more (a dash, a line break).
    if (tokenSent) parts.push(`error="${e.code}"`, `error_description="${e.message.replace(/[^\x20-\x7e]|["\\]/g, ' ')}"`);
    return {
      status: 401,
      headers: { 'Content-Type': 'application/json', 'WWW-Authenticate': `Bearer ${parts.join(', ')}` },
      body: JSON.stringify({ error: tokenSent ? e.code : 'invalid_token', error_description: e.message }),
    };
  }

  close(): Promise<void> {
    clearInterval(this.sweeper);
    return this.docs.close();
  }

  // ---- metadata and the JSON endpoints (CORS-open: browser-based clients call them) ----

  private document(req: IncomingMessage, res: ServerResponse, doc: object): boolean {
    if (req.method === 'OPTIONS') return preflight(res);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(res, 405, 'application/json', JSON.stringify({ error: 'invalid_request', error_description: 'use GET' }), {
        Allow: 'GET',
        ...CORS,
      });
      return true;
    }
    send(res, 200, 'application/json', JSON.stringify(doc), { ...CORS, 'Cache-Control': 'public, max-age=3600' });
    return true;
  }

  private async api(req: IncomingMessage, res: ServerResponse, answer: () => Promise<void>): Promise<boolean> {
    if (req.method === 'OPTIONS') return preflight(res);
    if (req.method !== 'POST') {
      oauthError(res, 405, 'invalid_request', 'use POST', { Allow: 'POST' });
      return true;
    }
    await answer();
    return true;
  }

  // ---- RFC 7591 registration ----

  private async register(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await body(req, res);
    if (raw === undefined) return;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      return oauthError(res, 400, 'invalid_client_metadata', 'the body is not JSON');
    }
    let m;
    try {
      m = checkedMetadata(json);
    } catch (e) {
      const redirect = /redirect_uris/.test((e as Error).message);
      return oauthError(res, 400, redirect ? 'invalid_redirect_uri' : 'invalid_client_metadata', (e as Error).message);
    }
    const now = this.now();
    if (!this.registrations.take(addressOf(req), now))
      return oauthError(res, 429, 'temporarily_unavailable', 'too many registrations from here this hour; try again later', {
        'Retry-After': '600',
      });
    if (this.o.store.clientsSince(new Date(now - 60 * 60_000).toISOString()) >= REGISTRATIONS_PER_HOUR)
      return oauthError(res, 429, 'temporarily_unavailable', 'too many registrations this hour; try again later', { 'Retry-After': '600' });
    const clientId = `wmc_${randomBytes(16).toString('hex')}`;
    const registered = {
      ...m,
      client_id: clientId,
      client_id_issued_at: Math.floor(now / 1000),
      token_endpoint_auth_method: 'none',
      grant_types: m.grant_types ?? ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    };
    this.o.store.addClient(clientId, JSON.stringify(registered), new Date(now).toISOString());
    send(res, 201, 'application/json', JSON.stringify(registered), { ...CORS, ...NO_STORE });
  }

  /** The client a client_id names: registered here, or its metadata document's. */
  private async client(clientId: string): Promise<Client> {
    if (this.docs.isDocumentId(clientId)) return this.docs.client(clientId, this.now());
    const stored = this.o.store.client(clientId);
    if (stored === undefined) throw new ClientError(`no client is registered as ${clientId}`);
    const m = JSON.parse(stored) as { client_name?: string; redirect_uris: string[] };
    return { client_id: clientId, client_name: m.client_name ?? 'An application', redirect_uris: m.redirect_uris };
  }

  // ---- the authorization endpoint and its consent page ----

  /**
   * The request checked as RFC 6749 §4.1.2.1 orders it: without a known client and one of its
   * redirect URIs nothing is sent anywhere (a page says why); any other fault goes back to the
   * client as an error redirect.
   */
  private async authorization(
    params: URLSearchParams,
    res: ServerResponse,
  ): Promise<{ client: Client; redirectUri: string; fields: RequestFields } | undefined> {
    for (const p of REQUEST_PARAMS)
      if (params.getAll(p).length > 1) {
        sendPage(res, 400, problemPage('Sign-in cannot go on', `The request names ${p} more than once.`));
        return undefined;
      }
    const clientId = params.get('client_id');
    if (!clientId) {
      sendPage(res, 400, problemPage('Sign-in cannot go on', 'The request names no client_id.'));
      return undefined;
    }
    let client: Client;
    try {
      client = await this.client(clientId);
    } catch (e) {
      sendPage(res, 400, problemPage('Sign-in cannot go on', e instanceof ClientError ? e.message : 'The application is not known here.'));
      return undefined;
    }
    const redirectUri = params.get('redirect_uri') ?? (client.redirect_uris.length === 1 ? client.redirect_uris[0]! : '');
    if (!redirectAllowed(client, redirectUri)) {
      sendPage(
        res,
        400,
        problemPage('Sign-in cannot go on', `The application did not register ${redirectUri || 'a redirect URI'} as where to return.`),
      );
      return undefined;
    }
    const state = params.get('state') ?? undefined;
    // Before the person has seen the page, a fault is shown here, never redirected: anyone may
    // register a redirect URI, and a redirect no one clicked would make this server an open
    // redirector (RFC 9700 §4.11.2).
    const back = (error: string, description: string) => {
      sendPage(res, 400, problemPage('Sign-in cannot go on', `The application's request is not valid (${error}): ${description}.`));
      return undefined;
    };
    if (params.get('response_type') !== 'code') return back('unsupported_response_type', 'response_type must be code');
    const challenge = params.get('code_challenge') ?? '';
    if (params.get('code_challenge_method') !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(challenge))
      return back('invalid_request', 'PKCE is required: code_challenge with code_challenge_method S256');
    const resource = params.get('resource');
    if (resource !== null && !sameResource(resource, this.resource))
      return back('invalid_target', `resource must be this server's MCP endpoint, ${this.resource}`);
    const fields: RequestFields = {
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: this.resource,
      // One scope, whatever was asked: everything the person's key may do.
      scope: SCOPE,
      ...(state !== undefined ? { state } : {}),
    };
    return { client, redirectUri, fields };
  }

  private async authorizeGet(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const params = new URL(req.url ?? '/', this.issuer).searchParams;
    const ok = await this.authorization(params, res);
    if (!ok) return;
    const nonce = randomBytes(24).toString('base64url');
    this.consent(res, ok.client, ok.fields, nonce, undefined, 200, this.csrfCookie(nonce));
  }

  private consent(
    res: ServerResponse,
    client: Client,
    fields: RequestFields,
    nonce: string,
    problem: string | undefined,
    status: number,
    cookie?: string,
  ): void {
    const page = consentPage({
      clientName: client.client_name,
      documentHost: client.documentHost,
      serverHost: this.o.publicUrl.host,
      returnsTo: returnsTo(fields.redirect_uri!),
      fields,
      csrf: this.csrf(nonce, fields),
      problem,
    });
    sendPage(res, status, page, cookie ? { 'Set-Cookie': cookie } : {});
  }

  /** The form's CSRF value: the cookie's nonce and the request's fields, under the page key. */
  private csrf(nonce: string, fields: RequestFields): string {
    return this.o.sealer.mac(`${nonce}\n${REQUEST_PARAMS.map((p) => `${p}=${fields[p] ?? ''}`).join('&')}`);
  }

  private get cookieName(): string {
    return this.o.publicUrl.protocol === 'https:' ? '__Host-wmo_csrf' : 'wmo_csrf';
  }

  private csrfCookie(nonce: string): string {
    const secure = this.o.publicUrl.protocol === 'https:' ? '; Secure' : '';
    return `${this.cookieName}=${nonce}; Path=/; HttpOnly; SameSite=Strict; Max-Age=1800${secure}`;
  }

  private async authorizePost(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // A form posted from another site is refused before anything is read (CSRF), as is one without its cookie.
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== this.issuer)
      return sendPage(res, 403, problemPage('Sign-in refused', 'The form was sent from another site.'));
    if (!/^application\/x-www-form-urlencoded\b/i.test(req.headers['content-type'] ?? ''))
      return sendPage(res, 415, problemPage('Sign-in cannot go on', 'The form must be sent as a web form.'));
    const raw = await body(req, res, true);
    if (raw === undefined) return;
    const form = new URLSearchParams(raw);
    // Every field once, the form's own (csrf, api_key, decision) as the request's: two values leave which one counts open.
    for (const [k] of form)
      if (form.getAll(k).length > 1) return sendPage(res, 400, problemPage('Sign-in cannot go on', `The form names ${k} more than once.`));
    const ok = await this.authorization(form, res);
    if (!ok) return;
    const nonce = cookieOf(req.headers.cookie, this.cookieName);
    if (!nonce || !sameSecret(form.get('csrf') ?? '', this.csrf(nonce, ok.fields)))
      return sendPage(
        res,
        403,
        problemPage('Sign-in refused', 'The form is stale or was not sent from this page. Go back to the application and start again.'),
      );
    const state = ok.fields.state;
    if (form.get('decision') === 'deny')
      return redirect(res, ok.redirectUri, {
        error: 'access_denied',
        error_description: 'the person denied access',
        ...(state !== undefined ? { state } : {}),
        iss: this.issuer,
      });
    const key = (form.get('api_key') ?? '').trim();
    if (!key) return this.consent(res, ok.client, ok.fields, nonce, 'Paste your API key first.', 400);
    const who = addressOf(req);
    // Counted before the check (tries sent together count together), given back when the key is accepted.
    if (!this.tries.take(who, this.now()))
      return this.consent(res, ok.client, ok.fields, nonce, 'Too many keys were refused from here. Wait ten minutes and try again.', 429);
    if (this.checking >= MAX_CHECKS_AT_ONCE) {
      this.tries.giveBack(who);
      return this.consent(res, ok.client, ok.fields, nonce, 'Many people are signing in just now. Try again in a minute.', 503);
    }
    let checked: KeyCheck;
    this.checking++;
    try {
      checked = await this.o.checkKey(key);
    } catch (e) {
      log.warn({ err: e }, 'OAuth consent: the key could not be checked');
      checked = { status: 503, message: 'the Workspace could not be reached' };
    } finally {
      this.checking--;
    }
    if (!('id' in checked) && !(checked.status === 401 || checked.status === 403 || checked.status === 402)) this.tries.giveBack(who);
    if (!('id' in checked)) {
      const problem =
        checked.status === 401
          ? 'That key was not accepted: it is wrong, or it was regenerated. Copy it again from your profile, API tab.'
          : checked.status === 402
            ? 'That key belongs to an account without the Pro plan: the API needs Pro.'
            : checked.status === 403
              ? 'That key belongs to a blocked account.'
              : `The key could not be checked just now (${checked.message}). Try again in a minute.`;
      return this.consent(res, ok.client, ok.fields, nonce, problem, checked.status >= 500 ? 503 : 400);
    }
    this.tries.giveBack(who);
    const now = this.now();
    const grantId = randomUUID();
    const at = new Date(now).toISOString();
    this.o.store.addGrant({
      id: grantId,
      owner_id: checked.id,
      client_id: ok.client.client_id,
      client_name: ok.client.client_name,
      resource: this.resource,
      scope: ok.fields.scope ?? '',
      sealed_key: this.o.sealer.seal(key, grantId),
      created_at: at,
      last_used_at: null,
      revoked_at: null,
      revoked_why: null,
    });
    const code = newToken('wmo_code');
    this.o.store.addCode({
      code_hash: hashToken(code),
      grant_id: grantId,
      client_id: ok.client.client_id,
      redirect_uri: ok.redirectUri,
      challenge: ok.fields.code_challenge!,
      resource: this.resource,
      expires_ms: now + CODE_TTL_MS,
      used: 0,
    });
    log.info({ grant: grantId, owner: checked.id, client: ok.client.client_name }, 'OAuth grant made');
    res.setHeader('Set-Cookie', `${this.csrfCookie('')}`.replace('Max-Age=1800', 'Max-Age=0'));
    redirect(res, ok.redirectUri, { code, ...(state !== undefined ? { state } : {}), iss: this.issuer });
  }

  // ---- the token endpoint ----

  private async token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await formOf(req, res);
    if (!form) return;
    for (const [k] of form) if (form.getAll(k).length > 1) return oauthError(res, 400, 'invalid_request', `${k} is given more than once`);
    const clientId = form.get('client_id') ?? basicClientId(req.headers.authorization);
    if (!clientId) return oauthError(res, 401, 'invalid_client', 'client_id is required (clients here are public, with PKCE)');
    const resource = form.get('resource');
    if (resource !== null && !sameResource(resource, this.resource))
      return oauthError(res, 400, 'invalid_target', `resource must be this server's MCP endpoint, ${this.resource}`);
    const grantType = form.get('grant_type');
    if (grantType === 'authorization_code') return this.exchangeCode(res, form, clientId);
    if (grantType === 'refresh_token') return this.refresh(res, form, clientId);
    return oauthError(res, 400, 'unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
  }

  private exchangeCode(res: ServerResponse, form: URLSearchParams, clientId: string): void {
    const code = form.get('code');
    const verifier = form.get('code_verifier');
    if (!code || !verifier) return oauthError(res, 400, 'invalid_request', 'code and code_verifier are required');
    const hash = hashToken(code);
    const row = this.o.store.code(hash);
    const now = this.now();
    const replayed = (grantId: string) => {
      // A code used twice: whoever holds it is not to be trusted with the grant (RFC 9700 §4.2.4).
      this.o.store.revokeGrant(grantId, 'an authorization code was used twice', new Date(now).toISOString());
      return oauthError(res, 400, 'invalid_grant', 'the code was already used; the access it gave is revoked');
    };
    if (!row) return oauthError(res, 400, 'invalid_grant', 'the code is unknown or expired');
    if (row.used) return replayed(row.grant_id);
    // Checked before the code is used: a wrong try by whoever holds a copy does not spend it.
    if (row.expires_ms <= now) return oauthError(res, 400, 'invalid_grant', 'the code expired; sign in again');
    if (row.client_id !== clientId) return oauthError(res, 400, 'invalid_grant', 'the code was issued to another client');
    if ((form.get('redirect_uri') ?? row.redirect_uri) !== row.redirect_uri)
      return oauthError(res, 400, 'invalid_grant', 'redirect_uri differs from the authorization request');
    if (!pkceMatches(verifier, row.challenge))
      return oauthError(res, 400, 'invalid_grant', 'code_verifier does not match the code_challenge');
    // One exchange wins; one that comes second is a replay.
    const used = this.o.store.useCode(hash);
    if (!used || used.used) return replayed(row.grant_id);
    const grant = this.o.store.grant(row.grant_id);
    if (!grant || grant.revoked_at !== null) return oauthError(res, 400, 'invalid_grant', 'the access was revoked; sign in again');
    this.issue(res, grant);
  }

  private refresh(res: ServerResponse, form: URLSearchParams, clientId: string): void {
    const token = form.get('refresh_token');
    if (!token) return oauthError(res, 400, 'invalid_request', 'refresh_token is required');
    const hash = hashToken(token);
    const row = this.o.store.token(hash);
    const now = this.now();
    if (!row || row.kind !== 'refresh')
      return oauthError(res, 400, 'invalid_grant', 'the refresh token is unknown or expired; sign in again');
    const grant = this.o.store.grant(row.grant_id);
    if (!grant || grant.revoked_at !== null) return oauthError(res, 400, 'invalid_grant', 'the access was revoked; sign in again');
    if (grant.client_id !== clientId) return oauthError(res, 400, 'invalid_grant', 'the refresh token was issued to another client');
    if (row.expires_ms <= now) return oauthError(res, 400, 'invalid_grant', 'the refresh token expired; sign in again');
    if (!this.o.store.useRefresh(hash)) {
      // Used before: a copy is in someone else's hands. The whole grant stops (RFC 9700 §4.14.2).
      this.o.store.revokeGrant(grant.id, 'a refresh token was used twice', new Date(now).toISOString());
      log.warn(
        { grant: grant.id, owner: grant.owner_id, client: grant.client_name },
        'OAuth grant revoked: a refresh token was used twice',
      );
      return oauthError(res, 400, 'invalid_grant', 'the refresh token was already used; the access it gave is revoked, sign in again');
    }
    this.issue(res, grant);
  }

  /** A new access token and refresh token for `grant`. */
  private issue(res: ServerResponse, grant: GrantRow): void {
    const now = this.now();
    const access = newToken('wmo_at');
    const refresh = newToken('wmo_rt');
    this.o.store.addToken({ token_hash: hashToken(access), grant_id: grant.id, kind: 'access', expires_ms: now + this.accessTtl, used: 0 });
    this.o.store.addToken({
      token_hash: hashToken(refresh),
      grant_id: grant.id,
      kind: 'refresh',
      expires_ms: now + this.refreshTtl,
      used: 0,
    });
    const answer = {
      access_token: access,
      token_type: 'Bearer',
      expires_in: Math.floor(this.accessTtl / 1000),
      refresh_token: refresh,
      ...(grant.scope ? { scope: grant.scope } : {}),
    };
    send(res, 200, 'application/json', JSON.stringify(answer), { ...CORS, ...NO_STORE });
  }

  // ---- RFC 7009 revocation: the token's whole grant stops; always 200 ----

  private async revoke(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await formOf(req, res);
    if (!form) return;
    const token = form.get('token');
    if (!token) return oauthError(res, 400, 'invalid_request', 'token is required');
    const row = this.o.store.token(hashToken(token));
    const grant = row ? this.o.store.grant(row.grant_id) : undefined;
    const clientId = form.get('client_id') ?? basicClientId(req.headers.authorization) ?? null;
    if (grant && (clientId === null || clientId === grant.client_id))
      this.o.store.revokeGrant(grant.id, 'revoked by the client', new Date(this.now()).toISOString());
    send(res, 200, 'application/json', '{}', { ...CORS, ...NO_STORE });
  }

  /** Notes a grant's use, at most once a minute each. */
  private touch(grantId: string): void {
    const now = this.now();
    if ((this.touched.get(grantId) ?? 0) > now - 60_000) return;
    this.touched.set(grantId, now);
    if (this.touched.size > 10_000) this.touched.delete(this.touched.keys().next().value!);
    this.o.store.touchGrant(grantId, new Date(now).toISOString());
  }

  private sweep(): void {
    try {
      this.o.store.sweep(this.now());
    } catch (e) {
      log.warn({ err: e }, 'OAuth: sweeping spent codes and tokens failed');
    }
  }
}

const CORS = { 'Access-Control-Allow-Origin': '*' };
const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

function preflight(res: ServerResponse): true {
  res.writeHead(204, {
    ...CORS,
    'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
    'Access-Control-Allow-Headers': 'Content-Type, Authorization, MCP-Protocol-Version',
    'Access-Control-Max-Age': '86400',
  });
  res.end();
  return true;
}

function send(res: ServerResponse, status: number, type: string, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': `${type}; charset=utf-8`, ...headers });
  res.end(text);
}

function oauthError(res: ServerResponse, status: number, error: string, description: string, headers: Record<string, string> = {}): void {
  send(res, status, 'application/json', JSON.stringify({ error, error_description: description }), { ...CORS, ...NO_STORE, ...headers });
}

/**
 * The consent and problem pages: no caching, no framing, no script, no referrer to other sites.
 * same-origin, not no-referrer: under no-referrer a browser sends the form's POST with
 * `Origin: null`, which the origin check refuses (every person clicking Allow saw "sent from
 * another site").
 */
function sendPage(res: ServerResponse, status: number, html: string, headers: Record<string, string> = {}): void {
  send(res, status, 'text/html', html, {
    ...NO_STORE,
    'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'same-origin',
    ...headers,
  });
}

/** A redirect to `to` with `params` added to its query, which is otherwise kept as registered. */
function redirect(res: ServerResponse, to: string, params: Record<string, string>): void {
  const u = new URL(to);
  const added = new URLSearchParams(params).toString();
  u.search = u.search ? `${u.search}&${added}` : `?${added}`;
  res.writeHead(302, { Location: u.href, ...NO_STORE, 'Referrer-Policy': 'no-referrer' });
  res.end();
}

/** The client_id of an `Authorization: Basic` header (clients that send one; any secret is ignored: clients here are public). */
function basicClientId(header: string | undefined): string | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!m) return undefined;
  const id = Buffer.from(m[1]!, 'base64').toString('utf8').split(':')[0];
  try {
    return id ? decodeURIComponent(id.replace(/\+/g, ' ')) : undefined;
  } catch {
    return undefined;
  }
}

/** Counts per address in a window (key tries, registrations); bounded, the oldest address forgotten first. */
class Counts {
  private readonly seen = new Map<string, { n: number; since: number }>();
  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Counts one for `who`: false (and nothing counted) when the window already holds the limit. */
  take(who: string, now: number): boolean {
    let t = this.seen.get(who);
    if (!t || now - t.since > this.windowMs) {
      this.seen.delete(who);
      t = { n: 0, since: now };
      this.seen.set(who, t);
      if (this.seen.size > 50_000) this.seen.delete(this.seen.keys().next().value!);
    }
    if (t.n >= this.limit) return false;
    t.n++;
    return true;
  }

  giveBack(who: string): void {
    const t = this.seen.get(who);
    if (t && t.n > 0) t.n--;
  }
}

/** A body of at most 16 KiB as text; answers 413 itself and gives undefined past it. */
async function body(req: IncomingMessage, res: ServerResponse, page = false): Promise<string | undefined> {
  try {
    return (await readBody(req, MAX_FORM_BYTES)).toString('utf8');
  } catch (e) {
    if (!(e instanceof TooLarge)) throw e;
    if (page) sendPage(res, 413, problemPage('Sign-in cannot go on', 'The form is too large.'), { Connection: 'close' });
    else oauthError(res, 413, 'invalid_request', `the body is over ${MAX_FORM_BYTES} bytes`, { Connection: 'close' });
    return undefined;
  }
}

/** The form of a token or revocation request; answers the refusal itself (not a form, too large) and gives undefined then. */
async function formOf(req: IncomingMessage, res: ServerResponse): Promise<URLSearchParams | undefined> {
  if (!/^application\/x-www-form-urlencoded\b/i.test(req.headers['content-type'] ?? '')) {
    oauthError(res, 400, 'invalid_request', 'send the parameters as application/x-www-form-urlencoded');
    return undefined;
  }
  const raw = await body(req, res);
  return raw === undefined ? undefined : new URLSearchParams(raw);
}

/** Two resource identifiers the same, a trailing slash aside. */
function sameResource(a: string, b: string): boolean {
  return a.replace(/\/$/, '') === b.replace(/\/$/, '');
}

/** What the consent page names as where the person returns: the redirect URI's host, or an app's own scheme. */
function returnsTo(uri: string): string {
  const u = new URL(uri);
  return u.host || `${u.protocol.replace(/:$/, '')} (an application on this device)`;
}

function cookieOf(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=') || undefined;
  }
  return undefined;
}

/**
 * Who sent a request, for the counts per address: the socket's address; behind a proxy on this
 * machine (the TLS proxy), the last X-Forwarded-For entry, which that proxy itself wrote (any
 * earlier one is the client's own word).
 */
function addressOf(req: IncomingMessage): string {
  const socket = req.socket.remoteAddress ?? '';
  const forwarded = req.headers['x-forwarded-for'];
  const list = Array.isArray(forwarded) ? forwarded.join(',') : forwarded;
  if (list && /^(127\.|::1$|::ffff:127\.)/.test(socket)) {
    const last = list.split(',').pop()!.trim();
    if (last) return last;
  }
  return socket;
}
