/**
 * The authorization endpoint and its consent page: the request checked as RFC 6749 §4.1.2.1
 * orders it (PKCE S256 required, the RFC 8707 resource this server's MCP endpoint or its
 * read-only door), the page shown with a CSRF cookie and a box per scope (ticked as the request
 * asked, within the cap; read alone at the door), and the form posted back: the person's key
 * checked with getMe (bounded at once and per address), then a grant holding it sealed and the
 * scopes ticked (never more than asked; read always), and a single-use code sent to the redirect
 * URI the client registered, or the person's denial.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { OAuthErrorCode } from '@modelcontextprotocol/server';
import { parseCookie, stringifySetCookie } from 'cookie';
import { log } from '../common/log.js';
import { ClientError, redirectAllowed, type Client } from './clients.js';
import { consentPage, problemPage, type RequestFields } from './consent-page.js';
import { offeredAt, type Context, type KeyCheck } from './context.js';
import { addressOf, Counts } from './limits.js';
import type { Registration } from './registration.js';
import { body, cannotGoOn, INVALID_TARGET, isForm, redirect, resourceNamed, sendPage } from './replies.js';
import { asked, held, READ, scopeText, type Scope } from './scopes.js';
import { hashToken, newToken, sameSecret } from './secrets.js';

/** A code lives a minute. */
const CODE_TTL_MS = 60_000;
/** Key checks of the consent page under way at once. */
const MAX_CHECKS_AT_ONCE = 32;
/** Failed key checks on the consent page, per address, in ten minutes. */
const KEY_TRIES = 20;
/** How long the consent page's CSRF cookie lasts, in seconds. */
const CSRF_COOKIE_S = 1800;

/**
 * The authorization request's parameters that travel through the consent form; its `scope` as
 * `requested_scope` (its known values), since the form's `scope` values are the boxes ticked.
 */
const REQUEST_PARAMS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'code_challenge',
  'code_challenge_method',
  'state',
  'resource',
  'requested_scope',
];

/** An authorization request that checked out: its client, where it returns, the fields the form carries, the scopes it may have. */
interface Checked {
  client: Client;
  redirectUri: string;
  fields: RequestFields;
  /** The boxes on the page: the cap, or read alone at the read-only door. */
  offered: readonly Scope[];
  /** Those ticked to start with: what the request asked of them, read always. The person may only narrow them. */
  asked: Scope[];
}

export class Authorization {
  /** Refused key checks per address (KEY_TRIES in ten minutes). */
  private readonly tries = new Counts(KEY_TRIES, 10 * 60_000);
  /** Key checks under way: a bound, so a flood of pasted keys cannot queue up against the backend. */
  private checking = 0;

  constructor(
    private readonly ctx: Context,
    private readonly clients: Registration,
  ) {}

  /** GET: the consent page for a request that checks out, with its CSRF cookie. */
  async get(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const params = new URL(req.url ?? '/', this.ctx.issuer).searchParams;
    if (params.getAll('scope').length > 1) return cannotGoOn(res, 400, 'The request names scope more than once.');
    const ok = await this.checked(params, params.get('scope'), res);
    if (!ok) return;
    const nonce = randomBytes(24).toString('base64url');
    this.consent(res, ok, nonce, undefined, 200, this.csrfCookie(nonce, CSRF_COOKIE_S));
  }

  /** POST: the consent form back, with the person's key and decision. */
  async post(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // A form posted from another site is refused before anything is read (CSRF), as is one without its cookie.
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== this.ctx.issuer)
      return sendPage(res, 403, problemPage('Sign-in refused', 'The form was sent from another site.'));
    if (!isForm(req)) return cannotGoOn(res, 415, 'The form must be sent as a web form.');
    const raw = await body(req, res, true);
    if (raw === undefined) return;
    const form = new URLSearchParams(raw);
    // Every field once, the form's own (csrf, api_key, decision) as the request's: two values leave which one counts open.
    // Not scope: its values are the boxes ticked.
    for (const [k] of form)
      if (k !== 'scope' && form.getAll(k).length > 1) return cannotGoOn(res, 400, `The form names ${k} more than once.`);
    const ok = await this.checked(form, form.get('requested_scope'), res);
    if (!ok) return;
    const nonce = parseCookie(req.headers.cookie ?? '')[this.cookieName];
    if (!nonce || !sameSecret(form.get('csrf') ?? '', this.csrf(nonce, ok.fields)))
      return sendPage(
        res,
        403,
        problemPage('Sign-in refused', 'The form is stale or was not sent from this page. Go back to the application and start again.'),
      );
    const state = ok.fields.state;
    if (form.get('decision') === 'deny')
      return redirect(res, ok.redirectUri, {
        error: OAuthErrorCode.AccessDenied,
        error_description: 'the person denied access',
        ...(state !== undefined ? { state } : {}),
        iss: this.ctx.issuer,
      });
    const key = (form.get('api_key') ?? '').trim();
    if (!key) return this.consent(res, ok, nonce, 'Paste your API key first.', 400);
    const checked = await this.checkKey(key, addressOf(req));
    if (!('id' in checked)) return this.consent(res, ok, nonce, checked.problem, checked.status);
    const code = await this.grant(ok, key, checked.id, form.getAll('scope'));
    res.setHeader('Set-Cookie', this.csrfCookie('', 0));
    redirect(res, ok.redirectUri, { code, ...(state !== undefined ? { state } : {}), iss: this.ctx.issuer });
  }

  /**
   * The request checked as RFC 6749 §4.1.2.1 orders it: without a known client and one of its
   * redirect URIs nothing is sent anywhere (a page says why); nor is it for any other fault
   * before the person has seen the page.
   */
  private async checked(params: URLSearchParams, scope: string | null, res: ServerResponse): Promise<Checked | undefined> {
    const refuse = (why: string) => {
      cannotGoOn(res, 400, why);
      return undefined;
    };
    for (const p of REQUEST_PARAMS) if (params.getAll(p).length > 1) return refuse(`The request names ${p} more than once.`);
    const clientId = params.get('client_id');
    if (!clientId) return refuse('The request names no client_id.');
    let client: Client;
    try {
      client = await this.clients.client(clientId);
    } catch (e) {
      return refuse(e instanceof ClientError ? e.message : 'The application is not known here.');
    }
    const redirectUri = params.get('redirect_uri') ?? (client.redirect_uris.length === 1 ? client.redirect_uris[0]! : '');
    if (!redirectAllowed(client, redirectUri))
      return refuse(`The application did not register ${redirectUri || 'a redirect URI'} as where to return.`);
    const state = params.get('state') ?? undefined;
    // Before the person has seen the page, a fault is shown here, never redirected: anyone may
    // register a redirect URI, and a redirect no one clicked would make this server an open
    // redirector (RFC 9700 §4.11.2).
    const back = (error: string, description: string) => refuse(`The application's request is not valid (${error}): ${description}.`);
    if (params.get('response_type') !== 'code') return back(OAuthErrorCode.UnsupportedResponseType, 'response_type must be code');
    const challenge = params.get('code_challenge') ?? '';
    if (params.get('code_challenge_method') !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(challenge))
      return back(OAuthErrorCode.InvalidRequest, 'PKCE is required: code_challenge with code_challenge_method S256');
    const resource = resourceNamed(this.ctx, params.get('resource'));
    if (resource === undefined)
      return back(INVALID_TARGET, `resource must be this server's MCP endpoint, ${this.ctx.resource}, or ${this.ctx.door}`);
    // Values this server does not know are ignored; none known (or none at all): everything.
    const requested = asked(scope);
    const fields: RequestFields = {
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource,
      requested_scope: requested,
      ...(state !== undefined ? { state } : {}),
    };
    const offered = offeredAt(this.ctx, resource);
    return { client, redirectUri, fields, offered, asked: held(requested, offered) };
  }

  /** The consent page for `ok`, its form's CSRF value made of `nonce`; `problem`, what went wrong with the last try. */
  private consent(res: ServerResponse, ok: Checked, nonce: string, problem: string | undefined, status: number, cookie?: string): void {
    const page = consentPage({
      clientName: ok.client.client_name,
      documentHost: ok.client.documentHost,
      serverHost: this.ctx.o.publicUrl.host,
      returnsTo: returnsTo(ok.redirectUri),
      fields: ok.fields,
      offered: ok.offered,
      asked: ok.asked,
      csrf: this.csrf(nonce, ok.fields),
      problem,
    });
    sendPage(res, status, page, cookie ? { 'Set-Cookie': cookie } : {});
  }

  /** The form's CSRF value: the cookie's nonce and the request's fields, under the page key. */
  private csrf(nonce: string, fields: RequestFields): string {
    return this.ctx.o.sealer.mac(`${nonce}\n${REQUEST_PARAMS.map((p) => `${p}=${fields[p] ?? ''}`).join('&')}`);
  }

  private get cookieName(): string {
    return this.ctx.o.publicUrl.protocol === 'https:' ? '__Host-wmo_csrf' : 'wmo_csrf';
  }

  /** The CSRF cookie holding `nonce` for `maxAge` seconds (0: gone). */
  private csrfCookie(nonce: string, maxAge: number): string {
    const secure = this.ctx.o.publicUrl.protocol === 'https:';
    return stringifySetCookie(this.cookieName, nonce, { path: '/', httpOnly: true, sameSite: 'strict', maxAge, secure });
  }

  /** The key checked with the backend, within the bounds; its owner, or what the page says and its status. */
  private async checkKey(key: string, who: string): Promise<{ id: number } | { problem: string; status: number }> {
    // Counted before the check (tries sent together count together), given back when the key is accepted.
    if (!this.tries.take(who, this.ctx.now()))
      return { problem: 'Too many keys were refused from here. Wait ten minutes and try again.', status: 429 };
    if (this.checking >= MAX_CHECKS_AT_ONCE) {
      this.tries.giveBack(who);
      return { problem: 'Many people are signing in just now. Try again in a minute.', status: 503 };
    }
    let checked: KeyCheck;
    this.checking++;
    try {
      checked = await this.ctx.o.checkKey(key);
    } catch (e) {
      log.warn({ err: e }, 'OAuth consent: the key could not be checked');
      checked = { status: 503, message: 'the Workspace could not be reached' };
    } finally {
      this.checking--;
    }
    if ('id' in checked || ![401, 402, 403].includes(checked.status)) this.tries.giveBack(who);
    if ('id' in checked) return checked;
    const problem =
      checked.status === 401
        ? 'That key was not accepted: it is wrong, or it was regenerated. Copy it again from your profile, API tab.'
        : checked.status === 402
          ? 'That key belongs to an account without the Pro plan: the API needs Pro.'
          : checked.status === 403
            ? 'That key belongs to a blocked account.'
            : `The key could not be checked just now (${checked.message}). Try again in a minute.`;
    return { problem, status: checked.status >= 500 ? 503 : 400 };
  }

  /**
   * The grant of `owner`'s consent to `ok`'s client, `key` sealed in it, holding the boxes
   * `ticked` of those asked (read always; no box posted at all, as by a form filled without a
   * browser: those asked), and the single-use code that leads to it; both kept before the code is sent.
   */
  private async grant(ok: Checked, key: string, owner: number, ticked: string[]): Promise<string> {
    const { store, sealer } = this.ctx.o;
    const now = this.ctx.now();
    const grantId = randomUUID();
    const scopes = ticked.length === 0 ? ok.asked : ok.asked.filter((s) => s === READ || ticked.includes(s));
    await store.addGrant({
      id: grantId,
      owner_id: owner,
      client_id: ok.client.client_id,
      client_name: ok.client.client_name,
      resource: ok.fields.resource!,
      scope: scopeText(scopes, ok.fields.requested_scope!),
      sealed_key: sealer.seal(key, grantId),
      created_at: new Date(now).toISOString(),
      last_used_at: null,
      revoked_at: null,
      revoked_why: null,
    });
    const code = newToken('wmo_code');
    await store.addCode({
      code_hash: hashToken(code),
      grant_id: grantId,
      client_id: ok.client.client_id,
      redirect_uri: ok.redirectUri,
      challenge: ok.fields.code_challenge!,
      resource: ok.fields.resource!,
      expires_ms: now + CODE_TTL_MS,
      used: 0,
    });
    log.info({ grant: grantId, owner, client: ok.client.client_name, scopes, resource: ok.fields.resource }, 'OAuth grant made');
    return code;
  }
}

/** What the consent page names as where the person returns: the redirect URI's host, or an app's own scheme. */
function returnsTo(uri: string): string {
  const u = new URL(uri);
  return u.host || `${u.protocol.replace(/:$/, '')} (an application on this device)`;
}
