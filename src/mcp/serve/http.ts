/**
 * The MCP server over Streamable HTTP at `http://H:N/mcp`, both protocol eras on one endpoint,
 * all over the same McpContext. Every request has its Host and Origin checked (DNS rebinding),
 * and a bearer token when one is set, which is always when bound beyond loopback (or, with
 * `--auth key`, its caller's own API key: each owner then has a context of their own, and a
 * session answers only the owner who opened it, see `serveMcpHttpByKey`); a POST body
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
import { NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  DEFAULT_MAX_REQUEST_BODY_SIZE,
  isInitializeRequest,
  isJsonContentType,
  isLegacyRequest,
  type AuthInfo,
} from '@modelcontextprotocol/server';
import { log } from '../../shared/log.js';
import { readBody, TooLarge } from '../../shared/read-body.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.js';
import { Sessions, type SessionBounds } from './sessions.js';
import { mcpServerFactory, type McpServerFactory } from './server.js';
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
  /** The bounds of 2025-era sessions: how many open at once (overall, per owner) and how long one idles before it is closed. */
  sessions?: SessionBounds;
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
 * text (400, a JSON-RPC parse error), nested deeper than MAX_JSON_DEPTH (400, invalid request).
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
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    deny(res, 400, 'Parse error: Invalid JSON', {}, -32700);
    return undefined;
  }
  // Before anything recursive sees it (the SDK re-serialises the body: 5 000 levels overflowed the stack, a 500).
  if (nestsDeeperThan(body, MAX_JSON_DEPTH)) {
    deny(res, 400, `Invalid Request: the body nests deeper than ${MAX_JSON_DEPTH} levels`, {}, -32600);
    return undefined;
  }
  return { body };
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? '');
  if (!m) return false;
  const a = Buffer.from(m[1]!.trim());
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The Host check alone (see checkHostAndOrigin); `publicName`, the public URL's host, is allowed too. */
function checkHost(req: IncomingMessage, bound: string, publicName?: string): string | undefined {
  const host = req.headers.host;
  if (!host) return 'Missing Host header';
  const name = hostnameOf(host).toLowerCase();
  const wildcard = bound === '0.0.0.0' || bound === '::' || bound === '';
  if (!wildcard && !isLoopback(name) && name !== bound.toLowerCase() && name !== `[${bound.toLowerCase()}]` && name !== publicName) {
    return `Host not allowed: ${host}`;
  }
  return undefined;
}

/**
 * Host check: bound to loopback, only loopback names; bound to one address, that address or
 * loopback names; bound to every interface (0.0.0.0, ::), any name (the token guards it).
 * Origin check: a browser page may call only from a loopback origin or the same host.
 */
function checkHostAndOrigin(req: IncomingMessage, bound: string, publicName?: string): string | undefined {
  const bad = checkHost(req, bound, publicName);
  if (bad) return bad;
  const name = hostnameOf(req.headers.host!).toLowerCase();
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

/** What serves one party (the one owner of `--auth token`, or each owner of `--auth key`): its instances and 2026-07-28 handler. */
interface Party {
  factory: McpServerFactory;
  modern: ReturnType<typeof createMcpHandler>;
  modernNode: ReturnType<typeof toNodeHandler>;
  close(): Promise<void>;
}

function partyOver(ctx: McpContext, tools: ToolSpec[], onerror: (e: Error) => void, closeServed?: () => Promise<void>): Party {
  const factory = mcpServerFactory(ctx, tools);
  // 2026-07-28: one instance a request; list changes reach open subscriptions/listen streams
  // through the handler's bus. 2025-era requests never get here ('reject'): see `legacy`.
  const modern = createMcpHandler((rc) => factory(rc, { pushListChanged: false }), { legacy: 'reject', onerror });
  const modernNode = toNodeHandler(modern, { onerror });
  const unsubscribe = ctx.onListsChanged(() => modern.notify.resourcesChanged());
  return {
    factory,
    modern,
    modernNode,
    async close() {
      unsubscribe();
      await modern.close();
      await closeServed?.();
    },
  };
}

/** The headers that say a request's era (the SDK's classification reads these and the parsed body only). */
const ERA_HEADERS = ['mcp-protocol-version', 'mcp-method', 'mcp-name'] as const;

/**
 * The request as isLegacyRequest reads it when its body comes parsed beside it: the method and
 * the era's headers, no body. Not a full copy (every header, the body again as a stream): that
 * cost about a sixth of a tool call's server CPU (tools/bench/mcp-sessions.mjs), and the
 * transport that then answers makes its own.
 */
export function classifiable(req: Pick<IncomingMessage, 'headers'>): Request {
  const headers = new Headers();
  for (const name of ERA_HEADERS) {
    const v = req.headers[name];
    if (typeof v === 'string') headers.set(name, v);
  }
  // Only a POST is classified (route: GET and DELETE are the 2025 era's own).
  return new Request('http://localhost/mcp', { method: 'POST', headers });
}

/** The bearer of an Authorization header, or undefined. */
function bearerOf(header: string | undefined): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m?.[1];
}

/**
 * `--auth key`: who a request is, from its own Workspace API key, and what serves each owner.
 * The key is checked on each request and lives only in its scope (`within`, when the backend
 * sends it on); owners are kept by id (with the hash of their key, when their context acts by it).
 */
export interface Callers {
  /**
   * Runs `fn` with `key` as the key of the backend's calls until `ended` is called (when the
   * response closed): a backend that sends each call with its request's key (remote). Absent,
   * `fn` just runs: each owner's context acts by the key it was made for (`keyHash`).
   */
  within?<T>(key: string, fn: (ended: () => void) => T): T;
  /**
   * The owner of `key`: their id, or the backend's refusal. `keyHash`: the key's hash when the
   * owner's context acts by it; a request with another key of the same owner (the key was
   * regenerated) gets a new context, and the old one goes with its sessions.
   */
  owner(key: string): Promise<{ id: number; keyHash?: string } | { status: number; message: string }>;
  /** The context and tools of an owner (acting by the key with `keyHash`), made when first needed; `close` when no longer kept. */
  served(ownerId: number, keyHash?: string): Promise<{ ctx: McpContext; tools: ToolSpec[]; close?(): Promise<void> }>;
  /** Most owners kept at once (default 500), and how long an owner without a session is kept unused (default 15 min). */
  maxOwners?: number;
  idleMs?: number;
  /** Requests a minute one person may make (after who they are is known), so no one starves the others; 0: no bound. Default 600. */
  perPersonPerMinute?: number;
  /** `--auth oauth`: sign-in's own addresses, and a request's key from its access token instead of its bearer. */
  gate?: Gate;
  /**
   * `--auth oauth`: how long a grant's key, once getMe accepted it, is taken as working without
   * asking again (default 0: every request asks). A remote API counts each getMe against the
   * person's 120 a minute; their calls in between still fail on their own if the key stopped.
   */
  keyRecheckMs?: number;
}

/** An answer to send as it is (status, headers, body). */
interface Refusal {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A grant of OAuth sign-in as the endpoint needs it: whose, and through which client. */
interface Grant {
  id: string;
  owner_id: number;
  client_id: string;
  client_name: string;
}

/** `--auth oauth` (src/oauth/server.ts): the sign-in's own addresses and the key behind an access token. */
interface Gate {
  /** The public URL's host name: requests through the TLS proxy carry it. */
  readonly hostName: string;
  /** Answers a request for one of sign-in's addresses (metadata, registration, consent, token, revocation); false for any other path. */
  serve(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean>;
  /** The grant and key behind an Authorization header, or the 401 (with its `resource_metadata` challenge) to send. */
  signedIn(header: string | undefined): Promise<{ grant: Grant; key: string } | Refusal>;
  /** The backend refused the grant's key: the grant is revoked; the 401 that makes the client sign in again. */
  keyRefused(grant: Grant, why: string): Refusal;
}

function send(res: ServerResponse, r: Refusal): void {
  res.writeHead(r.status, r.headers);
  res.end(r.body);
}

/** Requests per person in the current and the last minute: a sliding window's count, for `perPersonPerMinute`. */
class PersonRate {
  private minute = 0;
  private now = new Map<number, number>();
  private last = new Map<number, number>();
  constructor(private readonly perMinute: number) {}

  /** Counts a request of `owner`; the seconds to wait when over the bound, else undefined. */
  take(owner: number, at = Date.now()): number | undefined {
    if (this.perMinute <= 0) return undefined;
    const minute = Math.floor(at / 60_000);
    if (minute !== this.minute) {
      this.last = minute === this.minute + 1 ? this.now : new Map();
      this.now = new Map();
      this.minute = minute;
    }
    const into = (at % 60_000) / 60_000;
    const count = (this.now.get(owner) ?? 0) + (this.last.get(owner) ?? 0) * (1 - into);
    if (count >= this.perMinute) return Math.max(1, Math.ceil(60 - (at % 60_000) / 1000));
    this.now.set(owner, (this.now.get(owner) ?? 0) + 1);
    return undefined;
  }
}

/** An owner's party as kept: when last used, their requests under way and open 2025-era sessions (kept while any is). */
interface Kept {
  party: Promise<Party>;
  /** The hash of the key the party acts by (Callers.owner), if it acts by one. */
  keyHash?: string;
  /** The owner's key changed: the party is let go, and a request that reached it before is refused. */
  retired?: boolean;
  lastUsed: number;
  busy: number;
  sessions: Set<string>;
}

/** Serve MCP over Streamable HTTP; resolves once listening. */
export async function serveMcpHttp(ctx: McpContext, tools: ToolSpec[], opts: HttpOptions): Promise<McpHttpServer> {
  const onerror = (e: Error) => log.warn({ err: e }, 'MCP HTTP');
  return listenOn(opts, onerror, { kind: 'token', party: partyOver(ctx, tools, onerror) });
}

/** Serve MCP over Streamable HTTP to every owner with their own API key as the bearer (`--auth key`); resolves once listening. */
export async function serveMcpHttpByKey(callers: Callers, opts: Omit<HttpOptions, 'token'>): Promise<McpHttpServer> {
  const onerror = (e: Error) => log.warn({ err: e }, 'MCP HTTP');
  return listenOn(opts, onerror, { kind: 'key', callers });
}

async function listenOn(
  opts: HttpOptions,
  onerror: (e: Error) => void,
  mode: { kind: 'token'; party: Party } | { kind: 'key'; callers: Callers },
): Promise<McpHttpServer> {
  /** 2025-era sessions, each with the owner who opened it (`--auth key`; undefined: `--auth token`'s one owner). */
  const sessions = new Sessions<NodeStreamableHTTPServerTransport>(opts.sessions ?? {}, onerror);
  const kept = new Map<number, Kept>();
  const maxOwners = mode.kind === 'key' ? (mode.callers.maxOwners ?? 500) : 0;
  const idleMs = mode.kind === 'key' ? (mode.callers.idleMs ?? 15 * 60_000) : 0;

  /**
   * Drops owners unused for idleMs, and over the bound (with `room` places wanted for new ones)
   * the least recently used; never one with an open session or a request under way.
   */
  function sweep(now: number, room = 0): void {
    const idle = [...kept].filter(([, k]) => k.sessions.size === 0 && k.busy === 0).sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    let over = kept.size + room - maxOwners;
    for (const [owner, k] of idle) {
      if (now - k.lastUsed < idleMs && over <= 0) break;
      letGo(owner, k);
      over--;
    }
  }
  /** An owner's party no longer kept, closed once made. */
  function letGo(owner: number, k: Kept): void {
    kept.delete(owner);
    void k.party.then((p) => p.close()).catch(onerror);
  }
  const sweeper = mode.kind === 'key' ? setInterval(() => sweep(Date.now()), 60_000) : undefined;
  const rate = mode.kind === 'key' ? new PersonRate(mode.callers.perPersonPerMinute ?? 600) : undefined;
  /** `--auth oauth`: grants whose key getMe accepted lately (keyRecheckMs), by grant id. */
  const checkedKeys = new Map<string, { owner: number; keyHash?: string; until: number }>();
  sweeper?.unref();

  /**
   * The party of `owner` as kept, made when first needed, busy until `res` closed; undefined when
   * the bound is reached by owners with open sessions or requests under way.
   */
  function partyOf(callers: Callers, who: { id: number; keyHash?: string }, res: ServerResponse): Kept | undefined {
    const now = Date.now();
    const owner = who.id;
    let k = kept.get(owner);
    if (k && k.keyHash !== who.keyHash) {
      // The owner's key changed (regenerated): the party of the old key goes now, with the
      // sessions it opened; work still under way on it is refused at its next call.
      k.retired = true;
      for (const id of k.sessions) sessions.closeNow(id);
      letGo(owner, k);
      k = undefined;
    }
    if (!k) {
      if (kept.size >= maxOwners) sweep(now, 1);
      if (kept.size >= maxOwners) return undefined;
      const party = callers.served(owner, who.keyHash).then(({ ctx, tools, close }) => partyOver(ctx, tools, onerror, close));
      k = { party, keyHash: who.keyHash, lastUsed: now, busy: 0, sessions: new Set() };
      const made = k;
      // A failure is not kept: the next request tries again.
      party.catch(() => {
        if (kept.get(owner) === made) kept.delete(owner);
      });
      kept.set(owner, k);
    }
    k.lastUsed = now;
    const busy = k;
    busy.busy++;
    res.once('close', () => {
      busy.busy--;
      busy.lastUsed = Date.now();
    });
    return k;
  }

  /**
   * 2025-era traffic, sessionful as before: the SDK's own stateless fallback could not send a
   * client anything outside a response (no GET stream, no elicitation/create mid-call). A
   * session answers only the owner who opened it: to anyone else it is not found.
   */
  async function legacy(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    party: Party,
    owner: number | undefined,
    rec?: Kept,
  ): Promise<void> {
    const sid = req.headers['mcp-session-id'];
    const id = Array.isArray(sid) ? sid[0] : sid;
    if (id !== undefined) {
      const transport = sessions.get(id, owner);
      if (!transport) return deny(res, 404, 'Session not found; initialize a new session');
      res.once('close', sessions.use(id));
      return transport.handleRequest(req, res, body);
    }
    if (Array.isArray(body))
      return deny(res, 400, 'Invalid Request: a JSON-RPC batch needs a session; send initialize alone first', {}, -32600);
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      return deny(res, 400, 'Bad Request: no session; send initialize first', req.method === 'POST' ? {} : { Allow: 'POST' });
    }
    const place = sessions.reserve(owner);
    if ('retryAfter' in place)
      return deny(res, 503, 'Too many sessions open; try again later', { 'Retry-After': String(place.retryAfter) });
    // The sessions of the party this request reached (not of a newer one, should the key have changed meanwhile).
    const ownSessions = rec?.sessions;
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (newId) => {
        place.opened(newId, transport);
        ownSessions?.add(newId);
      },
    });
    // The server's own close handling is chained after this by connect().
    transport.onclose = () => {
      if (transport.sessionId) {
        sessions.delete(transport.sessionId);
        ownSessions?.delete(transport.sessionId);
      }
    };
    try {
      await party.factory({ era: 'legacy' }, { pushListChanged: true }).connect(transport);
      await transport.handleRequest(req, res, body);
    } finally {
      place.done();
      // An initialize refused (not acceptable, not a valid message): no session; its instance is let go.
      if (transport.sessionId === undefined) await transport.close();
      // One opened while its party was let go (the owner's key changed): closed with the others.
      else if (rec?.retired) sessions.closeNow(transport.sessionId);
    }
  }

  /**
   * After the checks of who calls: routed by era to `party`'s instances (`rec`: as kept for its
   * owner, `--auth key`). A request whose party was let go while its body came in (its owner's
   * key changed) is refused as its key is now.
   */
  async function route(req: IncomingMessage, res: ServerResponse, party: Party, owner: number | undefined, rec?: Kept): Promise<void> {
    const gone = () => deny(res, 401, 'Unauthorized: the key was regenerated; send the new one', { 'WWW-Authenticate': 'Bearer' });
    // GET (a session's notification stream) and DELETE (its end) exist in the 2025 era only.
    if (req.method !== 'POST') return rec?.retired ? gone() : legacy(req, res, undefined, party, owner, rec);
    const parsed = await readJsonRpcBody(req, res);
    if (!parsed) return;
    if (rec?.retired) return gone();
    if (await isLegacyRequest(classifiable(req), parsed.body)) return legacy(req, res, parsed.body, party, owner, rec);
    return party.modernNode(req, res, parsed.body);
  }

  /**
   * `--auth key` and `--auth oauth`: the request's owner from its key (its bearer, or the key its
   * access token's grant holds), checked on every request, within the key's scope (when the
   * backend has one), which ends with the response.
   */
  async function asOwner(req: IncomingMessage & { auth?: AuthInfo }, res: ServerResponse, callers: Callers): Promise<void> {
    const unauthorized = (why: string) => deny(res, 401, `Unauthorized: ${why}`, { 'WWW-Authenticate': 'Bearer' });
    let key: string | undefined;
    let grant: Grant | undefined;
    if (callers.gate) {
      const signed = await callers.gate.signedIn(req.headers.authorization);
      if ('status' in signed) return send(res, signed);
      ({ key, grant } = signed);
    } else {
      key = bearerOf(req.headers.authorization);
      if (key === undefined) return unauthorized('send your Workspace API key as Authorization: Bearer <key>');
    }
    const checked = async (ended?: () => void) => {
      if (ended) res.once('close', ended);
      // The key is checked on every request (or every keyRecheckMs): a grant whose key stopped working stops.
      const known = grant ? checkedKeys.get(grant.id) : undefined;
      const who = known && known.until > Date.now() ? { id: known.owner, keyHash: known.keyHash } : await callers.owner(key);
      if (!('id' in who)) {
        if (who.status === 401 || who.status === 402 || who.status === 403) {
          if (grant) return send(res, callers.gate!.keyRefused(grant, who.message));
          return unauthorized(`the key was refused (${who.message})`);
        }
        return deny(res, who.status >= 500 ? who.status : 503, `The key's owner could not be learnt: ${who.message}`, {
          'Retry-After': '30',
        });
      }
      if (grant && grant.owner_id !== who.id) return send(res, callers.gate!.keyRefused(grant, 'the key now belongs to someone else'));
      if (grant && !known && callers.keyRecheckMs) {
        if (checkedKeys.size >= 10_000) checkedKeys.delete(checkedKeys.keys().next().value!);
        checkedKeys.set(grant.id, { owner: who.id, keyHash: who.keyHash, until: Date.now() + callers.keyRecheckMs });
      }
      const wait = rate?.take(who.id);
      if (wait !== undefined)
        return deny(res, 429, `Too many requests from you: at most ${callers.perPersonPerMinute ?? 600} a minute; try again in ${wait} s`, {
          'Retry-After': String(wait),
        });
      const rec = partyOf(callers, who, res);
      if (!rec) return deny(res, 503, 'Too many people at once; try again later', { 'Retry-After': '60' });
      // Who is calling, for the handlers (ctx.http.authInfo) in both eras: the owner (and the OAuth client), never the key.
      req.auth = grant
        ? { token: '', clientId: grant.client_id, scopes: [], extra: { owner: who.id, client: grant.client_name, grant: grant.id } }
        : { token: '', clientId: `owner ${who.id}`, scopes: [] };
      return route(req, res, await rec.party, who.id, rec);
    };
    return callers.within ? callers.within(key, checked) : checked();
  }

  async function handle(req: IncomingMessage & { auth?: AuthInfo }, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const gate = mode.kind === 'key' ? mode.callers.gate : undefined;
    if (path !== MCP_PATH) {
      // Sign-in's addresses are for other sites' pages and servers too: the Host is checked, not the Origin.
      if (gate && !checkHost(req, opts.host, gate.hostName) && (await gate.serve(req, res, path))) return;
      return deny(res, 404, `Not found; the MCP endpoint is ${MCP_PATH}`);
    }
    const bad = checkHostAndOrigin(req, opts.host, gate?.hostName);
    if (bad) return deny(res, 403, bad);
    if (mode.kind === 'key') return asOwner(req, res, mode.callers);
    if (opts.token !== undefined) {
      if (!tokenMatches(req.headers.authorization, opts.token)) {
        return deny(res, 401, 'Unauthorized: send Authorization: Bearer <token>', { 'WWW-Authenticate': 'Bearer' });
      }
      // Who is calling, for the handlers (ctx.http.authInfo) in both eras: the token's holder.
      req.auth = { token: opts.token, clientId: 'bearer', scopes: [] };
    }
    return route(req, res, mode.party, undefined);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      log.error({ err: e }, 'MCP HTTP request failed');
      if (!res.headersSent) deny(res, 500, 'Internal error');
      else res.end();
    });
  });
  // A request (headers and body; not the answer, which may stream for long) must arrive within a minute: no slow drip holds a socket.
  server.requestTimeout = 60_000;
  server.headersTimeout = 30_000;
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
      if (sweeper) clearInterval(sweeper);
      await sessions.close();
      if (mode.kind === 'token') await mode.party.close();
      for (const k of kept.values()) await (await k.party.catch(() => undefined))?.close();
      kept.clear();
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
    },
  };
}
