/**
 * `--auth oauth`: the server is the OAuth 2.1 authorization server of its own MCP endpoint, as
 * the MCP authorization spec describes: RFC 9728 and RFC 8414 metadata (metadata.ts), RFC 7591
 * registration and Client ID Metadata Documents (registration.ts, clients.ts), the authorization
 * code flow with PKCE S256 only and the RFC 8707 resource checked (authorize.ts), single-use
 * codes and refresh tokens rotated, a reused one revoking its grant (token.ts), RFC 7009
 * revocation (revocation.ts), and the bearer check of the MCP endpoint (bearer.ts). What is this
 * product's own: the consent page, where a person pastes their Workspace API key, checked with
 * getMe, and the grant that keeps it sealed. This module is the one entry the command builds.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { OAuthErrorCode } from '@modelcontextprotocol/server';
import { log } from '../common/log.js';
import { isLoopbackHost } from '../common/loopback.js';
import { Authorization } from './authorize.js';
import { Bearer, type Refusal, type SignedIn } from './bearer.js';
import { ClientDocuments } from './clients.js';
import { contextOf, type Context, type OAuthOptions, type ResourcePath } from './context.js';
import { Metadata } from './metadata.js';
import { Registration } from './registration.js';
import { oauthError, preflight, send } from './replies.js';
import { revoke } from './revocation.js';
import type { GrantRow, OAuthStore } from './store.js';
import { TokenEndpoint } from './token.js';

/** Spent codes and tokens are swept this often. */
const SWEEP_MS = 10 * 60_000;

export class OAuthServer {
  readonly issuer: string;
  /** The MCP endpoint: the resource a token is for unless it is the read-only door's. */
  readonly resource: string;
  /** The MCP endpoint's protected resource metadata address. */
  readonly resourceMetadataUrl: string;
  private readonly ctx: Context;
  private readonly docs: ClientDocuments;
  private readonly metadata: Metadata;
  private readonly registration: Registration;
  private readonly authorization: Authorization;
  private readonly tokens: TokenEndpoint;
  private readonly bearer: Bearer;
  private readonly sweeper: NodeJS.Timeout;

  constructor(o: OAuthOptions) {
    // A grant revoked through this server (a replay, RFC 7009, a key that stopped working): the
    // bearer forgets what it read of it, so its tokens are refused from the next request.
    const store = o.store;
    const revokeGrant: OAuthStore['revokeGrant'] = async (id, why, at) => {
      const done = await store.revokeGrant(id, why, at);
      this.bearer.forget(id);
      return done;
    };
    this.ctx = contextOf({
      ...o,
      store: new Proxy(store, { get: (target, k) => (k === 'revokeGrant' ? revokeGrant : target[k as keyof OAuthStore]) }),
    });
    this.issuer = this.ctx.issuer;
    this.resource = this.ctx.resource;
    this.docs = new ClientDocuments(isLoopbackHost(o.publicUrl.hostname));
    this.metadata = new Metadata(this.ctx);
    this.resourceMetadataUrl = this.metadata.resourceMetadataUrls.mcp;
    this.registration = new Registration(this.ctx, this.docs);
    this.authorization = new Authorization(this.ctx, this.registration);
    this.tokens = new TokenEndpoint(this.ctx);
    this.bearer = new Bearer(this.ctx, this.metadata.resourceMetadataUrls);
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  /** The host names requests may carry besides the bound address's: the public URL's. */
  get hostName(): string {
    return this.ctx.o.publicUrl.hostname.toLowerCase();
  }

  /** Answers a request for one of sign-in's addresses; false when `path` is none of them. */
  async serve(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
    if (this.metadata.has(path)) {
      await this.metadata.serve(req, res, path);
      return true;
    }
    switch (path) {
      case '/oauth/authorize':
        if (req.method === 'GET') await this.authorization.get(req, res);
        else if (req.method === 'POST') await this.authorization.post(req, res);
        else send(res, 405, 'text/plain', 'Method not allowed', { Allow: 'GET, POST' });
        return true;
      case '/oauth/token':
        return api(req, res, () => this.tokens.token(req, res));
      case '/oauth/register':
        return api(req, res, () => this.registration.register(req, res));
      case '/oauth/revoke':
        return api(req, res, () => revoke(this.ctx, req, res));
      default:
        return false;
    }
  }

  /**
   * The signed-in person behind a request to `at`, the MCP endpoint (default) or its read-only
   * door: the token checked with the SDK's bearer check (unknown, revoked, expired or for another
   * resource, the other door's too: 401 with the challenge that starts sign-in at `at`), its
   * grant, the key it holds and its `scopes` (also `auth.scopes`).
   */
  signedIn(header: string | undefined, at?: ResourcePath): Promise<SignedIn | Refusal> {
    return this.bearer.signedIn(header, at);
  }

  /**
   * The key behind a grant stopped working (regenerated, blocked, plan lapsed): the grant is
   * revoked, and the 401 starts sign-in again at `at` (default: the resource the grant is for).
   */
  keyRefused(grant: GrantRow, why: string, at?: ResourcePath): Promise<Refusal> {
    return this.bearer.keyRefused(grant, why, at);
  }

  /** Stops the sweeps and closes the metadata documents' connections. */
  close(): Promise<void> {
    clearInterval(this.sweeper);
    return this.docs.close();
  }

  private async sweep(): Promise<void> {
    try {
      await this.ctx.o.store.sweep(this.ctx.now());
    } catch (e) {
      log.warn({ err: e }, 'OAuth: sweeping spent codes and tokens failed');
    }
  }
}

/** A JSON endpoint (token, registration, revocation): a CORS preflight answered, POST only. */
async function api(req: IncomingMessage, res: ServerResponse, answer: () => Promise<void>): Promise<boolean> {
  if (req.method === 'OPTIONS') return preflight(res);
  if (req.method !== 'POST') {
    oauthError(res, 405, OAuthErrorCode.InvalidRequest, 'use POST', { Allow: 'POST' });
    return true;
  }
  await answer();
  return true;
}
