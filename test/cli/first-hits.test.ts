/**
 * What an operator and a newcomer hit first, over the built CLI as a process: `--auth oauth` on
 * a SQLite file uses the database's own secret (no circle between WORKSPACE_SECRET and its
 * `.secret`), and a secret that does not open it names the one command that does; a start
 * refused because its port is taken makes nothing, so the next one is the first; a server bound
 * to every interface says so, and refuses to take API keys over plain http from the network;
 * `seed` says where it wrote and what a used database holds; a slip of a command or flag gets
 * the one meant; a count of one is said in the singular.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLI,
  cliEnv,
  collect,
  runCli,
  runCliAsync,
  snapshot,
  spawnAnnounced,
  spawnServe,
  type Announced,
  type CliRun,
} from '../helpers/cli.js';
import { stop, track } from '../helpers/temp.js';
import { baseFixture, DEMO_FIXTURE, seedDb, tempDir } from '../helpers/world.js';
import { freePort, mcpInit, signIn } from '../mcp/oauth-flow.js';

/** Exit 2 and exactly one stderr line, nothing on stdout; the line. */
function refused(r: CliRun): string {
  expect(r.status, r.stderr).toBe(2);
  expect(r.stdout).toBe('');
  const lines = r.stderr.split('\n').filter(Boolean);
  expect(lines, r.stderr).toHaveLength(1);
  return lines[0]!;
}

/** A home of its own: the default data folder is inside it. */
function homeEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return cliEnv({ HOME: home, USERPROFILE: home, XDG_DATA_HOME: join(home, 'xdg'), APPDATA: join(home, 'appdata'), ...extra });
}

describe('--auth oauth on a SQLite file: the database keeps its secret, and no message sends the person in a circle', () => {
  /** `mcp --http --auth oauth` on `db` at `port`, its public URL its own loopback address. */
  const oauthArgs = (db: string, port: number) => [
    'mcp',
    '--http',
    '--auth',
    'oauth',
    '--public-url',
    `http://127.0.0.1:${port}`,
    '--port',
    String(port),
    '--db',
    db,
  ];

  it('starts without WORKSPACE_SECRET, keeps signed-in people across restarts, and a wrong one names the command that works', async () => {
    const dir = tempDir();
    const db = seedDb(baseFixture(), 'team.db', dir);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = cliEnv({ WORKSPACE_DATA_DIR: dir });
    const start = (extra: Record<string, string> = {}) => spawnAnnounced(oauthArgs(db, port), /(http:\/\/\S+\/mcp)/, { ...env, ...extra });

    // The first start: no WORKSPACE_SECRET, and none asked for; the database's own is made.
    let run: Announced = await start();
    const { tokens } = await signIn(base, 'alice-key');
    expect((await mcpInit(`${base}/mcp`, tokens.access_token)).status).toBe(200);
    await stop(run.proc);
    expect(existsSync(`${db}.secret`)).toBe(true);

    // Again without it: the key sealed at sign-in opens with the file's secret.
    run = await start();
    expect((await mcpInit(`${base}/mcp`, tokens.access_token)).status).toBe(200);
    await stop(run.proc);

    // Another secret: refused, and the line says both ways out, the second as a command.
    const line = refused(await runCliAsync(oauthArgs(db, port), { ...env, WORKSPACE_SECRET: 'cd'.repeat(32) }));
    expect(line).toContain(`WORKSPACE_SECRET does not open the encrypted values of ${db}: unset it to use the database's own ${db}.secret`);
    const command = /(WORKSPACE_SECRET=\$\(cat \S+\))$/.exec(line)?.[1];
    expect(command, line).toBe(`WORKSPACE_SECRET=$(cat ${db}.secret)`);
    expect(line).not.toMatch(/needs WORKSPACE_SECRET/);

    // The command it names, run by a shell as written: the server starts, the person is still signed in.
    const quote = (w: string) => `'${w.replace(/'/g, `'\\''`)}'`;
    const shell = track(
      spawn('sh', ['-c', `${command} exec ${[process.execPath, CLI, ...oauthArgs(db, port)].map(quote).join(' ')}`], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    const err = collect(shell.stderr);
    try {
      await collect(shell.stdout).wait(/http:\/\/\S+\/mcp\n/);
      expect(err.text()).not.toMatch(/does not open/);
      expect((await mcpInit(`${base}/mcp`, tokens.access_token)).status).toBe(200);
    } finally {
      await stop(shell);
    }
  });

  it('over --remote, where no database of ours keeps a secret, WORKSPACE_SECRET is asked for with the command that makes one', () => {
    const line = refused(
      runCli(['mcp', '--http', '--auth', 'oauth', '--public-url', 'https://mcp.example.com', '--remote', 'http://127.0.0.1:9/api/v1']),
    );
    expect(line).toMatch(/--auth oauth with --remote needs WORKSPACE_SECRET .*export WORKSPACE_SECRET=\$\(openssl rand -hex 32\)$/);
  });
});

describe('a start refused because its port is taken makes nothing', () => {
  let taken: Server;
  let port: number;
  beforeAll(async () => {
    taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    port = (taken.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => taken.close(() => r())));

  const starts: Array<[string, string[]]> = [
    ['serve', ['serve']],
    ['mcp --http', ['mcp', '--http']],
    ['mcp --http --auth oauth', ['mcp', '--http', '--auth', 'oauth', '--public-url', 'https://mcp.example.com']],
  ];

  for (const [name, command] of starts)
    it(`${name}: no database, secret or state file; the next start is the first, with its notice and key`, async () => {
      const dir = tempDir();
      const db = join(dir, 'team.db');
      const line = refused(await runCliAsync([...command, '--db', db, '--port', String(port)], cliEnv()));
      expect(line).toBe(`workspace-mcp: port ${port} on 127.0.0.1 is in use: give --port another number (0: any free port)`);
      expect(readdirSync(dir)).toEqual([]);

      const next = await spawnAnnounced([...command, '--db', db, '--port', '0'], /(https?:\/\/\S+\/(?:api\/v1|mcp))\n/, cliEnv());
      try {
        await next.waitForStderr(/\n {2}API key +\S+ \(the new default owner's; shown this once\)/);
        expect(next.stderr()).toContain(`${db} (new, empty: `);
      } finally {
        await stop(next.proc);
      }
      expect(readdirSync(dir)).toEqual(expect.arrayContaining(['team.db', 'team.db.secret']));
    });

  it('with no --db: the data folder it would have made is not left behind either', async () => {
    const home = tempDir();
    for (const command of [['serve'], ['mcp', '--http']]) {
      refused(await runCliAsync([...command, '--port', String(port)], homeEnv(home)));
      expect(readdirSync(home), command.join(' ')).toEqual([]);
    }
  });

  it('a database that was there is left as it was (the port is taken before it is opened, so no secret is made for it); the next start opens it', async () => {
    for (const command of [['serve'], ['mcp', '--http']]) {
      const dir = tempDir();
      const db = seedDb(baseFixture(), 'kept.db', dir);
      const before = snapshot(dir);
      refused(await runCliAsync([...command, '--db', db, '--port', String(port)], cliEnv()));
      expect(snapshot(dir), command.join(' ')).toEqual(before);
      const next = await spawnAnnounced([...command, '--db', db, '--port', '0'], /(http:\/\/\S+\/(?:api\/v1|mcp))\n/, cliEnv());
      try {
        await next.waitForStderr(/\n {2}connect|\n {2}try/);
        expect(next.stderr()).not.toMatch(/new, empty|API key/);
        expect(next.stderr()).toContain(`database  ${db}\n`);
      } finally {
        await stop(next.proc);
      }
    }
  });
});

describe('bound to every interface', () => {
  it('--auth oauth says it listens on every interface, at the addresses a client reaches, and it does', async () => {
    const dir = tempDir();
    const s = await spawnAnnounced(
      [
        'mcp',
        '--http',
        '--host',
        '0.0.0.0',
        '--port',
        '0',
        '--auth',
        'oauth',
        '--public-url',
        'https://mcp.example.com',
        '--db',
        join(dir, 'team.db'),
      ],
      /(https:\/\/\S+\/mcp)\n/,
      cliEnv(),
    );
    try {
      expect(s.url).toBe('https://mcp.example.com/mcp');
      const ready = s.stderr().split('\n')[0]!;
      const port = /http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(ready)?.[1];
      expect(port, ready).toBeTruthy();
      const own = Object.values(networkInterfaces())
        .flat()
        .filter((a) => a && !a.internal && a.family === 'IPv4')
        .map((a) => a!.address);
      const at = ['127.0.0.1', ...own].map((h) => `http://${h}:${port}/mcp`);
      expect(ready).toContain(`(listening on every interface, at ${at.join(', ')}; each person signs in with OAuth)`);
      expect(ready).not.toContain('0.0.0.0');
      // Each address named answers (an HTTP status, whatever it is: the listener is there).
      for (const url of at) expect((await fetch(url, { method: 'GET' })).status).toBeGreaterThan(0);
    } finally {
      await stop(s.proc);
    }
  });

  it('an http:// public URL with a --host beyond loopback is refused before anything is made, saying what to do', async () => {
    for (const host of ['0.0.0.0', '::', '192.0.2.1']) {
      const dir = tempDir();
      const line = refused(
        await runCliAsync(
          ['mcp', '--http', '--host', host, '--auth', 'oauth', '--public-url', 'http://127.0.0.1:8765', '--db', join(dir, 'team.db')],
          cliEnv(),
        ),
      );
      expect(line).toBe(
        `workspace-mcp: --public-url http://127.0.0.1:8765 is plain http, and --host ${host} listens beyond this machine, so the page that takes people's API keys would cross the network in clear: serve it behind TLS and give --public-url https://your.host, or listen on this machine only (leave out --host, or --host 127.0.0.1)`,
      );
      expect(readdirSync(dir)).toEqual([]);
    }
  });
});

describe('seed says what it did', () => {
  it('a fixture that clashes with itself into a new database: the entry named, no word of a used database; nothing left', () => {
    const dir = tempDir();
    const twice = join(dir, 'twice.json');
    const owner = { id: 2, name: 'Someone', api_key: 'someone-key' };
    writeFileSync(twice, JSON.stringify({ owners: [owner, { ...owner, api_key: 'another-key' }] }));
    const line = refused(runCli(['seed', twice, '--db', join(dir, 'new.db')]));
    expect(line).toMatch(
      /^workspace-mcp: fixture \S+: owners\[1\] \(id 2\): its id, or a field that must be unique, is taken already .*; nothing was written$/,
    );
    expect(line).not.toMatch(/in the database already|constraint/i);
    expect(readdirSync(dir)).toEqual(['twice.json']);
  });

  it('into a used database: what it holds and where to seed instead, no raw constraint; nothing written', () => {
    const dir = tempDir();
    const db = join(dir, 'used.db');
    expect(runCli(['seed', DEMO_FIXTURE, '--db', db]).status).toBe(0);
    const other = join(dir, 'other.json');
    writeFileSync(other, JSON.stringify({ owners: [{ id: 2, name: 'Someone else', api_key: 'other-key' }] }));
    const line = refused(runCli(['seed', other, '--db', db]));
    expect(line).toBe(
      `workspace-mcp: fixture ${other}: owners[0] (id 2) is in the database already (${db} holds 3 owners: seeded before, or used by a server): seed into a new file (--db NEW.db), or give the fixture's entries ids the database does not hold; nothing was written`,
    );
    expect(line).not.toMatch(/constraint/i);
    // The way out it names works.
    const fresh = runCli(['seed', other, '--db', join(dir, 'NEW.db')]);
    expect(fresh.status, fresh.stderr).toBe(0);
    expect(fresh.stderr).toBe(
      `seeded ${join(dir, 'NEW.db')}: 1 owner, 0 projects, 0 members, 0 bots, 0 contacts, 0 accounts, 0 deprecations\n`,
    );
  });

  it('with no --db, where it wrote; counts of one in the singular', () => {
    const home = tempDir();
    const one = join(home, 'one.json');
    writeFileSync(
      one,
      JSON.stringify({
        owners: [{ id: 1, name: 'A', api_key: 'a-key' }],
        projects: [{ uuid: '00000000-0000-4000-8000-000000000001', owner_id: 1 }],
        bots: [{ id: 10, project_uuid: '00000000-0000-4000-8000-000000000001' }],
        contacts: [{ id: 100, bot_id: 10, messenger: 'web', name: 'Ann' }],
      }),
    );
    const r = spawnSync(process.execPath, [CLI, 'seed', one], { encoding: 'utf8', env: homeEnv(home) });
    expect(r.status, r.stderr).toBe(0);
    const file = join(home, 'xdg', 'workspace-mcp', 'workspace.db');
    expect(r.stderr).toBe(`seeded ${file}: 1 owner, 1 project, 0 members, 1 bot, 1 contact, 0 accounts, 0 deprecations\n`);
    expect(existsSync(file)).toBe(true);
    const again = spawnSync(process.execPath, [CLI, 'seed', one], { encoding: 'utf8', env: homeEnv(home) });
    expect(again.stderr).toBe(`${one} is already loaded in ${file} (its owner 1 is there): nothing was written\n`);
  });

  it("serve's banner: one request a minute is said so", async () => {
    const one = await spawnServe(['--db', join(tempDir(), 'r.db'), '--rate-limit', '1']);
    await stop(one.proc);
    expect(one.stderr().split('\n')[0]).toMatch(/ \(1 request a minute per owner\)$/);
  });
});

describe('a slip of a command or flag gets the one meant', () => {
  it('a command, an admin command, a flag: "did you mean"; a word like none: the list alone', () => {
    const cases: Array<[string[], string]> = [
      [['sevre'], 'unknown command: sevre: did you mean serve? the commands are mcp, demo, serve, seed, admin (workspace-mcp --help)'],
      [['seeed', 'x.json'], 'unknown command: seeed: did you mean seed?'],
      [['admin', 'regnerate-key'], 'unknown admin command: regnerate-key: did you mean regenerate-key? the commands are regenerate-key, '],
      [['serve', '--prot', '8080'], 'unknown option --prot: did you mean --port? this command takes --db, --port, '],
      [['--htpp'], 'unknown option --htpp: did you mean --http? this command takes '],
      [['mcp', '--read-olny'], 'unknown option --read-olny: did you mean --read-only? '],
    ];
    for (const [args, says] of cases) expect(refused(runCli(args)), args.join(' ')).toContain(`workspace-mcp: ${says}`);
    for (const args of [['frobnicate'], ['serve', '--bogus']]) expect(refused(runCli(args)), args.join(' ')).not.toMatch(/did you mean/);
  });
});
