/**
 * The CLI as outside scripts use it (contract.md): seed, serve, admin, bad usage. Runs the
 * built `dist/cli/main.js` as a separate process against a real database file.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, spawnServe } from '../helpers/cli.js';
import { callApi } from '../helpers/http.js';
import { stop } from '../helpers/temp.js';
import { DEMO_FIXTURE, tempDir } from '../helpers/world.js';

const get = (baseUrl: string, method: string, key: string, params: Record<string, unknown> = {}) =>
  callApi(baseUrl, method, params, { key, verb: 'GET' });

describe('seed', () => {
  it('loads the shared demo fixture', () => {
    const db = join(tempDir(), 'demo.db');
    const r = runCli(['seed', DEMO_FIXTURE, '--db', db]);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('');
    const conn = new Database(db, { readonly: true });
    expect((conn.prepare('SELECT count(*) AS n FROM owners').get() as { n: number }).n).toBe(3);
    // Keys are never stored in clear text.
    const raw = conn.prepare('SELECT key_hash FROM owners').all() as { key_hash: string }[];
    expect(raw.every((o) => /^[0-9a-f]{64}$/.test(o.key_hash))).toBe(true);
    conn.close();
  });

  it('a broken fixture writes nothing and the error names the offending entry', () => {
    const dir = tempDir();
    const db = join(dir, 'w.db');
    const fixture = join(dir, 'bad.json');
    writeFileSync(
      fixture,
      JSON.stringify({
        owners: [{ id: 1, name: 'A', api_key: 'a-key' }],
        projects: [{ uuid: '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10', owner_id: 1, name: 'P' }],
        bots: [{ id: 10, project_uuid: '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10', name: 'B' }],
        contacts: [
          { id: 100, bot_id: 10, messenger: 'telegram', name: 'Ok', telegram_id: '1' },
          { id: 101, bot_id: 99, messenger: 'telegram', name: 'Bad', telegram_id: '2' },
        ],
      }),
    );
    const r = runCli(['seed', fixture, '--db', db]);
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('contacts[1] (id 101)');
    expect(r.stderr).toContain('bot_id');
    // "On any error nothing is written": not even an empty database a later start would take as new.
    expect(existsSync(db)).toBe(false);
    // Into an existing database, the same fixture leaves it exactly as it was.
    expect(runCli(['seed', DEMO_FIXTURE, '--db', db]).status).toBe(0);
    const before = new Database(db, { readonly: true });
    const count = () => (before.prepare('SELECT count(*) AS n FROM contacts').get() as { n: number }).n;
    const contacts = count();
    expect(runCli(['seed', fixture, '--db', db]).status).toBe(2);
    expect(count()).toBe(contacts);
    before.close();
  });

  it('entries of the wrong kind are refused and named: an amount as a string, a media variable that is no URL, an unknown deprecated method', () => {
    const dir = tempDir();
    const base = {
      owners: [{ id: 1, name: 'A', api_key: 'a-key' }],
      projects: [{ uuid: '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10', owner_id: 1, name: 'P' }],
      bots: [{ id: 10, project_uuid: '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10', name: 'B' }],
      contacts: [{ id: 100, bot_id: 10, messenger: 'telegram', name: 'Ok', telegram_id: '1' }],
    };
    const cases: Array<[object, string]> = [
      [{ ...base, accounts: [{ id: 5, contact_id: 100, currency: 'USD', amount: '10' }] }, 'accounts[0] (id 5): amount must be an integer'],
      [
        {
          ...base,
          contacts: [
            {
              id: 100,
              bot_id: 10,
              messenger: 'telegram',
              name: 'Ok',
              telegram_id: '1',
              variables: [{ name: 'photo', value: 'not a url', type: 1 }],
            },
          ],
        },
        'contacts[0] (id 100) variables[0]: value must be a file URL',
      ],
      [
        { ...base, deprecations: [{ method: 'nope', sunset: '2030-01-01T00:00:00Z' }] },
        'deprecations[0] (nope): method nope is not a method of the API',
      ],
    ];
    cases.forEach(([fixture, message], i) => {
      const file = join(dir, `bad-${i}.json`);
      writeFileSync(file, JSON.stringify(fixture));
      const db = join(dir, `bad-${i}.db`);
      const r = runCli(['seed', file, '--db', db]);
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(message);
      expect(existsSync(db)).toBe(false);
    });
  });

  it('a --db that is a folder or not a database is a one-line error and exit status 2', () => {
    const dir = tempDir();
    const folder = runCli(['admin', 'journal', '--account', '1', '--db', dir]);
    expect(folder.status).toBe(2);
    expect(folder.stderr.trim().split('\n')).toHaveLength(1);
    writeFileSync(join(dir, 'junk.db'), 'not a database at all, just text that is long enough to be read');
    expect(runCli(['admin', 'journal', '--account', '1', '--db', join(dir, 'junk.db')]).status).toBe(2);
  });

  it('a missing or unreadable fixture is a one-line error and exit status 2', () => {
    const dir = tempDir();
    const missing = runCli(['seed', join(dir, 'nope.json'), '--db', join(dir, 'w.db')]);
    expect(missing.status).toBe(2);
    writeFileSync(join(dir, 'broken.json'), '{ not json');
    const broken = runCli(['seed', join(dir, 'broken.json'), '--db', join(dir, 'w.db')]);
    expect(broken.status).toBe(2);
    expect(broken.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('bad flags', () => {
  it('an unknown flag or command is a one-line error and exit status 2', () => {
    for (const args of [
      ['serve', '--bogus'],
      ['serve', '--port', '--db', 'x.db'],
      ['serve', '--rate-limit', '-1'],
      ['frobnicate'],
      ['admin', 'nope'],
      ['admin', 'set-plan', '--owner', '1', '--plan', 'gold', '--db', join(tempDir(), 'x.db')],
      ['serve', '--port', 'abc'],
    ]) {
      const r = runCli(args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
  });

  it('a flag the command does not take names the ones it does; a flag with no value says it needs one', () => {
    const unknown = runCli(['--frobnicate']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/unknown option --frobnicate: this command takes --db, .*--remote/);
    const empty = runCli(['serve', '--db']);
    expect(empty.status).toBe(2);
    expect(empty.stderr).toContain('--db needs a value');
  });
});

describe('serve on a new database', () => {
  it('creates a default pro owner with a project and a bot, and prints its key to stderr once', async () => {
    const db = join(tempDir(), 'fresh.db');
    const first = await spawnServe(['--db', db]);
    try {
      const m = await first.waitForStderr(/API key\s+(\S+)/);
      const me = await get(first.baseUrl, 'getMe', m[1]!);
      expect(me.status).toBe(200);
      expect(me.headers.get('x-ratelimit-limit')).toBe('120');
    } finally {
      await stop(first.proc);
    }
    const second = await spawnServe(['--db', db]);
    // Everything it had to say is written once it has exited.
    await stop(second.proc);
    expect(second.stderr()).not.toMatch(/API key/);
  });
});

describe('seed after serve', () => {
  it('an untouched default world makes way for a fixture that reuses its ids', async () => {
    const db = join(tempDir(), 'first-serve.db');
    const first = await spawnServe(['--db', db]);
    const key = (await first.waitForStderr(/API key\s+(\S+)/))[1]!;
    await stop(first.proc);
    const r = runCli(['seed', DEMO_FIXTURE, '--db', db]);
    expect(r.status, r.stderr).toBe(0);
    const second = await spawnServe(['--db', db]);
    try {
      expect((await get(second.baseUrl, 'getMe', 'demo-dana-key')).body.data.id).toBe(1);
      expect((await get(second.baseUrl, 'getMe', key)).status).toBe(401);
    } finally {
      await stop(second.proc);
    }
  });

  it('an owner id that exists already is named, and exit status is 2', () => {
    const dir = tempDir();
    const db = join(dir, 'used.db');
    const fixture = join(dir, 'one.json');
    const other = join(dir, 'other.json');
    writeFileSync(fixture, JSON.stringify({ owners: [{ id: 1, name: 'A', api_key: 'a-key' }] }));
    writeFileSync(other, JSON.stringify({ owners: [{ id: 1, name: 'B', api_key: 'b-key' }] }));
    expect(runCli(['seed', fixture, '--db', db]).status).toBe(0);
    const again = runCli(['seed', other, '--db', db]);
    expect(again.status).toBe(2);
    expect(again.stderr).toContain('owners[0] (id 1)');
  });

  it('a fixture already loaded is said to be so, not refused as a clash: nothing is written, exit status 0', () => {
    const db = join(tempDir(), 'twice.db');
    expect(runCli(['seed', DEMO_FIXTURE, '--db', db]).status).toBe(0);
    const count = () => {
      const conn = new Database(db, { readonly: true });
      try {
        return (conn.prepare('SELECT (SELECT count(*) FROM owners) + (SELECT count(*) FROM contacts) AS n').get() as { n: number }).n;
      } finally {
        conn.close();
      }
    };
    const before = count();
    const again = runCli(['seed', DEMO_FIXTURE, '--db', db]);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stderr).toBe(`${DEMO_FIXTURE} is already loaded in ${db} (its owners 1, 2, 3 are there): nothing was written\n`);
    expect(again.stderr).not.toMatch(/already used/);
    expect(count()).toBe(before);
  });
});

describe('admin commands change what the API answers', () => {
  let db: string;
  let server: Awaited<ReturnType<typeof spawnServe>>;
  beforeAll(async () => {
    db = join(tempDir(), 'admin.db');
    expect(runCli(['seed', DEMO_FIXTURE, '--db', db]).status).toBe(0);
    server = await spawnServe(['--db', db, '--rate-limit', '0']);
  });
  afterAll(() => stop(server.proc));

  it('regenerate-key prints the new key; the old one answers 401 at once', async () => {
    expect((await get(server.baseUrl, 'getMe', 'demo-oleg-key')).status).toBe(200);
    const r = runCli(['admin', 'regenerate-key', '--owner', '2', '--db', db]);
    expect(r.status).toBe(0);
    const key = r.stdout.trim();
    expect(key.length).toBeGreaterThan(20);
    expect((await get(server.baseUrl, 'getMe', 'demo-oleg-key')).status).toBe(401);
    expect((await get(server.baseUrl, 'getMe', key)).body.data.id).toBe(2);
    const reset = runCli(['admin', 'reset-password', '--owner', '2', '--db', db]).stdout.trim();
    expect((await get(server.baseUrl, 'getMe', key)).status).toBe(401);
    expect((await get(server.baseUrl, 'getMe', reset)).status).toBe(200);
  });

  it('set-plan free gives 402, pro gives it back', async () => {
    expect(runCli(['admin', 'set-plan', '--owner', '1', '--plan', 'free', '--db', db]).status).toBe(0);
    expect((await get(server.baseUrl, 'getMe', 'demo-dana-key')).status).toBe(402);
    runCli(['admin', 'set-plan', '--owner', '1', '--plan', 'pro', '--db', db]);
    expect((await get(server.baseUrl, 'getMe', 'demo-dana-key')).status).toBe(200);
  });

  it('block-owner gives 403, unblock-owner lifts it', async () => {
    runCli(['admin', 'block-owner', '--owner', '1', '--db', db]);
    expect((await get(server.baseUrl, 'getMe', 'demo-dana-key')).status).toBe(403);
    runCli(['admin', 'unblock-owner', '--owner', '1', '--db', db]);
    expect((await get(server.baseUrl, 'getMe', 'demo-dana-key')).status).toBe(200);
  });

  it('deprecate adds Deprecation and Sunset; a past sunset gives 410', async () => {
    runCli(['admin', 'deprecate', '--method', 'getMe', '--sunset', '2999-01-01T00:00:00Z', '--db', db]);
    const live = await get(server.baseUrl, 'getMe', 'demo-dana-key');
    expect(live.headers.get('deprecation')).toBe('true');
    expect(live.headers.get('sunset')).toBe('Tue, 01 Jan 2999 00:00:00 GMT');
    runCli(['admin', 'deprecate', '--method', 'getMe', '--sunset', '2020-01-01T00:00:00Z', '--db', db]);
    const gone = await get(server.baseUrl, 'getMe', 'demo-dana-key');
    expect(gone.status).toBe(410);
    expect(gone.body.code).toBe('method_removed');
  });

  it('block-account makes a debit answer account_blocked; unblock-account lifts it', async () => {
    const accounts = await get(server.baseUrl, 'getContactAccounts', 'demo-dana-key', { contact_id: 1001 });
    expect(accounts.status).toBe(200);
    const account = accounts.body.data[0];
    runCli(['admin', 'block-account', '--account', String(account.id), '--db', db]);
    const post = (params: Record<string, unknown>) =>
      callApi(server.baseUrl, 'withdrawFundsFromContactAccount', params, { key: 'demo-dana-key' });
    const blocked = await post({ account_id: account.id, amount: 1, description: 'coffee' });
    expect(blocked.body.code).toBe('account_blocked');
    runCli(['admin', 'unblock-account', '--account', String(account.id), '--db', db]);
    const ok = await post({ account_id: account.id, amount: 1, description: 'coffee' });
    expect(ok.status).toBe(200);
    const journal = runCli(['admin', 'journal', '--account', String(account.id), '--db', db]);
    const lines = journal.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.at(-1)).toMatchObject({ operation: 'Debit via API', amount: -1, description: 'coffee' });
  });

  it('delete-contact and delete-bot make the contact 404', async () => {
    expect((await get(server.baseUrl, 'getContactAccounts', 'demo-dana-key', { contact_id: 1002 })).status).toBe(200);
    runCli(['admin', 'delete-contact', '--contact', '1002', '--db', db]);
    expect((await get(server.baseUrl, 'getContactAccounts', 'demo-dana-key', { contact_id: 1002 })).status).toBe(404);
    expect((await get(server.baseUrl, 'getContactAccounts', 'demo-dana-key', { contact_id: 1001 })).status).toBe(200);
    runCli(['admin', 'delete-bot', '--bot', '11', '--db', db]);
    expect((await get(server.baseUrl, 'getContactAccounts', 'demo-dana-key', { contact_id: 1001 })).status).toBe(404);
  });

  it('deprecate refuses a method the API does not have', () => {
    const r = runCli(['admin', 'deprecate', '--method', 'noSuchMethod', '--sunset', '2030-01-01T00:00:00Z', '--db', db]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('unknown method: noSuchMethod');
    expect(runCli(['admin', 'deprecate', '--method', 'createContactAccount', '--sunset', '2999-01-01T00:00:00Z', '--db', db]).status).toBe(
      0,
    );
  });

  it('an unknown id is a one-line error and exit status 2', () => {
    const r = runCli(['admin', 'block-owner', '--owner', '999', '--db', db]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('owner 999 not found');
  });
});
