/**
 * The MCP server over Streamable HTTP at `http://H:N/mcp`: one MCP session (and one `Server`)
 * per client, all over the same McpContext. Every request has its Host and Origin checked (DNS
 * rebinding), and a bearer token when one is set, which is always when bound beyond loopback.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_MAX_REQUEST_BODY_SIZE, requestBodyTooLargeMessage } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import { log } from '../log.js';
import { readBody, TooLarge } from '../read-body.js';
import { createMcpServer } from './server.js';
import type { ToolSpec } from './tools.js';
import type { McpContext } from './context.js';

export const MCP_PATH = '/mcp';
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

/** Refuses malformed UTF-8 instead of replacing it (the transport's own reader replaces it). */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A JSON POST body, read and parsed here and handed to the transport already parsed: the
 * transport's own reader turns malformed UTF-8 into replacement characters, so a tool call
 * whose bytes no JSON decoder should accept would go through. Answers the refusal itself and
 * resolves `undefined` when the body is refused; other requests resolve `{ body: undefined }`.
 */
async function readJsonRpcBody(req: IncomingMessage, res: ServerResponse): Promise<{ body: unknown } | undefined> {
  if (req.method !== 'POST' || !isJsonContentType(req.headers['content-type'])) return { body: undefined };
  let raw: Buffer;
  try {
    raw = await readBody(req, DEFAULT_MAX_REQUEST_BODY_SIZE);
  } catch (e) {
    if (!(e instanceof TooLarge)) throw e;
    deny(res, 413, requestBodyTooLargeMessage(DEFAULT_MAX_REQUEST_BODY_SIZE), { Connection: 'close' });
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
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path !== MCP_PATH) return deny(res, 404, `Not found; the MCP endpoint is ${MCP_PATH}`);
    const bad = checkHostAndOrigin(req, opts.host);
    if (bad) return deny(res, 403, bad);
    if (opts.token !== undefined && !tokenMatches(req.headers.authorization, opts.token)) {
      return deny(res, 401, 'Unauthorized: send Authorization: Bearer <token>', { 'WWW-Authenticate': 'Bearer' });
    }
    const parsed = await readJsonRpcBody(req, res);
    if (!parsed) return;
    const sid = req.headers['mcp-session-id'];
    const id = Array.isArray(sid) ? sid[0] : sid;
    if (id !== undefined) {
      const transport = sessions.get(id);
      if (!transport) return deny(res, 404, 'Session not found; initialize a new session');
      return transport.handleRequest(req, res, parsed.body);
    }
    if (req.method !== 'POST') return deny(res, 400, 'Bad Request: no session; send initialize first', { Allow: 'POST' });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (newId) => {
        sessions.set(newId, transport);
      },
    });
    const server = createMcpServer(ctx, tools);
    // The server's own close handling is chained after this by connect().
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, parsed.body);
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
      for (const t of sessions.values()) await t.close();
      sessions.clear();
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
    },
  };
}
