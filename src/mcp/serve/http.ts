/**
 * The MCP server over Streamable HTTP at `http://H:N/mcp`, both protocol eras on one endpoint,
 * all over the same McpContext. Every request has its Host and Origin checked (DNS rebinding),
 * and a bearer token when one is set, which is always when bound beyond loopback; a POST body
 * is then read once, here, strictly (malformed UTF-8 is a parse error, never replaced), and
 * routed by era: a 2025-era message goes to its session (one `Server` a session, opened by
 * `initialize`, named by `Mcp-Session-Id`, with a GET stream for notifications and
 * `elicitation/create` mid-call); a 2026-07-28 message (its `_meta` names the revision) to the
 * SDK's stateless handler, one `Server` a request, list changes on `subscriptions/listen`.
 *
 * Behind a balancer (several instances on one PostgreSQL database) a 2026-07-28 request may go
 * to any instance; a 2025-era session lives in the instance that made it, so the balancer
 * routes by `Mcp-Session-Id` (learnt from the answer to initialize), and an instance that does
 * not know a session answers 404, upon which the client initialises a new one (the spec's rule).
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeStreamableHTTPServerTransport, toNodeHandler, toWebRequest } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  DEFAULT_MAX_REQUEST_BODY_SIZE,
  isInitializeRequest,
  isJsonContentType,
  isLegacyRequest,
  type AuthInfo,
} from '@modelcontextprotocol/server';
import { log } from '../../log.js';
import { readBody, TooLarge } from '../../read-body.js';
import { mcpServerFactory } from './server.js';
import type { ToolSpec } from '../tool-spec.js';
import type { McpContext } from '../context.js';

const MCP_PATH = '/mcp';
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || /^127\./.test(host);
}

export interface HttpOptions {
  host: string;
  port: number;
  /** Required as `Authorization: Bearer <token>` when set. */
  token?: string;
}

export interface McpHttpServer {
  server: HttpServer;
  url: string;
  close(): Promise<void>;
}

function hostnameOf(hostHeader: string): string {
  if (hostHeader.startsWith('[')) return hostHeader.slice(0, hostHeader.indexOf(']') + 1);
  return hostHeader.replace(/:\d+$/, '');
}

function deny(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}, code = -32000): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** Refuses malformed UTF-8 instead of replacing it (a replaced byte could carry a call through). */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A POST's JSON-RPC body, parsed; answers the refusal itself and resolves `undefined` when
 * the body is refused: over the size limit (413), not JSON (415), not valid UTF-8 or not JSON
 * text (400, a JSON-RPC parse error).
 */
async function readJsonRpcBody(req: IncomingMessage, res: ServerResponse): Promise<{ body: unknown } | undefined> {
  if (!isJsonContentType(req.headers['content-type'])) {
    deny(res, 415, 'Unsupported Media Type: Content-Type must be application/json');
    return undefined;
  }
  let raw: Buffer;
  try {
    raw = await readBody(req, DEFAULT_MAX_REQUEST_BODY_SIZE);
  } catch (e) {
    if (!(e instanceof TooLarge)) throw e;
    deny(res, 413, `Payload too large: the body is over ${DEFAULT_MAX_REQUEST_BODY_SIZE} bytes`, { Connection: 'close' });
    return undefined;
  }
  let text: string;
  try {
    text = STRICT_UTF8.decode(raw);
  } catch {
    deny(res, 400, 'Parse error: the body is not valid UTF-8', {}, -32700);
    return undefined;
  }
  try {
    return { body: JSON.parse(text) };
  } catch {
    deny(res, 400, 'Parse error: Invalid JSON', {}, -32700);
    return undefined;
  }
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? '');
  if (!m) return false;
  const a = Buffer.from(m[1]!.trim());
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Host check: bound to loopback, only loopback names; bound to one address, that address or
 * loopback names; bound to every interface (0.0.0.0, ::), any name (the token guards it).
 * Origin check: a browser page may call only from a loopback origin or the same host.
 */
function checkHostAndOrigin(req: IncomingMessage, bound: string): string | undefined {
  const host = req.headers.host;
  if (!host) return 'Missing Host header';
  const name = hostnameOf(host).toLowerCase();
  const wildcard = bound === '0.0.0.0' || bound === '::' || bound === '';
  if (!wildcard && !isLoopback(name) && name !== bound.toLowerCase() && name !== `[${bound.toLowerCase()}]`) {
    return `Host not allowed: ${host}`;
  }
  const origin = req.headers.origin;
  if (origin !== undefined) {
    let originHost: string;
    try {
      originHost = new URL(origin).hostname.toLowerCase();
    } catch {
      return `Origin not allowed: ${origin}`;
    }
    if (!isLoopback(originHost) && originHost !== name && `[${originHost}]` !== name) return `Origin not allowed: ${origin}`;
  }
  return undefined;
}

/** Serve MCP over Streamable HTTP; resolves once listening. */
export async function serveMcpHttp(ctx: McpContext, tools: ToolSpec[], opts: HttpOptions): Promise<McpHttpServer> {
  const factory = mcpServerFactory(ctx, tools);
  const sessions = new Map<string, NodeStreamableHTTPServerTransport>();
  const onerror = (e: Error) => log.warn({ err: e }, 'MCP HTTP');
  // 2026-07-28: one instance a request; list changes reach open subscriptions/listen streams
  // through the handler's bus. 2025-era requests never get here ('reject'): see `legacy`.
  const modern = createMcpHandler((rc) => factory(rc, { pushListChanged: false }), { legacy: 'reject', onerror });
  const modernNode = toNodeHandler(modern, { onerror });
  const unsubscribe = ctx.onListsChanged(() => modern.notify.resourcesChanged());

  /**
   * 2025-era traffic, sessionful as before: the SDK's own stateless fallback could not send a
   * client anything outside a response (no GET stream, no elicitation/create mid-call).
   */
  async function legacy(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const sid = req.headers['mcp-session-id'];
    const id = Array.isArray(sid) ? sid[0] : sid;
    if (id !== undefined) {
      const transport = sessions.get(id);
      if (!transport) return deny(res, 404, 'Session not found; initialize a new session');
      return transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      return deny(res, 400, 'Bad Request: no session; send initialize first', req.method === 'POST' ? {} : { Allow: 'POST' });
    }
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (newId) => {
        sessions.set(newId, transport);
      },
    });
    // The server's own close handling is chained after this by connect().
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await factory({ era: 'legacy' }, { pushListChanged: true }).connect(transport);
    await transport.handleRequest(req, res, body);
  }

  async function handle(req: IncomingMessage & { auth?: AuthInfo }, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path !== MCP_PATH) return deny(res, 404, `Not found; the MCP endpoint is ${MCP_PATH}`);
    const bad = checkHostAndOrigin(req, opts.host);
    if (bad) return deny(res, 403, bad);
    if (opts.token !== undefined) {
      if (!tokenMatches(req.headers.authorization, opts.token)) {
        return deny(res, 401, 'Unauthorized: send Authorization: Bearer <token>', { 'WWW-Authenticate': 'Bearer' });
      }
      // Who is calling, for the handlers (ctx.http.authInfo) in both eras: the token's holder.
      req.auth = { token: opts.token, clientId: 'bearer', scopes: [] };
    }
    // GET (a session's notification stream) and DELETE (its end) exist in the 2025 era only.
    if (req.method !== 'POST') return legacy(req, res, undefined);
    const parsed = await readJsonRpcBody(req, res);
    if (!parsed) return;
    if (await isLegacyRequest(await toWebRequest(req, parsed.body), parsed.body)) return legacy(req, res, parsed.body);
    return modernNode(req, res, parsed.body);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      log.error({ err: e }, 'MCP HTTP request failed');
      if (!res.headersSent) deny(res, 500, 'Internal error');
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    server,
    url: `http://${shownHost}:${addr.port}${MCP_PATH}`,
    async close() {
      unsubscribe();
      for (const t of sessions.values()) await t.close();
      sessions.clear();
      await modern.close();
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
    },
  };
}
