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
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { isInitializeRequest, isLegacyRequest, type AuthInfo } from '@modelcontextprotocol/server';
import { log } from '../../common/log.js';
import { bindFirst, Drain, type Bound } from '../../common/drain.js';
import { tokenMatches } from '../auth/bearer.js';
import { CallerCheck, refusal, type CallerOptions, type HttpAnswer } from '../auth/callers.js';
import { HostCheck } from '../auth/host.js';
import { reachOf, type Door, type Reach } from '../auth/scopes.js';
import { SCOPES, type Scope } from '../../api/scopes.js';
import { readJsonRpcBody } from './json-body.js';
import { Parties, partyOver, type Kept, type Party, type ServeOwner } from './parties.js';
import { Sessions, type SessionBounds } from './sessions.js';
import type { ToolSpec } from '../tool-spec.js';
import type { McpContext } from '../context.js';

const MCP_PATH = '/mcp';
/** The read-only door: the same server with only the tools that change nothing (`workspace:read`), in every `--auth` mode. */
const READ_ONLY_PATH = '/mcp/read-only';

/** Where a request goes once who calls is known: a party's instances, for whom, within what reach. */
interface Target {
  party: Party;
  /** `--auth key`: the owner; undefined: `--auth token`'s one owner. */
  owner: number | undefined;
  /** `--auth key`: the party as kept for its owner. */
  rec?: Kept;
  reach: Reach;
}

export interface HttpOptions {
  host: string;
  port: number;
  /** Required as `Authorization: Bearer <token>` when set. */
  token?: string;
  /** The bounds of 2025-era sessions: how many open at once (overall, per owner) and how long one idles before it is closed. */
  sessions?: SessionBounds;
  /** `--allowed-hosts`: more names than the loopback ones and the bound address that requests may carry as their Host (auth/host.ts). */
  allowedHosts?: readonly string[];
  /** `--scopes`: what any request may reach (default: every scope). */
  scopes?: readonly Scope[];
  /** The package's version, for `/healthz`. */
  version?: string;
  /** The port taken already (`bindMcpHttp`), before the backend was opened; else it is taken here. */
  bound?: Bound;
}

export interface McpHttpServer {
  server: HttpServer;
  url: string;
  /** The probes' state; `drain.signal` is aborted when the drain begins. */
  drain: Drain;
  /** Refuse new requests, let those in hand and `work` finish (at most `timeoutMs`), then close; resolves with how many requests were cut. */
  drainAndClose(timeoutMs: number, work?: Promise<unknown>): Promise<number>;
  close(): Promise<void>;
}

function send(res: ServerResponse, a: HttpAnswer): void {
  res.writeHead(a.status, a.headers);
  res.end(a.body);
}

const deny = (res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}, code = -32000): void =>
  send(res, refusal(status, message, headers, code));

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

/** Whether a JSON-RPC body (one message or a batch) holds a request (a method and an id), not only answers and notifications. */
function carriesRequest(body: unknown): boolean {
  return (Array.isArray(body) ? body : [body]).some((m) => m !== null && typeof m === 'object' && 'method' in m && 'id' in m);
}

/**
 * `--auth key` and `--auth oauth`: who a request is (auth/callers.ts) and what serves each owner.
 * The key is checked on each request and lives only in its scope (`within`, when the backend
 * sends it on); owners are kept by id (with the hash of their key, when their context acts by it).
 */
export interface Callers extends CallerOptions {
  /** The context and tools of an owner (acting by the key with `keyHash`), made when first needed; `close` when no longer kept. */
  served: ServeOwner;
  /** Most owners kept at once (default 500), and how long an owner without a session is kept unused (default 15 min). */
  maxOwners?: number;
  idleMs?: number;
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

/**
 * The MCP server's port taken (`bindFirst`) before its backend is opened: the probes say
 * "starting" and every other request is refused with 503 and Retry-After, in the MCP server's
 * error shape, until the server's own handler is installed (`serveMcpHttp` with `bound`).
 */
export function bindMcpHttp(opts: Pick<HttpOptions, 'host' | 'port' | 'version'>): Promise<Bound> {
  const drain = new Drain(opts.version ?? '0.0.0', (message, headers) => refusal(503, message, headers));
  return bindFirst(opts.host, opts.port, drain, {}, (server) => {
    // A request (headers and body; not the answer, which may stream for long) must arrive within a minute: no slow drip holds a socket.
    server.requestTimeout = 60_000;
    server.headersTimeout = 30_000;
  });
}

async function listenOn(
  opts: HttpOptions,
  onerror: (e: Error) => void,
  mode: { kind: 'token'; party: Party } | { kind: 'key'; callers: Callers },
): Promise<McpHttpServer> {
  /** 2025-era sessions, each with the owner who opened it (`--auth key`; undefined: `--auth token`'s one owner). */
  const sessions = new Sessions<NodeStreamableHTTPServerTransport>(opts.sessions ?? {}, onerror);
  const signIn = mode.kind === 'key' ? mode.callers.signIn : undefined;
  const hosts = new HostCheck({ bound: opts.host, publicHost: signIn?.hostName, allowedHosts: opts.allowedHosts });
  const byKey =
    mode.kind === 'key'
      ? {
          check: new CallerCheck(mode.callers),
          parties: new Parties(mode.callers.served, sessions, onerror, mode.callers.maxOwners ?? 500, mode.callers.idleMs ?? 15 * 60_000),
        }
      : undefined;
  const cap = opts.scopes ?? SCOPES;
  const bound = opts.bound ?? (await bindMcpHttp(opts));
  const { server, drain } = bound;
  /** The reach each 2025-era session was opened with (its door, its grant's scopes): it answers within that reach alone. */
  const reachOfSession = new WeakMap<NodeStreamableHTTPServerTransport, string>();
  /** The reaches met so far (a handful: a door and a set of scopes each), made once. */
  const reaches = new Map<string, Reach>();
  const reachFor = (door: Door, granted?: readonly string[]): Reach => {
    const key = granted ? `${door}|${granted.join(' ')}` : door;
    let r = reaches.get(key);
    if (!r) reaches.set(key, (r = reachOf(door, cap, granted)));
    return r;
  };

  /**
   * 2025-era traffic, sessionful as before: the SDK's own stateless fallback could not send a
   * client anything outside a response (no GET stream, no elicitation/create mid-call). A
   * session answers only the owner who opened it: to anyone else it is not found.
   */
  async function legacy(req: IncomingMessage, res: ServerResponse, body: unknown, { party, owner, rec, reach }: Target): Promise<void> {
    const sid = req.headers['mcp-session-id'];
    const id = Array.isArray(sid) ? sid[0] : sid;
    if (id !== undefined) {
      const transport = sessions.get(id, owner);
      if (!transport || reachOfSession.get(transport) !== reach.key) return deny(res, 404, 'Session not found; initialize a new session');
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
    reachOfSession.set(transport, reach.key);
    // The server's own close handling is chained after this by connect().
    transport.onclose = () => {
      if (transport.sessionId) {
        sessions.delete(transport.sessionId);
        ownSessions?.delete(transport.sessionId);
      }
    };
    try {
      await party.reaching(reach).factory({ era: 'legacy' }, { pushListChanged: true }).connect(transport);
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
  async function route(req: IncomingMessage, res: ServerResponse, t: Target): Promise<void> {
    const gone = () => deny(res, 401, 'Unauthorized: the key was regenerated; send the new one', { 'WWW-Authenticate': 'Bearer' });
    // GET (a session's notification stream) and DELETE (its end) exist in the 2025 era only.
    if (req.method !== 'POST') return t.rec?.retired ? gone() : legacy(req, res, undefined, t);
    const parsed = await readJsonRpcBody(req);
    if (parsed.status !== undefined) return send(res, parsed);
    // Let in while draining as a session's follow-up (`handle`): only answers and notifications are taken then.
    if (drain.cameLate(res) && carriesRequest(parsed.body)) return drain.refuse(res);
    if (t.rec?.retired) return gone();
    if (await isLegacyRequest(classifiable(req), parsed.body)) return legacy(req, res, parsed.body, t);
    return t.party.reaching(t.reach).modernNode(req, res, parsed.body);
  }

  /**
   * `--auth key` and `--auth oauth`: the request's owner from its key (its bearer, or the key its
   * access token's grant holds), checked on every request, within the key's scope (when the
   * backend has one), which ends with the response.
   */
  async function asOwner(
    req: IncomingMessage & { auth?: AuthInfo },
    res: ServerResponse,
    check: CallerCheck,
    parties: Parties,
    door: Door,
  ): Promise<void> {
    const cred = await check.credential(req.headers.authorization, door === 'full' ? 'mcp' : 'mcp/read-only');
    if (!('key' in cred)) return send(res, cred);
    return check.within(cred.key, async (ended) => {
      if (ended) res.once('close', ended);
      const caller = await check.admit(cred);
      if (!('owner' in caller)) return send(res, caller);
      const rec = parties.of(caller.owner, res);
      if (!rec) return deny(res, 503, 'Too many people at once; try again later', { 'Retry-After': '60' });
      req.auth = caller.auth;
      const reach = reachFor(door, caller.auth.scopes);
      return route(req, res, { party: await rec.party, owner: caller.owner.id, rec, reach });
    });
  }

  async function handle(req: IncomingMessage & { auth?: AuthInfo }, res: ServerResponse): Promise<void> {
    // Before any work, on every address: a page whose name rebinds to this machine gets nothing.
    const badHost = hosts.host(req);
    if (badHost) return deny(res, 403, badHost);
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    // After the Host check, before any token: the probes; while draining, every other request refused.
    // A GET stream and a subscription are not waited for: the drain's close ends them.
    const stream = req.method === 'GET' || req.headers['mcp-method'] === 'subscriptions/listen';
    // A POST on a 2025-era session may answer a question a call in hand asked (elicitation/create), or cancel it: let in while draining.
    const followUp = req.method === 'POST' && req.headers['mcp-session-id'] !== undefined;
    if (drain.admit(res, path, stream && (path === MCP_PATH || path === READ_ONLY_PATH), followUp)) return;
    const door: Door | undefined = path === MCP_PATH ? 'full' : path === READ_ONLY_PATH ? 'read-only' : undefined;
    if (door === undefined) {
      // Sign-in's addresses are for other sites' pages and servers too: the Host is checked, not the Origin.
      if (signIn && (await signIn.serve(req, res, path))) return;
      return deny(res, 404, `Not found; the MCP endpoint is ${MCP_PATH} (${READ_ONLY_PATH}: its tools that change nothing)`);
    }
    const bad = hosts.hostAndOrigin(req);
    if (bad) return deny(res, 403, bad);
    if (byKey) return asOwner(req, res, byKey.check, byKey.parties, door);
    if (opts.token !== undefined) {
      if (!tokenMatches(req.headers.authorization, opts.token)) {
        return deny(res, 401, 'Unauthorized: send Authorization: Bearer <token>', { 'WWW-Authenticate': 'Bearer' });
      }
      // Who is calling, for the handlers (ctx.http.authInfo) in both eras: the token's holder.
      req.auth = { token: '', clientId: 'bearer', scopes: [] };
    }
    return route(req, res, { party: (mode as { party: Party }).party, owner: undefined, reach: reachFor(door) });
  }

  bound.serve((req, res) => {
    handle(req, res).catch((e: unknown) => {
      log.error({ err: e }, 'MCP HTTP request failed');
      if (!res.headersSent) deny(res, 500, 'Internal error');
      else res.end();
    });
  });
  const addr = server.address() as AddressInfo;
  const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const closing = {
    async close() {
      await sessions.close();
      if (mode.kind === 'token') await mode.party.close();
      await byKey?.parties.close();
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
    },
  };
  return {
    server,
    url: `http://${shownHost}:${addr.port}${MCP_PATH}`,
    drain,
    async drainAndClose(timeoutMs, work) {
      const cut = await drain.drain(server, timeoutMs, work);
      await closing.close();
      return cut;
    },
    close: closing.close,
  };
}
