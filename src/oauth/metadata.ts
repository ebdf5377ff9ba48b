/**
 * The discovery documents: RFC 9728 protected resource metadata (the MCP endpoint's, also at the
 * origin's own path for clients that look there first; the read-only door's, whose grants hold
 * `workspace:read` alone) and RFC 8414 authorization server
 * metadata, made here and answered by the SDK's `oauthMetadataResponse` (CORS-open, 405 to
 * other methods), kept an hour by caches.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  buildOAuthProtectedResourceMetadata,
  getOAuthProtectedResourceMetadataUrl,
  oauthMetadataResponse,
  type AuthMetadataOptions,
  type OAuthMetadata,
} from '@modelcontextprotocol/server';
import { offeredAt, type Context, type ResourcePath } from './context.js';

const RESOURCE_DOC = '/.well-known/oauth-protected-resource';
const SERVER_DOC = '/.well-known/oauth-authorization-server';

/** The documents that tell a client where and how to sign in. */
export class Metadata {
  /** The protected resource metadata's address for each resource (the MCP endpoint's, the door's), which its 401 challenge names. */
  readonly resourceMetadataUrls: Record<ResourcePath, string>;
  /** Each protected resource metadata document's path, and the options it is made of. */
  private readonly docs = new Map<string, AuthMetadataOptions>();
  private readonly resourceDocPath: string;

  constructor(private readonly ctx: Context) {
    const { issuer } = ctx;
    const oauthMetadata = {
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      registration_endpoint: `${issuer}/oauth/register`,
      revocation_endpoint: `${issuer}/oauth/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none'],
      scopes_supported: [...ctx.cap],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    } as OAuthMetadata;
    const urls = {} as Record<ResourcePath, string>;
    for (const [path, url] of [
      ['mcp', ctx.resource],
      ['mcp/read-only', ctx.door],
    ] as const) {
      const resource = new URL(url);
      const options: AuthMetadataOptions = {
        oauthMetadata,
        resourceServerUrl: resource,
        resourceName: path === 'mcp' ? 'Workspace' : 'Workspace (read-only)',
        scopesSupported: [...offeredAt(ctx, url)],
        dangerouslyAllowInsecureIssuerUrl: ctx.o.publicUrl.protocol === 'http:',
      };
      // A public URL the SDK refuses as an issuer fails here, at start, not at the first request.
      buildOAuthProtectedResourceMetadata(options);
      urls[path] = getOAuthProtectedResourceMetadataUrl(resource);
      this.docs.set(new URL(urls[path]).pathname, options);
    }
    this.resourceMetadataUrls = urls;
    this.resourceDocPath = new URL(urls.mcp).pathname;
  }

  /** Whether `path` is one of the documents' addresses. */
  has(path: string): boolean {
    return path === RESOURCE_DOC || path === SERVER_DOC || this.docs.has(path);
  }

  /** Answers a request for one of the documents (`has(path)`). */
  async serve(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const docPath = this.docs.has(path) ? path : this.resourceDocPath;
    const asked = new URL(path === RESOURCE_DOC ? this.resourceDocPath : path, this.ctx.issuer);
    // A method fetch's Request refuses (TRACE, CONNECT) is, as any other but these, not allowed.
    const method = ['GET', 'HEAD', 'OPTIONS'].includes(req.method ?? '') ? req.method! : 'POST';
    const wanted = req.headers['access-control-request-headers'];
    const headers = typeof wanted === 'string' ? { 'Access-Control-Request-Headers': wanted } : undefined;
    const answer = oauthMetadataResponse(new Request(asked, { method, headers }), this.docs.get(docPath)!)!;
    const out = Object.fromEntries(answer.headers);
    if (answer.status === 200) out['cache-control'] = 'public, max-age=3600';
    res.writeHead(answer.status, out);
    res.end(Buffer.from(await answer.arrayBuffer()));
  }
}
