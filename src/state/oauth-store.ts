/** OAuth sign-in's store in the MCP server's SQLite state file (migrations 3 and 5 of `schema.ts`). */
import type { CodeRow, GrantRow, TokenRow } from '../oauth/store.js';
import type { OAuthStoreSync } from './async.js';
import { GRANT_COLUMNS, KEEP_REVOKED_MS, KEEP_SPENT_MS } from '../oauth/store.js';
import type { Db } from '../store/db.js';

export function sqliteOAuthStore(db: Db): OAuthStoreSync {
  const s = {
    addClient: db.prepare<[string, string, string]>('INSERT INTO oauth_clients (client_id, metadata, created_at) VALUES (?, ?, ?)'),
    client: db.prepare<[string], { metadata: string }>('SELECT metadata FROM oauth_clients WHERE client_id = ?'),
    clientsSince: db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM oauth_clients WHERE created_at >= ?'),
    addGrant: db.prepare(`INSERT INTO oauth_grants (${GRANT_COLUMNS.join(', ')}) VALUES (${GRANT_COLUMNS.map((c) => `@${c}`).join(', ')})`),
    grant: db.prepare<[string], GrantRow>('SELECT * FROM oauth_grants WHERE id = ?'),
    grants: db.prepare<[], GrantRow>('SELECT * FROM oauth_grants ORDER BY created_at DESC, id'),
    revoke: db.prepare<[string, string, string]>(
      "UPDATE oauth_grants SET revoked_at = ?, revoked_why = ?, sealed_key = '' WHERE id = ? AND revoked_at IS NULL",
    ),
    touch: db.prepare<[string, string]>('UPDATE oauth_grants SET last_used_at = ? WHERE id = ?'),
    addCode: db.prepare(
      `INSERT INTO oauth_codes (code_hash, grant_id, client_id, redirect_uri, challenge, resource, expires_ms, used)
       VALUES (@code_hash, @grant_id, @client_id, @redirect_uri, @challenge, @resource, @expires_ms, @used)`,
    ),
    code: db.prepare<[string], CodeRow>('SELECT * FROM oauth_codes WHERE code_hash = ?'),
    useCode: db.prepare<[string]>('UPDATE oauth_codes SET used = 1 WHERE code_hash = ?'),
    addToken: db.prepare(
      `INSERT INTO oauth_tokens (token_hash, grant_id, kind, expires_ms, used, scope)
       VALUES (@token_hash, @grant_id, @kind, @expires_ms, @used, @scope)`,
    ),
    token: db.prepare<[string], TokenRow>('SELECT * FROM oauth_tokens WHERE token_hash = ?'),
    useRefresh: db.prepare<[string]>("UPDATE oauth_tokens SET used = 1 WHERE token_hash = ? AND kind = 'refresh' AND used = 0"),
    sweepCodes: db.prepare<[number]>('DELETE FROM oauth_codes WHERE expires_ms < ?'),
    sweepTokens: db.prepare<[number]>('DELETE FROM oauth_tokens WHERE expires_ms < ?'),
    sweepGrants: db.prepare<[string, string]>(
      `DELETE FROM oauth_grants WHERE created_at < ? AND (revoked_at IS NULL OR revoked_at < ?)
         AND NOT EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.grant_id = oauth_grants.id)
         AND NOT EXISTS (SELECT 1 FROM oauth_codes c WHERE c.grant_id = oauth_grants.id)`,
    ),
    sweepClients: db.prepare<[string]>(
      'DELETE FROM oauth_clients WHERE created_at < ? AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = oauth_clients.client_id)',
    ),
  };
  // Read and mark in one IMMEDIATE transaction: of two exchanges of a code, one sees it unused.
  const useCode = db.transaction((hash: string): CodeRow | undefined => {
    const row = s.code.get(hash);
    if (row) s.useCode.run(hash);
    return row;
  });
  return {
    addClient: (id, metadata, at) => void s.addClient.run(id, metadata, at),
    client: (id) => s.client.get(id)?.metadata,
    clientsSince: (since) => s.clientsSince.get(since)!.n,
    addGrant: (g) => void s.addGrant.run(g),
    grant: (id) => s.grant.get(id),
    grants: () => s.grants.all(),
    revokeGrant: (id, why, at) => s.revoke.run(at, why, id).changes === 1,
    touchGrant: async (id, at) => void s.touch.run(at, id),
    addCode: (c) => void s.addCode.run(c),
    code: (hash) => s.code.get(hash),
    useCode: (hash) => useCode.immediate(hash),
    addToken: (t) => void s.addToken.run(t),
    token: (hash) => s.token.get(hash),
    async access(hash) {
      const token = s.token.get(hash);
      return token && { token, grant: s.grant.get(token.grant_id) };
    },
    useRefresh: (hash) => s.useRefresh.run(hash).changes === 1,
    sweep(now) {
      s.sweepCodes.run(now - KEEP_SPENT_MS);
      s.sweepTokens.run(now - KEEP_SPENT_MS);
      const dayAgo = new Date(now - KEEP_SPENT_MS).toISOString();
      s.sweepGrants.run(dayAgo, new Date(now - KEEP_REVOKED_MS).toISOString());
      s.sweepClients.run(dayAgo);
    },
  };
}
