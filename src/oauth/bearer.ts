/**
 * The bearer check of the MCP endpoint: an access token checked with the SDK's
 * `verifyBearerToken` against the kept tokens and grants, the key its grant holds opened, the
 * grant's use noted; a refusal is a 401 with the challenge that starts sign-in (RFC 9728), and a
 * grant whose key the backend refused is revoked.
 */
import { OAuthError, OAuthErrorCode, verifyBearerToken, type AuthInfo } from '@modelcontextprotocol/server';
import { log } from '../common/log.js';
import type { Context, ResourcePath } from './context.js';
import { ALL, held, READ, SCOPES, type Scope } from './scopes.js';
import { hashToken, sameSecret } from './secrets.js';
import type { GrantRow, TokenRow } from './store.js';

/** Who a request to the MCP endpoint is, once its token checked out: the grant, the API key it holds, what it lets the client do. */
export interface SignedIn {
  grant: GrantRow;
  key: string;
  /** What the token lets its client do: the four scopes' names (`workspace` expanded, within the cap), `workspace:read` always; also `auth.scopes`. */
  scopes: Scope[];
  auth: AuthInfo;
}

/** An answer to send as it is. */
export type Refusal = { status: number; headers: Record<string, string>; body: string };

/** How many grants' last noted use is remembered (the oldest forgotten first). */
const TOUCHED_KEPT = 10_000;

/**
 * How long a token's read (the token, its grant, the key it holds, opened) is used again for the
 * same token's next requests. A person's calls come several a second: each would otherwise read
 * the shared database and open the key again. A revocation through this server forgets it at
 * once (`forget`); one through another instance, or an administrator's, is seen within this long.
 */
const RECENT_MS = 1_000;
/** Tokens whose read is kept at most (one more forgets them all). */
const RECENT_KEPT = 10_000;

/** A token's read kept for `RECENT_MS`. */
interface Recent {
  until: number;
  token: TokenRow;
  grant: GrantRow;
  key: string;
}

export class Bearer {
  private readonly touched = new Map<string, number>();
  /** Token reads of the last RECENT_MS, by the token's hash. */
  private readonly recent = new Map<string, Recent>();
  /** Counts `forget`s: a read begun before one is not kept (it may hold the grant as it was before its revocation). */
  private forgets = 0;

  constructor(
    private readonly ctx: Context,
    /** Each protected resource metadata's address, the one of the resource asked for named in its challenge. */
    private readonly resourceMetadataUrls: Record<ResourcePath, string>,
  ) {}

  /**
   * The signed-in person behind a request to the resource `at` (the MCP endpoint or its
   * read-only door): the token checked with the SDK's bearer check (unknown, revoked, expired or
   * for another resource, the other door's too: 401 with the challenge that starts sign-in at
   * `at`), its grant, the key it holds and its scopes.
   */
  async signedIn(header: string | undefined, at: ResourcePath = 'mcp'): Promise<SignedIn | Refusal> {
    const { store, sealer } = this.ctx.o;
    let found: { token: TokenRow; grant: GrantRow; scopes: Scope[]; key?: string } | undefined;
    const forgets = this.forgets;
    let storeFailed: unknown;
    let hash: string | undefined;
    try {
      const auth = await verifyBearerToken(header, {
        resourceMetadataUrl: this.resourceMetadataUrls[at],
        expectedResource: new URL(at === 'mcp' ? this.ctx.resource : this.ctx.door),
        verifier: {
          verifyAccessToken: async (token) => {
            hash = hashToken(token);
            const now = this.ctx.now();
            const kept = this.recent.get(hash);
            // The token and its grant in one read that never holds the serving thread (PostgreSQL: an async pool), or as read within RECENT_MS.
            const row =
              kept && kept.until > now
                ? kept
                : await store.access(hash).catch((e: unknown) => {
                    storeFailed = e;
                    throw e;
                  });
            const t = row?.token;
            const grant = t && t.kind === 'access' && sameSecret(t.token_hash, hash) ? row.grant : undefined;
            if (!t || !grant || grant.revoked_at !== null || t.expires_ms <= this.ctx.now())
              throw new OAuthError(OAuthErrorCode.InvalidToken, 'The access token is unknown, expired or revoked; sign in again');
            // The token's own scope (a refresh may narrow it), else its grant's; read alone at the door.
            const scopes = held(t.scope ?? grant.scope, grant.resource === this.ctx.door ? [READ] : this.ctx.cap);
            found = { token: t, grant, scopes, ...(kept && kept.until > now ? { key: kept.key } : {}) };
            return {
              token: '',
              clientId: grant.client_id,
              scopes,
              expiresAt: Math.floor(t.expires_ms / 1000),
              resource: new URL(grant.resource),
              extra: { grant: grant.id, owner: grant.owner_id, client: grant.client_name },
            };
          },
        },
      });
      const key = found!.key ?? sealer.open(found!.grant.sealed_key, found!.grant.id);
      if (key === undefined)
        throw new OAuthError(OAuthErrorCode.InvalidToken, 'The grant cannot be opened here (another WORKSPACE_SECRET); sign in again');
      if (found!.key === undefined && forgets === this.forgets) this.keep(hash!, found!.token, found!.grant, key);
      this.touch(found!.grant.id);
      return { grant: found!.grant, key, scopes: found!.scopes, auth };
    } catch (e) {
      // The store did not answer (a lost connection, a full pool): nothing says the token is bad,
      // so not the 401 that makes every client drop its token and sign in again.
      if (storeFailed !== undefined) return this.unavailable(storeFailed);
      return this.challenge(
        e instanceof OAuthError ? e : new OAuthError(OAuthErrorCode.InvalidToken, 'The access token was refused'),
        header !== undefined,
        at,
      );
    }
  }

  /** 503 with Retry-After when the token could not be looked up; the log line carries the cause. */
  private unavailable(cause: unknown): Refusal {
    log.warn({ err: cause }, 'an access token could not be checked: the sign-in store did not answer');
    return {
      status: 503,
      headers: { 'Content-Type': 'application/json', 'Retry-After': '2' },
      body: JSON.stringify({
        error: OAuthErrorCode.TemporarilyUnavailable,
        error_description: 'The sign-in store did not answer; send the request again in a few seconds (your token was not refused)',
      }),
    };
  }

  /**
   * The key behind a grant stopped working (regenerated, blocked, plan lapsed): the grant is
   * revoked (before the 401 is answered), and the 401 starts sign-in again at `at` (default: the
   * grant's own resource).
   */
  async keyRefused(
    grant: GrantRow,
    why: string,
    at: ResourcePath = grant.resource === this.ctx.door ? 'mcp/read-only' : 'mcp',
  ): Promise<Refusal> {
    if (await this.ctx.o.store.revokeGrant(grant.id, `the key stopped working: ${why}`, new Date(this.ctx.now()).toISOString()))
      log.info({ grant: grant.id, owner: grant.owner_id, client: grant.client_name }, 'OAuth grant revoked: its key stopped working');
    return this.challenge(
      new OAuthError(OAuthErrorCode.InvalidToken, `Your Workspace API key stopped working (${why}); sign in again`),
      true,
      at,
    );
  }

  /**
   * A 401 with `WWW-Authenticate: Bearer resource_metadata=…, scope=…` (the resource `at`'s
   * metadata, and what a full sign-in there asks: `workspace`, all four, unless the cap or the
   * door holds fewer) and, when a token was sent, its error. Not the SDK's
   * bearerAuthChallengeResponse: that one always names an error, first, where a request without
   * a token gets the bare challenge (RFC 6750 §3.1).
   */
  private challenge(e: OAuthError, tokenSent: boolean, at: ResourcePath): Refusal {
    const full = at === 'mcp' ? this.ctx.cap : [READ];
    const scope = full.length === SCOPES.length ? ALL : full.join(' ');
    const parts = [`resource_metadata="${this.resourceMetadataUrls[at]}"`, `scope="${scope}"`];
    // A header takes printable ASCII only: an upstream's message may hold more (a dash, a line break).
    if (tokenSent) parts.push(`error="${e.code}"`, `error_description="${e.message.replace(/[^\x20-\x7e]|["\\]/g, ' ')}"`);
    return {
      status: 401,
      headers: { 'Content-Type': 'application/json', 'WWW-Authenticate': `Bearer ${parts.join(', ')}` },
      body: JSON.stringify({ error: tokenSent ? e.code : OAuthErrorCode.InvalidToken, error_description: e.message }),
    };
  }

  /** Keeps a token's read (its grant and the key opened) for RECENT_MS. */
  private keep(hash: string, token: TokenRow, grant: GrantRow, key: string): void {
    if (this.recent.size >= RECENT_KEPT) this.recent.clear();
    this.recent.set(hash, { until: this.ctx.now() + RECENT_MS, token, grant, key });
  }

  /** Forgets every token read of `grantId` (revoked through this server): its next request reads the grant again. */
  forget(grantId: string): void {
    this.forgets++;
    for (const [hash, r] of this.recent) if (r.grant.id === grantId) this.recent.delete(hash);
  }

  /** Notes a grant's use, at most once a minute each. */
  private touch(grantId: string): void {
    const now = this.ctx.now();
    if ((this.touched.get(grantId) ?? 0) > now - 60_000) return;
    this.touched.set(grantId, now);
    if (this.touched.size > TOUCHED_KEPT) this.touched.delete(this.touched.keys().next().value!);
    // Not waited for: the request goes on meanwhile; a failure is only a note.
    this.ctx.o.store
      .touchGrant(grantId, new Date(now).toISOString())
      .catch((e: unknown) => log.warn({ err: (e as Error).message, grant: grantId }, "OAuth: noting a grant's use failed"));
  }
}
