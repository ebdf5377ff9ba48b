/**
 * Who a `client_id` names: a client registered here (RFC 7591), or the URL of its Client ID
 * Metadata Document, fetched, checked and cached. The fetch cannot be turned on the server's own
 * network: only `https` (or `http` on a loopback host, when the deployment itself is on one),
 * every address the name resolves to is checked, and the connection goes to a checked address
 * (no second lookup to rebind), without redirects, within a time and a size.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { OAuthClientMetadataSchema } from '@modelcontextprotocol/core';
import type { OAuthClientMetadata } from '@modelcontextprotocol/server';
import ipaddr from 'ipaddr.js';
import { Agent, request } from 'undici';
import { log } from '../common/log.js';
import { isLoopbackHost } from '../common/loopback.js';

/** A client as sign-in knows it: its id, its name, where it may be sent back to. */
export interface Client {
  client_id: string;
  client_name: string;
  redirect_uris: string[];
  /** A metadata document's host (the name is the document's word, the host is where it was fetched); none: registered here, the name unverified. */
  documentHost?: string;
}

export class ClientError extends Error {}

/** A metadata document's largest size; the drafts' own examples are well under 2 KiB. */
const MAX_DOC_BYTES = 16 * 1024;
const FETCH_TIMEOUT_MS = 5000;
/** How long a fetched document is kept: its Cache-Control max-age, within these bounds. */
const MIN_CACHE_MS = 5 * 60_000;
const MAX_CACHE_MS = 24 * 60 * 60_000;
const DEFAULT_CACHE_MS = 60 * 60_000;
const MAX_CACHED = 500;

/** Documents fetched at once (each up to 5 s): a bound, so sign-in pages cannot be used to probe the network in bulk. */
const MAX_FETCHES_AT_ONCE = 8;
/** A failed fetch is not tried again for this long. */
const FAILED_CACHE_MS = 5 * 60_000;

/**
 * The address ranges a metadata document may be fetched from: ipaddr.js's unicast, what no
 * special range of its names (private, shared, link-local, cloud metadata among them, multicast,
 * reserved, documentation, 6to4, Teredo, NAT64); an IPv4-mapped address is judged as its IPv4.
 */
const FETCHABLE = 'unicast';
/** IPv4-compatible IPv6 addresses (`::10.0.0.1`, deprecated by RFC 4291): ipaddr.js names no range of them. */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

/** Why an address may not be fetched from; undefined when it may. */
function refusedAddress(address: string, loopbackAllowed: boolean): string | undefined {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.process(address);
  } catch {
    return 'a private or reserved address';
  }
  const range = ip.range();
  if (range === 'loopback') return loopbackAllowed ? undefined : 'a loopback address';
  if (range !== FETCHABLE || (ip.kind() === 'ipv6' && ip.match(IPV4_COMPATIBLE))) return 'a private or reserved address';
  return undefined;
}

/** Whether a client_id names a metadata document (an https URL with a path; http on loopback when allowed). */
function isDocumentId(clientId: string, loopbackAllowed: boolean): boolean {
  if (!/^https?:\/\//i.test(clientId)) return false;
  let u: URL;
  try {
    u = new URL(clientId);
  } catch {
    return false;
  }
  if (u.protocol === 'http:' && !(loopbackAllowed && isLoopbackHost(u.hostname))) return false;
  return u.pathname !== '/' && !u.hash && !u.username && !u.password && u.href === clientId;
}

/** A redirect URI a client may register: absolute, no fragment; http only on a loopback host; no script-like scheme. */
function redirectRefused(uri: string): string | undefined {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return `${uri} is not an absolute URL`;
  }
  if (u.hash) return `${uri} has a fragment`;
  if (['javascript:', 'data:', 'vbscript:', 'file:', 'blob:', 'about:'].includes(u.protocol)) return `${uri} has a refused scheme`;
  if (u.protocol === 'http:' && !isLoopbackHost(u.hostname)) return `${uri}: http is for loopback hosts only; use https`;
  return undefined;
}

/**
 * Whether `given` is one of a client's redirect URIs: exactly, or (RFC 8252 §7.3) a loopback
 * http URI that differs only in its port, since a native app takes whatever port is free.
 */
export function redirectAllowed(client: Client, given: string): boolean {
  if (client.redirect_uris.includes(given)) return true;
  let g: URL;
  try {
    g = new URL(given);
  } catch {
    return false;
  }
  if (g.protocol !== 'http:' || !isLoopbackHost(g.hostname)) return false;
  return client.redirect_uris.some((r) => {
    try {
      const u = new URL(r);
      return u.protocol === 'http:' && u.hostname === g.hostname && u.pathname === g.pathname && u.search === g.search;
    } catch {
      return false;
    }
  });
}

/** Metadata a client gives (registration or document), checked for what sign-in here supports: public clients, the code flow. */
export function checkedMetadata(raw: unknown): OAuthClientMetadata {
  const parsed = OAuthClientMetadataSchema.safeParse(raw);
  if (!parsed.success)
    throw new ClientError(`invalid client metadata: ${parsed.error.issues[0]?.path.join('.')} ${parsed.error.issues[0]?.message}`);
  const m = parsed.data;
  if (m.redirect_uris.length === 0) throw new ClientError('redirect_uris must name at least one URI');
  if (m.redirect_uris.length > 20) throw new ClientError('redirect_uris: at most 20');
  for (const uri of m.redirect_uris) {
    const why = redirectRefused(uri);
    if (why) throw new ClientError(`redirect_uris: ${why}`);
  }
  // A client asking for a secret (claude.ai asks for client_secret_post) is registered as public
  // all the same, and the answer says none (RFC 7591 §3.2.1): PKCE is what binds its code.
  const method = m.token_endpoint_auth_method ?? 'none';
  if (!['none', 'client_secret_post', 'client_secret_basic'].includes(method))
    throw new ClientError(`token_endpoint_auth_method ${method} is not supported: clients here are public (none), with PKCE`);
  const grants = m.grant_types ?? ['authorization_code'];
  const bad = grants.find((g) => g !== 'authorization_code' && g !== 'refresh_token');
  if (bad) throw new ClientError(`grant_types: ${bad} is not supported (authorization_code, refresh_token)`);
  if ((m.response_types ?? ['code']).some((t) => t !== 'code')) throw new ClientError('response_types: only code is supported');
  if ((m.client_name?.length ?? 0) > 200) throw new ClientError('client_name: at most 200 characters');
  return m;
}

/** A lookup that answers only addresses `refusedAddress` lets through, so the socket goes where the check looked. */
function guardedLookup(loopbackAllowed: boolean) {
  return (
    hostname: string,
    options: object,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses;
      const refused = list.map((a) => refusedAddress(a.address, loopbackAllowed)).find(Boolean);
      if (refused || list.length === 0) {
        const e: NodeJS.ErrnoException = new Error(`${hostname} resolves to ${refused ?? 'nothing'}`);
        e.code = 'EREFUSEDADDRESS';
        return callback(e, []);
      }
      if ((options as { all?: boolean }).all) return callback(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/** Fetches and keeps Client ID Metadata Documents. */
export class ClientDocuments {
  private readonly cache = new Map<string, { client: Client; until: number } | { failed: string; until: number }>();
  private fetching = 0;
  private readonly agent: Agent;

  constructor(private readonly loopbackAllowed: boolean) {
    this.agent = new Agent({
      connect: { lookup: guardedLookup(loopbackAllowed), timeout: FETCH_TIMEOUT_MS },
      headersTimeout: FETCH_TIMEOUT_MS,
      bodyTimeout: FETCH_TIMEOUT_MS,
    });
  }

  isDocumentId(clientId: string): boolean {
    return isDocumentId(clientId, this.loopbackAllowed);
  }

  /** The client a document URL names; throws ClientError saying why not. */
  async client(url: string, now = Date.now()): Promise<Client> {
    const kept = this.cache.get(url);
    if (kept && kept.until > now) {
      if ('failed' in kept) throw new ClientError(kept.failed);
      return kept.client;
    }
    if (this.fetching >= MAX_FETCHES_AT_ONCE)
      throw new ClientError("the application's metadata document cannot be fetched just now; try again in a minute");
    this.fetching++;
    try {
      return await this.fetched(url, now);
    } catch (e) {
      // Said in general terms (no network detail to an outsider), logged in full, and kept a while.
      const said = e instanceof ClientError ? e.message : "the application's metadata document could not be fetched";
      log.info({ client_id: url, err: e }, 'OAuth: a client metadata document was refused');
      this.keep(url, { failed: said, until: now + FAILED_CACHE_MS });
      throw new ClientError(said);
    } finally {
      this.fetching--;
    }
  }

  private keep(url: string, entry: { client: Client; until: number } | { failed: string; until: number }): void {
    this.cache.delete(url);
    if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(url, entry);
  }

  private async fetched(url: string, now: number): Promise<Client> {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) {
      const why = refusedAddress(host, this.loopbackAllowed);
      if (why) throw new ClientError(`the client's metadata document is at ${why}`);
    }
    let res;
    try {
      res = await request(url, {
        dispatcher: this.agent,
        method: 'GET',
        headers: { accept: 'application/json' },
        maxRedirections: 0,
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      } as Parameters<typeof request>[1]);
    } catch (e) {
      log.info({ client_id: url, err: e }, 'OAuth: fetching a client metadata document failed');
      throw new ClientError("the application's metadata document could not be fetched");
    }
    if (res.statusCode !== 200) {
      await res.body.dump();
      throw new ClientError(`the client's metadata document answered ${res.statusCode}`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > MAX_DOC_BYTES) {
        res.body.destroy();
        throw new ClientError(`the client's metadata document is over ${MAX_DOC_BYTES} bytes`);
      }
      chunks.push(chunk as Buffer);
    }
    let doc: unknown;
    try {
      doc = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      throw new ClientError("the client's metadata document is not JSON");
    }
    if (!doc || typeof doc !== 'object' || (doc as { client_id?: unknown }).client_id !== url)
      throw new ClientError("the client's metadata document does not name its own URL as client_id");
    const m = checkedMetadata(doc);
    const shown = new URL(url).host;
    const client: Client = { client_id: url, client_name: m.client_name ?? shown, redirect_uris: m.redirect_uris, documentHost: shown };
    this.keep(url, { client, until: now + cacheMs(res.headers['cache-control']) });
    return client;
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** How long to keep a document, from its Cache-Control: max-age within the bounds; no-store, the least. */
function cacheMs(header: string | string[] | undefined): number {
  const value = Array.isArray(header) ? header.join(',') : (header ?? '');
  if (/no-store|no-cache/i.test(value)) return MIN_CACHE_MS;
  const m = /max-age=(\d+)/i.exec(value);
  if (!m) return DEFAULT_CACHE_MS;
  return Math.min(MAX_CACHE_MS, Math.max(MIN_CACHE_MS, Number(m[1]) * 1000));
}
