/**
 * The one rule of what is a loopback host, for every part that asks: the Host and Origin check
 * of the MCP endpoint, whether `--http` may run without a token, `http://` public URLs and
 * redirect URIs, Client ID Metadata Documents on a loopback deployment.
 *
 * A host as it is written, never as a resolver or a URL parser would read it: `localhost`,
 * `::1` (`[::1]`), or an IPv4 address in 127.0.0.0/8 written as four decimal parts. A name that
 * only begins like one (`127.0.0.1.nip.io`, `127.evil.example`, `localhost.example`) may resolve
 * anywhere, and another way of writing 127.0.0.1 (`2130706433`, `0x7f000001`, `127.1`) is what a
 * DNS-rebinding page sends to slip past a check that normalises first: neither is loopback here.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** Whether `host` (a host name as a Host header, a URL or `--host` writes it, IPv6 with or without brackets) is a loopback host. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  if (h === 'localhost') return true;
  const bare = h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
  // `::1` as every client writes it; a longer spelling is not a name anyone serves under.
  if (isIPv6(bare)) return bare === '::1';
  // isIPv4 takes four decimal parts only (no 127.1, no hex, no leading zeros).
  return isIPv4(h) && h.startsWith('127.');
}
