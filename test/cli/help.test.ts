/**
 * `--version` and `--help` of the built CLI. The help is held to what the program really does:
 * each command's flags are read from its own parser (the flags its "unknown option" error says
 * it takes), and the environment variables from the source (every `process.env.X` and every
 * WORKSPACE_… name in src/), so that a flag or variable added later without its help fails here.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { ROOT } from '../helpers/world.js';

/** How to reach each command's flag parser (admin parses after its sub-command). */
const COMMANDS: Record<string, string[]> = { mcp: ['mcp'], demo: ['demo'], serve: ['serve'], seed: ['seed'], admin: ['admin', 'audit'] };

const asked = new Map<string, string[]>();

/** The flags a command's parser takes, as its refusal of an unknown one lists them. */
function parserFlags(prefix: string[]): string[] {
  const known = asked.get(prefix.join(' '));
  if (known) return known;
  const r = runCli([...prefix, '--no-such-flag']);
  expect(r.status, r.stderr).toBe(2);
  const list = /this command takes (.*) \(workspace-mcp --help lists them\)/.exec(r.stderr)?.[1];
  expect(list, r.stderr).toBeTruthy();
  const flags = list!.split(', ').sort();
  asked.set(prefix.join(' '), flags);
  return flags;
}

/** The flags a help text names at the start of a line (its flag table), without --help. */
function helpFlags(text: string): string[] {
  return [...text.matchAll(/^ {2}(--[a-z][a-z-]*)/gm)]
    .map((m) => m[1]!)
    .filter((f) => f !== '--help')
    .sort();
}

/** Every environment variable the source reads or names. */
function sourceVariables(): string[] {
  const found = new Set<string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts')) {
        const text = readFileSync(p, 'utf8');
        for (const m of text.matchAll(/process\.env\.([A-Za-z_][A-Za-z0-9_]*)|process\.env\[['"]([^'"]+)['"]\]/g)) found.add(m[1] ?? m[2]!);
        // Names read through a table (pg-env.ts) or said in messages: as strings.
        for (const m of text.matchAll(/['"`$]((?:WORKSPACE|DATABASE)_[A-Z0-9_]*[A-Z0-9])\b/g)) found.add(m[1]!);
      }
    }
  };
  walk(join(ROOT, 'src'));
  return [...found].sort();
}

describe('--version and --help', () => {
  it('--version prints the package version', () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const arg of ['--version', '-v', 'version']) {
      const r = runCli([arg]);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toBe(`${version}\n`);
    }
  });

  it("each command's --help names exactly the flags its parser takes, exit 0, on stdout", () => {
    for (const [name, prefix] of Object.entries(COMMANDS)) {
      const takes = parserFlags(prefix);
      const ways = [
        [name, '--help'],
        ['help', name],
        ...(prefix.length > 1 ? [[...prefix, '--help']] : []),
        ...(name === 'serve' ? [[name, '-h']] : []),
      ];
      for (const args of ways) {
        const r = runCli(args);
        expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(0);
        expect(r.stderr).toBe('');
        expect(r.stdout.split('\n')[0]).toMatch(new RegExp(`^usage: workspace-mcp (\\[mcp\\]|${name}) `));
        expect(helpFlags(r.stdout), args.join(' ')).toEqual(takes);
      }
    }
    // The default command's help, after its own flags too.
    const after = runCli(['--db', 'x.db', '--help']);
    expect(after.status).toBe(0);
    expect(helpFlags(after.stdout)).toEqual(parserFlags(['mcp']));
  });

  it('--help names every command with every flag its parser takes, and every environment variable the program reads', () => {
    const r = runCli(['--help']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const sections = r.stdout.split('\n\n');
    for (const [name, prefix] of Object.entries(COMMANDS)) {
      const section = sections.find((s) => s.startsWith(`${name}: `));
      expect(section, name).toBeTruthy();
      expect(helpFlags(section!), name).toEqual(parserFlags(prefix));
    }
    const names = (title: string) =>
      [...sections.find((s) => s.startsWith(title))!.matchAll(/^ {2}([A-Z][A-Z0-9_]*) /gm)].map((m) => m[1]!);
    // The user's variables, and apart from them the knobs for measuring the server.
    const env = names('environment:');
    const tuning = names('tuning ');
    expect(tuning).toEqual(['WORKSPACE_JIT']);
    expect(env).not.toContain('WORKSPACE_JIT');
    const listed = [...env, ...tuning];
    const read = sourceVariables();
    // The scan finds what it must (a scan that found nothing would pass anything).
    expect(read).toEqual(
      expect.arrayContaining(['WORKSPACE_DB', 'DATABASE_URL', 'WORKSPACE_PG_POOL', 'WORKSPACE_LOG_LEVEL', 'XDG_DATA_HOME', 'APPDATA']),
    );
    expect(read.filter((v) => !listed.includes(v))).toEqual([]);
    expect(listed.filter((v) => !read.includes(v))).toEqual([]);
  });

  it('an error that points to --help is answered by it: --help lists the flag the error names', () => {
    const r = runCli(['serve', '--remote', 'x']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/workspace-mcp --help lists them/);
    expect(runCli(['--help']).stdout).toMatch(/^ {2}--remote BASE_URL /m);
  });
});
