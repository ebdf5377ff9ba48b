/**
 * `mcp --http --auth oauth` on PostgreSQL when the database stops answering: a request whose
 * token cannot be looked up is answered 503 with Retry-After (`temporarily_unavailable`), not the
 * 401 `invalid_token` that makes every client drop its token and sign in again; once the
 * database is back, the same token is served.
 */
import { afterAll, expect, test } from 'vitest';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { mcpInit, seedWorld, signIn, startOAuth, type OAuthRun } from './oauth-flow.js';

let pg: TestPostgres | undefined;
let run: OAuthRun | undefined;
afterAll(async () => {
  await run?.close();
  await pg?.stop();
});

test('the sign-in store down: 503 with Retry-After, the token kept; back up: served again', async () => {
  pg = await startPostgres();
  run = await startOAuth(await seedWorld(await pg.database()));
  const { tokens } = await signIn(run.base, 'alice-key');
  expect((await mcpInit(run.mcp, tokens.access_token)).status).toBe(200);
  // No connection allowed in, every one ended: the store cannot answer.
  const dbName = new URL(run.db).pathname.slice(1);
  await pg.admin(`ALTER DATABASE "${dbName}" ALLOW_CONNECTIONS false`);
  await pg.admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${dbName}'`);
  // At once, the token's read of a moment ago is used again (for up to 1 s): its owner cannot be
  // checked, a 503 too, never a 401.
  const first = await mcpInit(run.mcp, tokens.access_token);
  expect(first.status, first.text).toBe(503);
  expect(first.headers.get('www-authenticate')).toBeNull();
  await new Promise((r) => setTimeout(r, 1_100));
  const down = await mcpInit(run.mcp, tokens.access_token);
  expect(down.status, down.text).toBe(503);
  expect(Number(down.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(down.headers.get('www-authenticate')).toBeNull();
  expect(JSON.parse(down.text)).toMatchObject({ error: 'temporarily_unavailable' });
  await pg.admin(`ALTER DATABASE "${dbName}" ALLOW_CONNECTIONS true`);
  let back = await mcpInit(run.mcp, tokens.access_token);
  for (let i = 0; i < 50 && back.status !== 200; i++) {
    await new Promise((r) => setTimeout(r, 100));
    back = await mcpInit(run.mcp, tokens.access_token);
  }
  expect(back.status, back.text).toBe(200);
}, 120_000);
