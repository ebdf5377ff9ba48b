/**
 * What OAuth sign-in keeps, and the store that keeps it: registered clients, grants (a person's
 * sealed API key, the client it was granted to), authorization codes and tokens, these two only
 * as hashes. Implemented over the MCP server's state, its SQLite file or the PostgreSQL database
 * (`state/oauth-store.ts`, `state/pg/oauth-store.ts`), so instances on one database share grants.
 */

/** A grant: one person's consent to one client, holding their API key sealed. */
export interface GrantRow {
  id: string;
  owner_id: number;
  client_id: string;
  /** The client's own name (its registration's or metadata document's `client_name`), for lists and the audit trail. */
  client_name: string;
  /** The resource (RFC 8707) the grant's tokens are for: the MCP endpoint, or its read-only door. */
  resource: string;
  /** What the person granted, space-separated (`workspace`: all four, as every grant made before scopes holds). */
  scope: string;
  sealed_key: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  revoked_why: string | null;
}

/** An authorization code, by its hash: bound to its grant, client, redirect URI, PKCE challenge and resource. */
export interface CodeRow {
  code_hash: string;
  grant_id: string;
  client_id: string;
  redirect_uri: string;
  challenge: string;
  resource: string;
  expires_ms: number;
  /** 1 once exchanged (a second exchange is a replay, and revokes the grant). */
  used: number;
}

/** An access or refresh token, by its hash. */
export interface TokenRow {
  token_hash: string;
  grant_id: string;
  kind: 'access' | 'refresh';
  expires_ms: number;
  /** Refresh tokens: 1 once rotated (a second use is a replay, and revokes the grant). */
  used: number;
  /** An access token's own scope, when the refresh that made it asked for less than its grant holds; null: the grant's. */
  scope: string | null;
}

export interface OAuthStore {
  /** A client registered through RFC 7591: its metadata as JSON. */
  addClient(clientId: string, metadata: string, at: string): Promise<void>;
  client(clientId: string): Promise<string | undefined>;
  /** Clients registered since `sinceIso` (registration is bounded per hour). */
  clientsSince(sinceIso: string): Promise<number>;
  addGrant(g: GrantRow): Promise<void>;
  grant(id: string): Promise<GrantRow | undefined>;
  /** Every grant, newest first (`admin grants`). */
  grants(): Promise<GrantRow[]>;
  /** Marks a grant revoked (its tokens stop working) and drops its sealed key; false when none is there or it was already. */
  revokeGrant(id: string, why: string, at: string): Promise<boolean>;
  /** Notes a grant's use; on the request path, so it never holds the serving thread (PostgreSQL: an async pool). */
  touchGrant(id: string, at: string): Promise<void>;
  addCode(c: CodeRow): Promise<void>;
  /** A code's row, changing nothing. */
  code(codeHash: string): Promise<CodeRow | undefined>;
  /** Marks the code used, atomically; its row as it was before (`used` 1: it had been), or undefined. */
  useCode(codeHash: string): Promise<CodeRow | undefined>;
  addToken(t: TokenRow): Promise<void>;
  token(tokenHash: string): Promise<TokenRow | undefined>;
  /**
   * The request path's read (every request to the MCP endpoint): a token by its hash with the
   * grant it names (`grant` undefined when that is gone), never holding the serving thread
   * (PostgreSQL: one statement on an async pool; SQLite: its prepared statements, at once).
   */
  access(tokenHash: string): Promise<{ token: TokenRow; grant: GrantRow | undefined } | undefined>;
  /** Marks a refresh token used, atomically: true when this call did. */
  useRefresh(tokenHash: string): Promise<boolean>;
  /**
   * Drops codes and tokens past their time (kept a day longer, so a late replay is still told
   * apart); grants left with neither (abandoned sign-ins, lapsed refresh tokens; a revoked one
   * after 30 days); registrations older than a day that no grant names.
   */
  sweep(nowMs: number): Promise<void>;
}

/** The columns of a grant, in order (the two stores write and read them alike). */
export const GRANT_COLUMNS = [
  'id',
  'owner_id',
  'client_id',
  'client_name',
  'resource',
  'scope',
  'sealed_key',
  'created_at',
  'last_used_at',
  'revoked_at',
  'revoked_why',
] as const;

/** How long a used or expired code or token row is kept before it is swept: a day. */
export const KEEP_SPENT_MS = 24 * 60 * 60 * 1000;
/** How long a revoked grant stays listed (`admin grants`) once it holds nothing: 30 days. */
export const KEEP_REVOKED_MS = 30 * KEEP_SPENT_MS;
