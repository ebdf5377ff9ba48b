/**
 * The request path's read of OAuth sign-in (`OAuthStore.access`, `touchGrant`) on both stores:
 * the token by its hash with the grant it names, alike on SQLite (its prepared statements) and
 * PostgreSQL (one statement on the async pool), numbers as numbers; a revocation or a grant's
 * use seen by the next read.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { GrantRow, TokenRow } from '../../src/oauth/store.js';
import type { OAuthStoreSync } from '../../src/state/async.js';
import { McpStateStore } from '../../src/state/mcp-state.js';
import { PgMcpState } from '../../src/state/pg/mcp-state.js';
import { closeAsyncReads } from '../../src/store/pg/async-reads.js';
import { PgStore } from '../../src/store/pg/index.js';
import { usePostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

const pg = usePostgres();
const closing: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of closing.reverse()) await c();
});

const GRANT: GrantRow = {
  id: 'g-1',
  owner_id: 7,
  client_id: 'client-1',
  client_name: 'Test app',
  resource: 'https://mcp.example.com/mcp',
  scope: 'workspace:read',
  sealed_key: 'sealed',
  created_at: '2026-11-29T10:00:00.000Z',
  last_used_at: null,
  revoked_at: null,
  revoked_why: null,
};
const ACCESS: TokenRow = { token_hash: 'h-access', grant_id: 'g-1', kind: 'access', expires_ms: 1_795_000_000_000, used: 0, scope: null };
const ORPHAN: TokenRow = { ...ACCESS, token_hash: 'h-orphan', grant_id: 'g-gone', scope: 'workspace:read' };

const stores: Array<[string, () => Promise<OAuthStoreSync>]> = [
  [
    'SQLite',
    async () => {
      const state = McpStateStore.open(join(tempDir(), 'mcp-state.sqlite'));
      closing.push(() => state.close());
      return state.oauth();
    },
  ],
  [
    'PostgreSQL',
    async () => {
      const store = PgStore.open(await pg.server().database());
      closing.push(
        () => store.close(),
        () => closeAsyncReads(store.conn),
      );
      return new PgMcpState(store.conn).oauth();
    },
  ],
];

describe.each(stores)('OAuthStore.access on %s', (_, open) => {
  it('answers a token with its grant, a token whose grant is gone without one, an unknown hash with nothing', async () => {
    const store = await open();
    store.addGrant(GRANT);
    store.addToken(ACCESS);
    store.addToken(ORPHAN);
    expect(await store.access('h-access')).toEqual({ token: ACCESS, grant: GRANT });
    expect(await store.access('h-orphan')).toEqual({ token: ORPHAN, grant: undefined });
    expect(await store.access('h-unknown')).toBeUndefined();
    // A revocation (any instance's: the same database) is seen by the next read; a use is noted.
    expect(store.revokeGrant('g-1', 'revoked by the client', '2026-11-29T10:01:00.000Z')).toBe(true);
    await store.touchGrant('g-1', '2026-11-29T10:02:00.000Z');
    const after = await store.access('h-access');
    expect(after?.grant).toMatchObject({
      revoked_at: '2026-11-29T10:01:00.000Z',
      sealed_key: '',
      last_used_at: '2026-11-29T10:02:00.000Z',
    });
  });
});
