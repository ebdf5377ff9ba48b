/**
 * `workspace-mcp demo`: the shipped demo fixture in a database of the data folder (or --db),
 * the same again on a second run, and configs that start the MCP server on it: the JSON for
 * Claude Desktop and Cursor, the command for Claude Code. And the fixture ships in the package:
 * the files `npm pack` would pack, alone in a folder, run the demo.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI, cliEnv, runCliAsync } from '../helpers/cli.js';
import { ROOT, tempDir } from '../helpers/world.js';
import { withinBudget } from '../helpers/budget.js';

/** A home of its own, so that the default data folder is inside the test's temp dir. */
function homeEnv(home: string): Record<string, string> {
  return cliEnv({ HOME: home, USERPROFILE: home, XDG_DATA_HOME: join(home, 'xdg'), APPDATA: join(home, 'appdata') });
}

/** The data folder under `home`, as the CLI makes it on this platform. */
function dataDir(home: string): string {
  if (process.platform === 'win32') return join(home, 'appdata', 'workspace-mcp');
  if (process.platform === 'darwin') return join(home, 'Library', 'Application Support', 'workspace-mcp');
  return join(home, 'xdg', 'workspace-mcp');
}

interface Entry {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/** The printed configs: the JSON block and Claude Code's line. */
function configs(stdout: string): { entry: Entry; claude: string } {
  const block = /^\{\n[\s\S]*?\n\}$/m.exec(stdout)?.[0];
  expect(block, stdout).toBeTruthy();
  const claude = /^ {2}(claude mcp add .*)$/m.exec(stdout)?.[1];
  expect(claude, stdout).toBeTruthy();
  return { entry: (JSON.parse(block!) as { mcpServers: { workspace: Entry } }).mcpServers.workspace, claude: claude! };
}

function counts(db: string): { owners: number; contacts: number } {
  const conn = new Database(db, { readonly: true });
  try {
    return conn.prepare('SELECT (SELECT count(*) FROM owners) AS owners, (SELECT count(*) FROM contacts) AS contacts').get() as {
      owners: number;
      contacts: number;
    };
  } finally {
    conn.close();
  }
}

describe('workspace-mcp demo', () => {
  it('seeds demo.db in the data folder, again changes nothing, and prints configs that start the server on it', async () => {
    const home = tempDir();
    const db = join(dataDir(home), 'demo.db');
    const first = await runCliAsync(['demo'], homeEnv(home));
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout.split('\n')[0]).toBe(
      `The demo data is in ${db} (3 owners, 3 projects, 1 member, 5 bots, 50 contacts, 5 accounts, 1 deprecation).`,
    );
    expect(counts(db)).toEqual({ owners: 3, contacts: 50 });
    const { entry, claude } = configs(first.stdout);
    // Absolute paths: a client starts it with no shell and no PATH of yours.
    expect(entry).toEqual({ command: process.execPath, args: [realpathSync(CLI), '--db', db] });
    expect(claude).toBe(`claude mcp add --transport stdio workspace -- ${[entry.command, ...entry.args].join(' ')}`);
    // Where each goes.
    expect(first.stdout).toMatch(/Claude Desktop: add this to claude_desktop_config\.json/);
    expect(first.stdout).toMatch(/Claude Code: run/);
    expect(first.stdout).toMatch(/Cursor: the same JSON as for Claude Desktop, in \.cursor\/mcp\.json/);

    const second = await runCliAsync(['demo'], homeEnv(home));
    expect(second.status, second.stderr).toBe(0);
    expect(second.stdout.split('\n')[0]).toBe(`The demo data is already in ${db}: nothing changed.`);
    expect(counts(db)).toEqual({ owners: 3, contacts: 50 });
    expect(configs(second.stdout).entry).toEqual(entry);

    // The printed config starts the server on the demo data, as its first owner; not a new, empty database.
    const client = withinBudget(new Client({ name: 't', version: '1' }));
    await client.connect(new StdioClientTransport({ command: entry.command, args: entry.args, env: homeEnv(home), stderr: 'ignore' }));
    try {
      const ws = (await client.callTool({ name: 'getWorkspace', arguments: {} })).structuredContent as any;
      expect(ws.owner).toMatchObject({ id: 1, name: 'Dana Brook' });
      expect(ws.bots.length).toBe(4);
      expect(ws.warnings).toBeUndefined();
    } finally {
      await client.close();
    }
  });

  it('--db names the database; a bad one is one line, exit 2', async () => {
    const dir = tempDir();
    const db = join(dir, 'mine.db');
    const r = await runCliAsync(['demo', '--db', db], cliEnv());
    expect(r.status, r.stderr).toBe(0);
    expect(configs(r.stdout).entry.args.slice(-2)).toEqual(['--db', db]);
    expect(counts(db).owners).toBe(3);
    const bad = await runCliAsync(['demo', '--db', join(dir, 'no-such-folder', 'x.db')], cliEnv());
    expect(bad.status).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(join(dir, 'no-such-folder'))).toBe(false);
  });

  it('the package ships the demo fixture: the files npm would pack, alone in a folder, run the demo', async () => {
    const packed = spawnSync('npm', ['pack', '--dry-run', '--ignore-scripts', '--json'], {
      cwd: ROOT,
      encoding: 'utf8',
      shell: process.platform === 'win32',
    });
    expect(packed.status, packed.stderr).toBe(0);
    const files = (JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map(
      (f) => f.path,
    );
    expect(files).toContain('fixtures/demo.json');
    // The package as installed: only its packed files, and the dependencies beside it.
    const pkg = join(tempDir(), 'workspace-mcp');
    for (const f of files) {
      mkdirSync(dirname(join(pkg, f)), { recursive: true });
      cpSync(join(ROOT, f), join(pkg, f));
    }
    symlinkSync(join(ROOT, 'node_modules'), join(pkg, 'node_modules'), 'junction');
    const db = join(tempDir(), 'packed.db');
    const r = spawnSync(process.execPath, [join(pkg, 'dist', 'cli', 'main.js'), 'demo', '--db', db], { encoding: 'utf8', env: cliEnv() });
    expect(r.status, r.stderr).toBe(0);
    expect(counts(db).owners).toBe(3);
    expect(configs(r.stdout).entry.args[0]).toBe(realpathSync(join(pkg, 'dist', 'cli', 'main.js')));
  });
});
