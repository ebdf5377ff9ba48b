/**
 * Quiet traps of the command line, over the built CLI as a process: a mistyped --db that makes
 * a new, empty database is said where the model and the person look; the banner's default bot
 * is getWorkspace's; an impossible --db path is one line and exit 2; a server bound to every
 * interface prints addresses a client reaches; the first run says how to get a key again; a
 * --bot that is no bot lists the bots; `npm pack`'s tarball is ignored by git.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI, cliEnv, collect, runCli, runCliAsync, spawnAnnounced } from '../helpers/cli.js';
import { callApi } from '../helpers/http.js';
import { stop } from '../helpers/temp.js';
import { DEMO_FIXTURE, ROOT, tempDir } from '../helpers/world.js';
import { withinBudget } from '../helpers/budget.js';

/** The banner's rows by label. */
function rows(banner: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of banner.matchAll(/^ {2}(\S+(?: key)?) +(.*)$/gm)) out[m[1]!] = m[2]!;
  return out;
}

/** A stdio MCP session of the built CLI, and its banner once printed. */
async function session(args: string[], env = cliEnv()) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, ...args], env, stderr: 'pipe' });
  const err = collect(transport.stderr as Readable);
  const client = withinBudget(new Client({ name: 't', version: '1' }));
  await client.connect(transport);
  await err.wait(/\n {2}connect .*\n/);
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })).structuredContent as any;
  return { client, banner: rows(err.text()), call };
}

/** A database seeded with the demo fixture. */
function demoDb(): string {
  const db = join(tempDir(), 'demo.db');
  const r = runCli(['seed', DEMO_FIXTURE, '--db', db]);
  expect(r.status, r.stderr).toBe(0);
  return db;
}

describe('a database the start made empty (a mistyped --db looks like a first run)', () => {
  it('is said in getWorkspace (each time), in the first other tool result, and on stderr', async () => {
    const db = join(tempDir(), 'typo.db');
    const { client, banner, call } = await session(['--db', db]);
    const note = `The database ${db} was created empty when this server started (a default owner, project and bot only): if you meant an existing database, check --db.`;
    try {
      expect(banner.database).toBe(`${db} (new, empty: if you meant an existing database, check --db)`);
      expect((await call('getMe')).warnings).toEqual([note]);
      // Once for the other tools: not paid again in every result.
      expect((await call('getMe')).warnings).toBeUndefined();
      for (let i = 0; i < 2; i++) expect((await call('getWorkspace')).warnings).toEqual([note]);
    } finally {
      await client.close();
    }
    // The next start opened it, made nothing: nothing to say.
    const again = await session(['--db', db]);
    try {
      expect(again.banner.database).toBe(db);
      expect((await again.call('getWorkspace')).warnings).toBeUndefined();
      expect((await again.call('getMe')).warnings).toBeUndefined();
    } finally {
      await again.client.close();
    }
  });

  it('names the setting to check: WORKSPACE_DB; and a database seed made is no mistake', async () => {
    const db = join(tempDir(), 'env.db');
    const viaEnv = await session([], cliEnv({ WORKSPACE_DB: db }));
    try {
      expect(viaEnv.banner.database).toBe(`${db} (new, empty: if you meant an existing database, check WORKSPACE_DB)`);
      expect((await viaEnv.call('getWorkspace')).warnings?.[0]).toMatch(
        /created empty when this server started .*: if you meant an existing database, check WORKSPACE_DB\.$/,
      );
    } finally {
      await viaEnv.client.close();
    }
    const seeded = await session(['--db', demoDb()]);
    try {
      expect((await seeded.call('getWorkspace')).warnings).toBeUndefined();
    } finally {
      await seeded.client.close();
    }
  });
});

describe("the banner's default bot is the one getWorkspace answers", () => {
  it('several bots: none; --bot: that one; one bot: that one', async () => {
    const demo = demoDb();
    for (const [args, said, answered] of [
      [['--db', demo], 'no default bot (bots 11, 12, 13, 14: --bot picks one)', null],
      [['--db', demo, '--bot', '12'], 'default bot 12', 12],
      [['--db', join(tempDir(), 'one.db')], 'default bot 1', 1],
    ] as const) {
      const { client, banner, call } = await session([...args]);
      try {
        expect(banner.owner!.split(' · ').at(-1)).toBe(said);
        expect((await call('getWorkspace')).default_bot_id).toBe(answered);
      } finally {
        await client.close();
      }
    }
  });
});

describe('bad --db and --bot: one line, exit 2, nothing made', () => {
  it('a path the system refuses (/proc/…), for every command that opens a database', async () => {
    if (process.platform !== 'linux') return;
    for (const args of [
      ['--db', '/proc/x.db'],
      ['serve', '--db', '/proc/x.db'],
      ['seed', DEMO_FIXTURE, '--db', '/proc/x.db'],
      ['demo', '--db', '/proc/x.db'],
    ]) {
      const r = await runCliAsync(args, cliEnv());
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stdout).toBe('');
      const lines = r.stderr.split('\n').filter(Boolean);
      expect(lines, r.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(/^workspace-mcp: .*\/proc\/x\.db.*: give --db a file /);
    }
  });

  it('a --bot that is no bot of the owner lists the ones that are; on a new database none is left behind', async () => {
    const r = await runCliAsync(['--db', demoDb(), '--bot', '99'], cliEnv());
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      'workspace-mcp: --bot 99 is not a bot of owner 1: give one of its bots: 11 (Coffee bot (Telegram)), 12 (Coffee bot (MAX)), 13 (School bot (VK)), 14 (School bot (Viber))\n',
    );
    const dir = tempDir();
    const fresh = await runCliAsync(['--db', join(dir, 'new.db'), '--bot', '99'], cliEnv());
    expect(fresh.status).toBe(2);
    expect(fresh.stderr).toMatch(/--bot 99 is not a bot of owner 1: give one of its bots: 1 \(Default bot\)/);
    expect(readdirSync(dir)).toEqual([]);
  });
});

/** The addresses a server bound to every IPv4 interface is reached at. */
function reachable(): string[] {
  const own = Object.values(networkInterfaces())
    .flat()
    .filter((a) => a && !a.internal && a.family === 'IPv4')
    .map((a) => a!.address);
  return ['127.0.0.1', ...new Set(own)];
}

describe('--host 0.0.0.0 prints addresses a client reaches', () => {
  it('serve: its base URL at 127.0.0.1 on stdout, every reachable one in the banner, none at 0.0.0.0', async () => {
    const s = await spawnAnnounced(
      ['serve', '--db', join(tempDir(), 'any.db'), '--port', '0', '--host', '0.0.0.0'],
      /(http:\/\/\S+\/api\/v1)\n/,
      cliEnv(),
    );
    try {
      const key = (await s.waitForStderr(/API key\s+(\S+)/))[1]!;
      const port = new URL(s.url).port;
      expect(s.url).toBe(`http://127.0.0.1:${port}/api/v1`);
      const ready = s.stderr().split('\n')[0]!;
      for (const host of reachable()) expect(ready).toContain(`http://${host}:${port}/api/v1`);
      expect(s.stderr()).not.toContain('0.0.0.0');
      expect((await callApi(s.url, 'getMe', {}, { key, verb: 'GET' })).status).toBe(200);
    } finally {
      await stop(s.proc);
    }
  });

  it('mcp --http: the same', async () => {
    const s = await spawnAnnounced(
      ['--db', join(tempDir(), 'any.db'), '--http', '--port', '0', '--host', '0.0.0.0'],
      /(http:\/\/\S+\/mcp)\n/,
      cliEnv(),
    );
    try {
      const port = new URL(s.url).port;
      expect(s.url).toBe(`http://127.0.0.1:${port}/mcp`);
      await s.waitForStderr(/\n {2}connect .*\n/);
      for (const host of reachable()) expect(s.stderr().split('\n')[0]).toContain(`http://${host}:${port}/mcp`);
      expect(rows(s.stderr()).connect).toMatch(
        new RegExp(`^claude mcp add --transport http workspace http://127\\.0\\.0\\.1:${port}/mcp --header`),
      );
      expect(JSON.parse(rows(s.stderr()).config!).mcpServers.workspace.url).toBe(s.url);
      expect(s.stderr()).not.toContain('0.0.0.0');
    } finally {
      await stop(s.proc);
    }
  });
});

describe('the first run', () => {
  it('says how to get a key again, and that command works', async () => {
    const db = join(tempDir(), 'first.db');
    const { client, banner } = await session(['--db', db]);
    await client.close();
    const again = /· to make a new one later: workspace-mcp (admin regenerate-key --owner 1 --db (\S+))$/.exec(banner['API key']!);
    expect(again?.[2], banner['API key']).toBe(db);
    const r = runCli(again![1]!.split(' '));
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^\S{20,}\n$/);
  });
});

describe('npm pack', () => {
  it('leaves no tarball for git to pick up: *.tgz is ignored (check-install packs into a temp folder)', () => {
    for (const tarball of ['workspace-mcp-0.1.0.tgz', 'sub/other-1.2.3.tgz'])
      expect(spawnSync('git', ['check-ignore', '-q', tarball], { cwd: ROOT }).status, tarball).toBe(0);
  });
});
