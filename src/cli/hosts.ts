/**
 * The addresses a client connects to. A server bound to every interface (0.0.0.0, ::) is not
 * reached at that address: it is reached at 127.0.0.1 on this machine and at the machine's
 * own interface addresses from elsewhere.
 */
import { networkInterfaces } from 'node:os';
import { isWildcardHost } from '../mcp/auth/host.js';

/** The hosts (as a URL writes them) to reach a server bound to `host`: the loopback first. */
function reachableHosts(host: string): string[] {
  if (!isWildcardHost(host)) return [host.includes(':') && !host.startsWith('[') ? `[${host}]` : host];
  const v6 = host !== '0.0.0.0';
  const out = ['127.0.0.1'];
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) {
      if (a.internal) continue;
      if (a.family === 'IPv4') out.push(a.address);
      // A link-local IPv6 address needs its zone, which a URL cannot carry portably.
      else if (v6 && !a.address.toLowerCase().startsWith('fe80')) out.push(`[${a.address}]`);
    }
  }
  return [...new Set(out)];
}

/** `url` (as the server made it from its bound address) at each reachable host. */
export function reachableUrls(url: string, host: string): string[] {
  const u = new URL(url);
  return reachableHosts(host).map((h) => {
    u.hostname = h;
    return u.toString();
  });
}

/** Where a server bound to `host` listens, for a banner: its URL, or for 0.0.0.0 and :: every interface with the URLs that reach it. */
export function listeningOn(url: string, host: string): string {
  return isWildcardHost(host) ? `every interface, at ${reachableUrls(url, host).join(', ')}` : url;
}
