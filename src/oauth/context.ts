/**
 * What the endpoints of `--auth oauth` share: the options the command gives (the public URL, the
 * store, the sealer, the key check), the issuer and the resource made of them, the clock and the
 * one scope.
 */
import type { Sealer } from './secrets.js';
import type { OAuthStore } from './store.js';

/** What a key check answers: its owner, or the backend's refusal. */
export type KeyCheck = { id: number } | { status: number; message: string };

export interface OAuthOptions {
  /** Where people reach the server: an origin (`https://mcp.example.com`), no path. */
  publicUrl: URL;
  store: OAuthStore;
  sealer: Sealer;
  /** Checks a Workspace API key with getMe against the backend. */
  checkKey(key: string): Promise<KeyCheck>;
  now?: () => number;
  accessTtlMs?: number;
  refreshTtlMs?: number;
}

/** The one scope: everything the person's key may do. */
export const SCOPE = 'workspace';

/** The options, and what every endpoint derives from them. */
export interface Context {
  readonly o: OAuthOptions;
  /** The public URL's origin. */
  readonly issuer: string;
  /** The MCP endpoint: the resource every token is for. */
  readonly resource: string;
  now(): number;
}

/** The context of a server over `o`. */
export function contextOf(o: OAuthOptions): Context {
  const issuer = o.publicUrl.origin;
  return { o, issuer, resource: `${issuer}/mcp`, now: o.now ?? Date.now };
}
