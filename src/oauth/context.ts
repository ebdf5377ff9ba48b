/**
 * What the endpoints of `--auth oauth` share: the options the command gives (the public URL, the
 * store, the sealer, the key check), the issuer and the resources made of them (the MCP endpoint
 * and its read-only door), the clock and the scopes a grant may hold here.
 */
import { capOf, READ, type Scope } from './scopes.js';
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
  /** What any grant here may hold at most (`--scopes`; `workspace:read` always); default all four. */
  scopes?: readonly string[];
}

/** The protected resources, as paths of the public URL: the MCP endpoint and its read-only door. */
export type ResourcePath = 'mcp' | 'mcp/read-only';

/** The options, and what every endpoint derives from them. */
export interface Context {
  readonly o: OAuthOptions;
  /** The public URL's origin. */
  readonly issuer: string;
  /** The MCP endpoint: the resource a token is for unless it is the read-only door's. */
  readonly resource: string;
  /** The read-only door (`<public url>/mcp/read-only`): a resource whose grants hold `workspace:read` alone. */
  readonly door: string;
  /** The scopes a grant may hold here (the `scopes` option), in their order. */
  readonly cap: readonly Scope[];
  now(): number;
}

/** The context of a server over `o`. */
export function contextOf(o: OAuthOptions): Context {
  const issuer = o.publicUrl.origin;
  return { o, issuer, resource: `${issuer}/mcp`, door: `${issuer}/mcp/read-only`, cap: capOf(o.scopes), now: o.now ?? Date.now };
}

/** The scopes a grant for `resource` may hold: the cap; at the read-only door, read alone. */
export function offeredAt(ctx: Context, resource: string): readonly Scope[] {
  return resource === ctx.door ? [READ] : ctx.cap;
}
