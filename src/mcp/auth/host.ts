/**
 * The Host and Origin check of every request to the MCP server over HTTP (DNS rebinding): in
 * every `--auth` mode, both protocol eras, `/mcp` and sign-in's addresses alike, before any work.
 *
 * A request's Host (and Origin, when a browser sends one) must name this server exactly, as
 * written: a loopback name (`127.0.0.1`, `localhost`, `[::1]`), the address it was bound to, the
 * public URL's host, or a name of `--allowed-hosts`. Bound to every interface (`0.0.0.0`, `::`),
 * where a token or sign-in is always required, any Host is served unless `--allowed-hosts` lists
 * the names. Names are compared as written, never resolved nor normalised by a URL parser (which
 * reads `2130706433` and `0x7f000001` as 127.0.0.1): `127.0.0.1.nip.io`, `localhost.example`,
 * `[::1].example` and every other spelling are refused.
 */
import type { IncomingMessage } from 'node:http';

/**
 * The names every server answers to: its own machine's, as clients write them (another address
 * of 127/8, loopback by src/common/loopback.ts, is served only when bound to it).
 */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'] as const;

/** Where the server listens and what else it is reached as. */
export interface HostOptions {
  /** The address it was bound to (`--host`). */
  bound: string;
  /** The public URL's host name (`--auth oauth`): requests through the TLS proxy carry it. */
  publicHost?: string;
  /** `--allowed-hosts`: more names it is reached by (a proxy's, a balancer's). */
  allowedHosts?: readonly string[];
}

/** Whether `host` (as `--host` gives it) is every interface. */
export const isWildcardHost = (host: string): boolean => WILDCARDS.has(host);
const WILDCARDS = new Set(['0.0.0.0', '::', '[::]', '::0', '']);

/** The host name of a Host header as written (`[::1]:8765` → `[::1]`, `Example.com:80` → `example.com`), or undefined when it is not one. */
function hostNameOf(header: string): string | undefined {
  const m = /^(\[[0-9a-f:.]+\]|[^\s:[\]/@?#]+)(?::\d{1,5})?$/i.exec(header);
  return m?.[1]!.toLowerCase();
}

/** The host name of an Origin header as written (`http://localhost:6274` → `localhost`), or undefined for `null` and anything not an origin. */
function originNameOf(origin: string): string | undefined {
  const m = /^[a-z][a-z0-9+.-]*:\/\/(\[[0-9a-f:.]+\]|[^\s:[\]/@?#]+)(?::\d{1,5})?$/i.exec(origin);
  return m?.[1]!.toLowerCase();
}

/** The one allowlist of the names this server answers to. */
export class HostCheck {
  /** undefined: any name (bound to every interface, no --allowed-hosts). */
  private readonly names: ReadonlySet<string> | undefined;

  constructor(o: HostOptions) {
    const bound = o.bound.toLowerCase();
    const listed = (o.allowedHosts ?? []).map((h) => h.toLowerCase());
    const wildcard = isWildcardHost(bound);
    this.names =
      wildcard && listed.length === 0
        ? undefined
        : new Set([
            ...LOOPBACK_NAMES,
            ...(wildcard ? [] : [bound.includes(':') && !bound.startsWith('[') ? `[${bound}]` : bound]),
            ...(o.publicHost ? [o.publicHost.toLowerCase()] : []),
            ...listed,
          ]);
  }

  /**
   * Why the request's Host is refused, or undefined when it names this server. One Host header
   * and a target that is a path: a second Host, or an absolute-form target naming another
   * authority, is what a proxy in front may read instead of the Host checked here.
   */
  host(req: Pick<IncomingMessage, 'headers' | 'rawHeaders' | 'url'>): string | undefined {
    const header = req.headers.host;
    if (!header) return 'Missing Host header';
    let hosts = 0;
    for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === 'host') hosts++;
    if (hosts > 1) return 'More than one Host header';
    if (req.url !== undefined && !req.url.startsWith('/')) return 'The request target must be a path (origin-form)';
    const name = hostNameOf(header);
    if (name === undefined || (this.names && !this.names.has(name))) return `Host not allowed: ${header}`;
    return undefined;
  }

  /**
   * Why the request's Host or Origin is refused, or undefined. A page may call only from a name
   * this server answers to; bound to every interface with no list, from a loopback name or the
   * Host it called.
   */
  hostAndOrigin(req: Pick<IncomingMessage, 'headers' | 'rawHeaders' | 'url'>): string | undefined {
    const bad = this.host(req);
    if (bad) return bad;
    const origin = req.headers.origin;
    if (origin === undefined) return undefined;
    const name = originNameOf(origin);
    const allowed =
      name !== undefined &&
      (this.names ? this.names.has(name) : (LOOPBACK_NAMES as readonly string[]).includes(name) || name === hostNameOf(req.headers.host!));
    return allowed ? undefined : `Origin not allowed: ${origin}`;
  }
}
