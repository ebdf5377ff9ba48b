/**
 * A PostgreSQL URL (--db, WORKSPACE_DB, or DATABASE_URL when it is one and nothing else names
 * a database): `seed` and `admin` work on it, against a real throwaway PostgreSQL (`serve`:
 * test/http/postgres-instances.test.ts; `mcp`: test/mcp/postgres-instances.test.ts). One that
 * cannot be reached, is another program's, or comes without WORKSPACE_SECRET is refused by
 * every command in one stderr line, exit status 2, nothing created. The URL's password is
 * never repeated.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import pgClient from 'pg';
import { cliEnv, runCliAsync, snapshot, spawnServe } from '../helpers/cli.js';
import { usePostgres } from '../helpers/postgres.js';
import { DEMO_FIXTURE, tempDir } from '../helpers/world.js';

const pg = usePostgres();
const URL = 'postgres://workspace:s3cret-pw@127.0.0.1:1/workspace';

function homeEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return cliEnv({ HOME: home, USERPROFILE: home, XDG_DATA_HOME: join(home, 'xdg'), APPDATA: join(home, 'appdata'), ...extra });
}

/** Exit 2, one stderr line matching `says`, no password in it, nothing on stdout, the home folder as it was. */
async function expectRefused(args: string[], env: Record<string, string>, home: string, says: RegExp): Promise<void> {
  const before = snapshot(home);
  const r = await runCliAsync(args, env);
  expect(r.status, r.stderr).toBe(2);
  expect(r.stdout).toBe('');
  const lines = r.stderr.split('\n').filter(Boolean);
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(says);
  expect(r.stderr).not.toMatch(/s3cret-pw|test-password/);
  expect(snapshot(home)).toEqual(before);
}

const UNREACHABLE = (source: string) =>
  new RegExp(
    `^workspace-mcp: cannot open the PostgreSQL database postgres(ql)?:\\/\\/workspace@127\\.0\\.0\\.1:1\\/workspace \\(.*ECONNREFUSED.*\\): check that it runs and that ${source} is right`,
  );
const SECRET = { WORKSPACE_SECRET: 'ab'.repeat(32) };

describe('a PostgreSQL URL', () => {
  it('that cannot be reached is refused by mcp (stdio and --http), from --db, WORKSPACE_DB or DATABASE_URL; one that is no PostgreSQL URL is left to its program', async () => {
    const home = tempDir();
    for (const args of [
      ['mcp', '--db', URL],
      ['--db', URL.replace('postgres:', 'postgresql:')],
      ['mcp', '--http', '--port', '0', '--db', URL],
    ])
      await expectRefused(args, homeEnv(home, SECRET), home, UNREACHABLE('--db'));
    await expectRefused(['mcp'], homeEnv(home, { ...SECRET, WORKSPACE_DB: URL }), home, UNREACHABLE('WORKSPACE_DB'));
    await expectRefused(
      ['mcp', '--http', '--port', '0'],
      homeEnv(home, { ...SECRET, DATABASE_URL: URL }),
      home,
      UNREACHABLE('DATABASE_URL'),
    );
    // Without the secret every instance must share, nothing is even tried.
    await expectRefused(['mcp', '--db', URL], homeEnv(home), home, /^workspace-mcp: a PostgreSQL database needs WORKSPACE_SECRET/);
    // stdin closed at once: the server starts on its default file, then ends with its input.
    const started = await runCliAsync([], homeEnv(home, { DATABASE_URL: 'mysql://u:p@localhost/app' }));
    expect(started.status, started.stderr).toBe(0);
    expect(started.stderr).toMatch(/workspace\.db/);
  });

  it("of another program's database is refused by mcp, which leaves it as it was", async () => {
    const home = tempDir();
    const foreign = await pg.server().database();
    const name = foreign.split('/').pop();
    await pg.server().admin('CREATE TABLE invoices (id integer)', name);
    await expectRefused(
      ['mcp', '--db', foreign],
      homeEnv(home, SECRET),
      home,
      /^workspace-mcp: --db postgres:\/\/postgres@127\.0\.0\.1:\d+\/\w+ is a PostgreSQL database of another program/,
    );
    const tables = await pg.server().admin("SELECT tablename FROM pg_tables WHERE schemaname = 'public'", name);
    expect(tables.rows).toEqual([{ tablename: 'invoices' }]);
  });

  it('seed and admin work on it; the data is there for the next command', async () => {
    const home = tempDir();
    const url = await pg.server().database();
    const seeded = await runCliAsync(['seed', DEMO_FIXTURE, '--db', url], homeEnv(home));
    expect(seeded.status, seeded.stderr).toBe(0);
    expect(seeded.stderr).toMatch(
      /seeded postgres:\/\/\S+: 3 owners, 3 projects, 1 member, 5 bots, 50 contacts, 5 accounts, 1 deprecation\n/,
    );
    const key = await runCliAsync(['admin', 'regenerate-key', '--owner', '1'], homeEnv(home, { DATABASE_URL: url }));
    expect(key.status, key.stderr).toBe(0);
    expect(key.stdout.trim()).toMatch(/^[\w-]{40}$/);
    const journal = await runCliAsync(['admin', 'journal', '--account', '501', '--db', url], homeEnv(home));
    expect(journal.status, journal.stderr).toBe(0);
    expect(journal.stdout).toMatch(/Opening balance/);
    // A second seed of the same owners fails whole, and says why.
    const again = await runCliAsync(['seed', DEMO_FIXTURE, '--db', url], homeEnv(home));
    expect(again.status).toBe(2);
    expect(again.stderr).toMatch(
      /^workspace-mcp: fixture \S+: owners\[0\] \(id 1\) is in the database already \(postgres:\/\/\S+ holds 3 owners: seeded before, or used by a server\): seed into an empty PostgreSQL database, .*; nothing was written\n$/,
    );
    expect(again.stderr).not.toMatch(/duplicate key|constraint/);
  });

  it("one that cannot be reached, names a database the server lacks or a wrong password, or holds another program's tables, is refused in one line", async () => {
    const home = tempDir();
    const unreachable =
      /^workspace-mcp: cannot open the PostgreSQL database postgres:\/\/workspace@127\.0\.0\.1:1\/workspace \(.*ECONNREFUSED.*\)/;
    await expectRefused(['admin', 'regenerate-key', '--owner', '1', '--db', URL], homeEnv(home), home, unreachable);
    await expectRefused(['serve', '--port', '0', '--db', URL], homeEnv(home, { WORKSPACE_SECRET: 'ab'.repeat(32) }), home, unreachable);
    const foreign = await pg.server().database();
    await pg.server().admin('CREATE TABLE invoices (id integer)', foreign.split('/').pop());
    await expectRefused(['seed', DEMO_FIXTURE, '--db', foreign], homeEnv(home), home, /is a PostgreSQL database of another program/);
    // A server that answers, but not for this URL: a database it does not have (none is made), a wrong password.
    const missing = foreign.replace(/\/\w+$/, '/not_made_here');
    await expectRefused(
      ['seed', DEMO_FIXTURE, '--db', missing],
      homeEnv(home),
      home,
      /^workspace-mcp: cannot open the PostgreSQL database postgres:\/\/postgres@127\.0\.0\.1:\d+\/not_made_here \(database "not_made_here" does not exist\)/,
    );
    expect((await pg.server().admin("SELECT datname FROM pg_database WHERE datname = 'not_made_here'")).rows).toEqual([]);
    await expectRefused(
      ['serve', '--port', '0', '--db', foreign.replace(/:[^:@]+@/, ':wrong-password@')],
      homeEnv(home, SECRET),
      home,
      /password authentication failed/,
    );
  });

  it('with another WORKSPACE_SECRET than the one its instances share is refused in one line, which names no secret file', async () => {
    const home = tempDir();
    const url = await pg.server().database();
    expect((await runCliAsync(['seed', DEMO_FIXTURE, '--db', url], homeEnv(home))).status).toBe(0);
    // The first start keeps a check of its secret in the database.
    const first = await spawnServe(['--db', url], homeEnv(home, SECRET));
    first.proc.kill('SIGTERM');
    const says =
      /^workspace-mcp: WORKSPACE_SECRET does not open the encrypted values of postgres:\/\/postgres@127\.0\.0\.1:\d+\/\w+: set it to the secret the database was made with, the one the other instances on it have$/;
    await expectRefused(['serve', '--port', '0', '--db', url], homeEnv(home, { WORKSPACE_SECRET: 'cd'.repeat(32) }), home, says);
    await expectRefused(['mcp', '--db', url], homeEnv(home, { WORKSPACE_SECRET: 'cd'.repeat(32) }), home, says);
  });

  it('WORKSPACE_PG_POOL and WORKSPACE_PG_STATEMENT_TIMEOUT_MS are checked before connecting, and used: the connections serve holds, a statement cancelled at the timeout', async () => {
    const home = tempDir();
    const secret = { WORKSPACE_SECRET: 'ab'.repeat(32) };
    const bad: Array<[string, string]> = [
      ['WORKSPACE_PG_POOL', '0'],
      ['WORKSPACE_PG_POOL', 'four'],
      ['WORKSPACE_PG_STATEMENT_TIMEOUT_MS', '-5'],
      ['WORKSPACE_PG_STATEMENT_TIMEOUT_MS', '1e3'],
    ];
    for (const [name, value] of bad) {
      const says = new RegExp(`^workspace-mcp: ${name} must be a whole number from \\d+ to \\d+ \\(.*\\), not ${value}$`);
      await expectRefused(['serve', '--port', '0', '--db', URL], homeEnv(home, { ...secret, [name]: value }), home, says);
      await expectRefused(['admin', 'regenerate-key', '--owner', '1', '--db', URL], homeEnv(home, { [name]: value }), home, says);
    }
    const url = await pg.server().database();
    const db = url.split('/').pop()!;
    expect((await runCliAsync(['seed', DEMO_FIXTURE, '--db', url], homeEnv(home))).status).toBe(0);
    // serve holds one connection for its checks and one a service thread.
    const served = await spawnServe(['--db', url], { ...homeEnv(home, secret), WORKSPACE_PG_POOL: '2' });
    try {
      expect(
        (await fetch(`${served.baseUrl}/getMe`, { headers: { Accept: 'application/json', Authorization: 'Bearer demo-dana-key' } })).status,
      ).toBe(200);
      const held = await pg
        .server()
        .admin(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = '${db}' AND backend_type = 'client backend'`);
      expect(held.rows[0].n).toBe(3);
    } finally {
      served.proc.kill('SIGTERM');
    }
    // A statement kept waiting (the owners table locked) is cancelled at the timeout given.
    const locker = new pgClient.Client({ connectionString: url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE owners IN ACCESS EXCLUSIVE MODE');
      const started = Date.now();
      const r = await runCliAsync(
        ['admin', 'regenerate-key', '--owner', '1', '--db', url],
        homeEnv(home, { WORKSPACE_PG_STATEMENT_TIMEOUT_MS: '300' }),
      );
      expect(r.status).not.toBe(0);
      expect(r.stderr).toMatch(/statement timeout/);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
  });

  it('DATABASE_URL yields to --db, and one that is no PostgreSQL URL is left to the program it is for', async () => {
    const home = tempDir();
    const seeded = await runCliAsync(['seed', DEMO_FIXTURE, '--db', join(home, 'w.db')], homeEnv(home, { DATABASE_URL: URL }));
    expect(seeded.status, seeded.stderr).toBe(0);
    const other = await runCliAsync(
      ['admin', 'regenerate-key', '--owner', '1'],
      homeEnv(home, { DATABASE_URL: 'mysql://u:p@localhost/app' }),
    );
    expect(other.status).toBe(2);
    expect(other.stderr).toMatch(/there is no database at .*workspace\.db/);
  });
});
