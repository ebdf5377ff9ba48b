/**
 * The token endpoint: a code exchanged once (PKCE S256, its client, redirect URI and resource),
 * a refresh token rotated at each use; a code or refresh token used twice revokes its grant
 * (RFC 9700 §4.2.4, §4.14.2). Each exchange answers a new access token and refresh token, and
 * the scope its grant holds; a refresh may ask for less (RFC 6749 §6), never more.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { OAuthErrorCode } from '@modelcontextprotocol/server';
import { log } from '../common/log.js';
import { offeredAt, type Context } from './context.js';
import { clientIdOf, CORS, formOf, INVALID_TARGET, NO_STORE, oauthError, resourceNamed, send } from './replies.js';
import { held, requested, scopeText } from './scopes.js';
import { hashToken, newToken, pkceMatches } from './secrets.js';
import type { GrantRow } from './store.js';

/** The lifetimes: an access token an hour, a refresh token 30 days from its last use. */
const ACCESS_TTL_MS = 60 * 60_000;
const REFRESH_TTL_MS = 30 * 24 * 60 * 60_000;

const { InvalidGrant, InvalidRequest } = OAuthErrorCode;

export class TokenEndpoint {
  private readonly accessTtl: number;
  private readonly refreshTtl: number;

  constructor(private readonly ctx: Context) {
    this.accessTtl = ctx.o.accessTtlMs ?? ACCESS_TTL_MS;
    this.refreshTtl = ctx.o.refreshTtlMs ?? REFRESH_TTL_MS;
  }

  /** POST /oauth/token: authorization_code or refresh_token, every parameter once. */
  async token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await formOf(req, res);
    if (!form) return;
    for (const [k] of form) if (form.getAll(k).length > 1) return oauthError(res, 400, InvalidRequest, `${k} is given more than once`);
    const clientId = clientIdOf(form, req);
    if (!clientId) return oauthError(res, 401, OAuthErrorCode.InvalidClient, 'client_id is required (clients here are public, with PKCE)');
    const resource = form.get('resource');
    if (resourceNamed(this.ctx, resource) === undefined)
      return oauthError(res, 400, INVALID_TARGET, `resource must be this server's MCP endpoint, ${this.ctx.resource}, or ${this.ctx.door}`);
    const grantType = form.get('grant_type');
    if (grantType === 'authorization_code') return this.exchangeCode(res, form, clientId, resource);
    if (grantType === 'refresh_token') return this.refresh(res, form, clientId, resource);
    return oauthError(res, 400, OAuthErrorCode.UnsupportedGrantType, 'grant_type must be authorization_code or refresh_token');
  }

  private async exchangeCode(res: ServerResponse, form: URLSearchParams, clientId: string, resource: string | null): Promise<void> {
    const { store } = this.ctx.o;
    const code = form.get('code');
    const verifier = form.get('code_verifier');
    if (!code || !verifier) return oauthError(res, 400, InvalidRequest, 'code and code_verifier are required');
    const hash = hashToken(code);
    const row = await store.code(hash);
    const now = this.ctx.now();
    const replayed = async (grantId: string) => {
      // A code used twice: whoever holds it is not to be trusted with the grant (RFC 9700 §4.2.4).
      await store.revokeGrant(grantId, 'an authorization code was used twice', new Date(now).toISOString());
      return oauthError(res, 400, InvalidGrant, 'the code was already used; the access it gave is revoked');
    };
    if (!row) return oauthError(res, 400, InvalidGrant, 'the code is unknown or expired');
    if (row.used) return replayed(row.grant_id);
    // Checked before the code is used: a wrong try by whoever holds a copy does not spend it.
    if (row.expires_ms <= now) return oauthError(res, 400, InvalidGrant, 'the code expired; sign in again');
    if (row.client_id !== clientId) return oauthError(res, 400, InvalidGrant, 'the code was issued to another client');
    if ((form.get('redirect_uri') ?? row.redirect_uri) !== row.redirect_uri)
      return oauthError(res, 400, InvalidGrant, 'redirect_uri differs from the authorization request');
    if (!pkceMatches(verifier, row.challenge)) return oauthError(res, 400, InvalidGrant, 'code_verifier does not match the code_challenge');
    // The grant read before the code is used: a second exchange that meanwhile finds the code
    // used revokes the grant only after this one won (its tokens then stop working), and does
    // not turn the one that won into a refusal.
    const grant = await store.grant(row.grant_id);
    if (!grant || grant.revoked_at !== null) return oauthError(res, 400, InvalidGrant, 'the access was revoked; sign in again');
    // One exchange wins; one that comes second is a replay.
    const used = await store.useCode(hash);
    if (!used || used.used) return replayed(row.grant_id);
    if (!this.forGrant(res, grant, resource)) return;
    await this.issue(res, grant, null);
  }

  private async refresh(res: ServerResponse, form: URLSearchParams, clientId: string, resource: string | null): Promise<void> {
    const { store } = this.ctx.o;
    const token = form.get('refresh_token');
    if (!token) return oauthError(res, 400, InvalidRequest, 'refresh_token is required');
    const hash = hashToken(token);
    const row = await store.token(hash);
    const now = this.ctx.now();
    if (!row || row.kind !== 'refresh') return oauthError(res, 400, InvalidGrant, 'the refresh token is unknown or expired; sign in again');
    const grant = await store.grant(row.grant_id);
    if (!grant || grant.revoked_at !== null) return oauthError(res, 400, InvalidGrant, 'the access was revoked; sign in again');
    if (grant.client_id !== clientId) return oauthError(res, 400, InvalidGrant, 'the refresh token was issued to another client');
    if (row.expires_ms <= now) return oauthError(res, 400, InvalidGrant, 'the refresh token expired; sign in again');
    if (!this.forGrant(res, grant, resource)) return;
    // RFC 6749 §6: less than the grant holds may be asked, never more; none asked, all it holds.
    const asked = form.get('scope');
    const holds = held(grant.scope, offeredAt(this.ctx, grant.resource));
    const want = asked === null ? undefined : requested(asked);
    if (want && (want.unknown || want.scopes.some((s) => !holds.includes(s))))
      return oauthError(res, 400, OAuthErrorCode.InvalidScope, `the scope may not be wider than what was granted: ${holds.join(' ')}`);
    if (!(await store.useRefresh(hash))) {
      // Used before: a copy is in someone else's hands. The whole grant stops (RFC 9700 §4.14.2).
      await store.revokeGrant(grant.id, 'a refresh token was used twice', new Date(now).toISOString());
      log.warn(
        { grant: grant.id, owner: grant.owner_id, client: grant.client_name },
        'OAuth grant revoked: a refresh token was used twice',
      );
      return oauthError(res, 400, InvalidGrant, 'the refresh token was already used; the access it gave is revoked, sign in again');
    }
    // Read always comes with the rest; the refresh token keeps the grant's whole scope (RFC 6749 §6).
    const narrowed = want && want.scopes.length > 0 ? scopeText(held(asked!, holds), asked!) : null;
    await this.issue(res, grant, narrowed);
  }

  /** Whether the token request's `resource` (none: the grant's) is the one the grant is for; if not, the answer sent. */
  private forGrant(res: ServerResponse, grant: GrantRow, resource: string | null): boolean {
    if (resource === null || resourceNamed(this.ctx, resource) === grant.resource) return true;
    oauthError(res, 400, INVALID_TARGET, `the access was granted for ${grant.resource}`);
    return false;
  }

  /** A new access token (its scope `narrowed`, or its grant's) and refresh token for `grant`, both kept before the answer is sent. */
  private async issue(res: ServerResponse, grant: GrantRow, narrowed: string | null): Promise<void> {
    const { store } = this.ctx.o;
    const now = this.ctx.now();
    const access = newToken('wmo_at');
    const refresh = newToken('wmo_rt');
    const tokens = [
      { token_hash: hashToken(access), kind: 'access', expires_ms: now + this.accessTtl, scope: narrowed },
      { token_hash: hashToken(refresh), kind: 'refresh', expires_ms: now + this.refreshTtl, scope: null },
    ] as const;
    await Promise.all(tokens.map((t) => store.addToken({ ...t, grant_id: grant.id, used: 0 })));
    // What the access token holds here: within the cap as it is now (it may have narrowed since the grant).
    const scope = narrowed ?? grant.scope;
    const answer = {
      access_token: access,
      token_type: 'Bearer',
      expires_in: Math.floor(this.accessTtl / 1000),
      refresh_token: refresh,
      scope: scopeText(held(scope, offeredAt(this.ctx, grant.resource)), scope),
    };
    send(res, 200, 'application/json', JSON.stringify(answer), { ...CORS, ...NO_STORE });
  }
}
