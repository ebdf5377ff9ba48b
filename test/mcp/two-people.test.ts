/**
 * Two people on one server, each as themselves, whichever way they say who they are: the same
 * isolation checks (test/mcp/isolation.ts) over `--auth key` (each request's own API key) and
 * `--auth oauth` (each person signed in through the OAuth flow, without a browser), both eras,
 * on SQLite and (oauth) PostgreSQL. The built CLI, real SDK clients.
 */
import { afterEach, describe, test } from 'vitest';
import { cliEnv, spawnAnnounced } from '../helpers/cli.js';
import { usePostgres } from '../helpers/postgres.js';
import { stop } from '../helpers/temp.js';
import { tempDir } from '../helpers/world.js';
import { ERAS, type McpClient } from './clients.js';
import { sessionIsItsOpeners, twoPeopleApart, type Bearers } from './isolation.js';
import { seedWorld, signIn, startOAuth } from './oauth-flow.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});
const keep = (c: McpClient) => cleanups.push(() => c.close());

async function byKey(db: string): Promise<{ url: string; bearers: Bearers }> {
  const started = await spawnAnnounced(
    ['mcp', '--http', '--port', '0', '--auth', 'key', '--db', db],
    /(http:\/\/\S+\/mcp)/,
    cliEnv({ WORKSPACE_DATA_DIR: tempDir() }),
  );
  cleanups.push(() => stop(started.proc));
  return { url: started.url, bearers: { alice: 'alice-key', bob: 'bob-key' } };
}

async function byOAuth(db: string): Promise<{ url: string; bearers: Bearers }> {
  const run = await startOAuth(db);
  cleanups.push(() => run.close());
  const [alice, bob] = await Promise.all([signIn(run.base, 'alice-key'), signIn(run.base, 'bob-key')]);
  return { url: run.mcp, bearers: { alice: alice.tokens.access_token, bob: bob.tokens.access_token } };
}

describe.each([
  ['--auth key', byKey],
  ['--auth oauth', byOAuth],
])('%s on SQLite', (_, start) => {
  test.each(ERAS)('%s: neither sees, finds, moves, audits, completes or exports the other’s data', async (era) => {
    const { url, bearers } = await start(await seedWorld());
    await twoPeopleApart(url, bearers, era, keep);
  });

  test('a 2025-era session id answers only its opener', async () => {
    const { url, bearers } = await start(await seedWorld());
    await sessionIsItsOpeners(url, bearers);
  });
});

describe('--auth oauth on PostgreSQL', () => {
  const pg = usePostgres();
  test('both eras apart, sessions their openers’', async () => {
    const { url, bearers } = await byOAuth(await seedWorld(await pg.server().database()));
    for (const era of ERAS) await twoPeopleApart(url, bearers, era, keep);
    await sessionIsItsOpeners(url, bearers);
  }, 90_000);
});
