/**
 * A PostgreSQL URL given to any command, while the PostgreSQL store does not hold the whole
 * API: refused in one stderr line, exit status 2, the URL's password never repeated, nothing
 * created, rather than half an API served. DATABASE_URL counts only when it is a PostgreSQL
 * URL and no --db or WORKSPACE_DB is given.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCliAsync, snapshot } from '../helpers/cli.js';
import { DEMO_FIXTURE, tempDir } from '../helpers/world.js';

const URL = 'postgres://workspace:s3cret-pw@127.0.0.1:1/workspace';

function homeEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return cliEnv({ HOME: home, USERPROFILE: home, XDG_DATA_HOME: join(home, 'xdg'), APPDATA: join(home, 'appdata'), ...extra });
}

async function expectRefused(args: string[], env: Record<string, string>, home: string, source: string): Promise<void> {
  const before = snapshot(home);
  const r = await runCliAsync(args, env);
  expect(r.status, r.stderr).toBe(2);
  expect(r.stdout).toBe('');
  const lines = r.stderr.split('\n').filter(Boolean);
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^workspace-mcp: ${source} names a PostgreSQL database, and this version cannot serve the API from PostgreSQL yet`));
  expect(lines[0]).not.toContain('s3cret-pw');
  expect(snapshot(home)).toEqual(before);
}

describe('a PostgreSQL URL', () => {
  it('is refused by serve, mcp, seed and admin, given as --db', async () => {
    const home = tempDir();
    for (const args of [['serve', '--db', URL, '--port', '0'], ['mcp', '--db', URL], ['--db', URL], ['seed', DEMO_FIXTURE, '--db', URL], ['admin', 'regenerate-key', '--owner', '1', '--db', URL]]) {
      await expectRefused(args, homeEnv(home), home, '--db');
    }
  });

  it('is refused from WORKSPACE_DB and from DATABASE_URL (postgresql:// too)', async () => {
    const home = tempDir();
    await expectRefused(['serve', '--port', '0'], homeEnv(home, { WORKSPACE_DB: URL }), home, 'WORKSPACE_DB');
    await expectRefused(['seed', DEMO_FIXTURE], homeEnv(home, { DATABASE_URL: URL.replace('postgres:', 'postgresql:') }), home, 'DATABASE_URL');
  });

  it('DATABASE_URL yields to --db, and one that is no PostgreSQL URL is left to the program it is for', async () => {
    const home = tempDir();
    const db = join(home, 'w.db');
    const seeded = await runCliAsync(['seed', DEMO_FIXTURE, '--db', db], homeEnv(home, { DATABASE_URL: URL }));
    expect(seeded.status, seeded.stderr).toBe(0);
    const other = await runCliAsync(['admin', 'regenerate-key', '--owner', '1'], homeEnv(home, { DATABASE_URL: 'mysql://u:p@localhost/app' }));
    expect(other.status).toBe(2);
    expect(other.stderr).toMatch(/there is no database at .*workspace\.db/);
  });
});
