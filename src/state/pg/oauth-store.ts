/** OAuth sign-in's store in the PostgreSQL database (state migrations 3 and 5), shared by every instance on it. */
import type { CodeRow, GrantRow, TokenRow } from '../../oauth/store.js';
import type { OAuthStoreSync } from '../async.js';
import { GRANT_COLUMNS, KEEP_REVOKED_MS, KEEP_SPENT_MS } from '../../oauth/store.js';
import { asyncReadsOf } from '../../store/pg/async-reads.js';
import type { PgConnection } from '../../store/pg/connection.js';

/**
 * Over the store's connection `c`; the request path's reads (`access`, `touchGrant`) on the
 * async pool of the same database (store/pg/async-reads.ts), so that a request never holds the
 * serving thread while the database answers. Nothing is cached: a grant revoked through any
 * instance is refused by every instance at its next request.
 */
export function pgOAuthStore(c: PgConnection): OAuthStoreSync {
  // Made when first asked: a service thread, which runs the rest, never opens the async pool.
  const reads = () => asyncReadsOf(c);
  return {
    addClient(id, metadata, at) {
      c.query('INSERT INTO mcp_oauth_clients (client_id, metadata, created_at) VALUES ($1, $2, $3)', [id, metadata, at]);
    },
    client: (id) => c.one<{ metadata: string }>('SELECT metadata FROM mcp_oauth_clients WHERE client_id = $1', [id])?.metadata,
    clientsSince: (since) => c.one<{ n: number }>('SELECT count(*)::bigint AS n FROM mcp_oauth_clients WHERE created_at >= $1', [since])!.n,
    addGrant(g) {
      c.query(
        `INSERT INTO mcp_oauth_grants (${GRANT_COLUMNS.join(', ')}) VALUES (${GRANT_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`,
        GRANT_COLUMNS.map((k) => g[k]),
      );
    },
    grant: (id) => c.one<GrantRow>('SELECT * FROM mcp_oauth_grants WHERE id = $1', [id]),
    grants: () => c.query<GrantRow>('SELECT * FROM mcp_oauth_grants ORDER BY created_at DESC, id').rows,
    revokeGrant: (id, why, at) =>
      c.query("UPDATE mcp_oauth_grants SET revoked_at = $1, revoked_why = $2, sealed_key = '' WHERE id = $3 AND revoked_at IS NULL", [
        at,
        why,
        id,
      ]).rowCount === 1,
    touchGrant: (id, at) => reads().run('UPDATE mcp_oauth_grants SET last_used_at = $1 WHERE id = $2', [at, id]),
    addCode(r) {
      c.query(
        `INSERT INTO mcp_oauth_codes (code_hash, grant_id, client_id, redirect_uri, challenge, resource, expires_ms, used)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [r.code_hash, r.grant_id, r.client_id, r.redirect_uri, r.challenge, r.resource, r.expires_ms, r.used],
      );
    },
    code: (hash) =>
      c.one<CodeRow>(
        `SELECT code_hash, grant_id, client_id, redirect_uri, challenge, resource, expires_ms, used::int AS used
         FROM mcp_oauth_codes WHERE code_hash = $1`,
        [hash],
      ),
    // One statement: of two exchanges of a code, one reads it unused (the row lock orders them).
    useCode: (hash) =>
      c.one<CodeRow>(
        `UPDATE mcp_oauth_codes n SET used = 1 FROM (SELECT * FROM mcp_oauth_codes WHERE code_hash = $1 FOR UPDATE) o
         WHERE n.code_hash = o.code_hash
         RETURNING o.code_hash, o.grant_id, o.client_id, o.redirect_uri, o.challenge, o.resource, o.expires_ms, o.used::int AS used`,
        [hash],
      ),
    addToken(t) {
      c.query('INSERT INTO mcp_oauth_tokens (token_hash, grant_id, kind, expires_ms, used, scope) VALUES ($1, $2, $3, $4, $5, $6)', [
        t.token_hash,
        t.grant_id,
        t.kind,
        t.expires_ms,
        t.used,
        t.scope,
      ]);
    },
    token: (hash) =>
      c.one<TokenRow>(
        'SELECT token_hash, grant_id, kind, expires_ms, used::int AS used, scope FROM mcp_oauth_tokens WHERE token_hash = $1',
        [hash],
      ),
    // One round trip: the token and its grant as JSON (bigint columns are numbers there, as ours stay below 2^53).
    async access(hash) {
      const row = await reads().one<{ t: TokenRow; g: GrantRow | null }>(
        `SELECT to_jsonb(t) AS t, to_jsonb(g) AS g FROM mcp_oauth_tokens t LEFT JOIN mcp_oauth_grants g ON g.id = t.grant_id
         WHERE t.token_hash = $1`,
        [hash],
      );
      return row && { token: row.t, grant: row.g ?? undefined };
    },
    useRefresh: (hash) =>
      c.query("UPDATE mcp_oauth_tokens SET used = 1 WHERE token_hash = $1 AND kind = 'refresh' AND used = 0", [hash]).rowCount === 1,
    sweep(now) {
      c.query('DELETE FROM mcp_oauth_codes WHERE expires_ms < $1', [now - KEEP_SPENT_MS]);
      c.query('DELETE FROM mcp_oauth_tokens WHERE expires_ms < $1', [now - KEEP_SPENT_MS]);
      const dayAgo = new Date(now - KEEP_SPENT_MS).toISOString();
      c.query(
        `DELETE FROM mcp_oauth_grants g WHERE created_at < $1 AND (revoked_at IS NULL OR revoked_at < $2)
           AND NOT EXISTS (SELECT 1 FROM mcp_oauth_tokens t WHERE t.grant_id = g.id)
           AND NOT EXISTS (SELECT 1 FROM mcp_oauth_codes c WHERE c.grant_id = g.id)`,
        [dayAgo, new Date(now - KEEP_REVOKED_MS).toISOString()],
      );
      c.query(
        'DELETE FROM mcp_oauth_clients o WHERE created_at < $1 AND NOT EXISTS (SELECT 1 FROM mcp_oauth_grants g WHERE g.client_id = o.client_id)',
        [dayAgo],
      );
    },
  };
}
