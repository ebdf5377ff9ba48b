/**
 * The docs show what the built CLI prints: docs/mcp-server.md's first-run banner has the built
 * CLI's lines, label for label, its first line word for word and each line's fixed words; and
 * docs/install.md names what the tarball holds (package.json `files`) and npm's install-scripts
 * warning for better-sqlite3.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { CLI, collect } from '../helpers/cli.js';
import { ROOT, tempDir } from '../helpers/world.js';
import { track } from '../helpers/temp.js';

const doc = (name: string) => readFileSync(join(ROOT, 'docs', name), 'utf8');

/** The first fenced block after `heading`. */
function blockAfter(text: string, heading: string): string[] {
  const from = text.indexOf(heading);
  expect(from, heading).toBeGreaterThan(-1);
  const m = /```[a-z]*\n([\s\S]*?)\n```/.exec(text.slice(from))!;
  return m[1]!.split('\n');
}

/** A banner line's label (`database`, `owner`, ...), or the whole first line. */
const label = (line: string) => (line.startsWith('  ') ? line.trim().split(/\s+/)[0] : line);

test("docs/mcp-server.md's banner is the built CLI's on a first run", async () => {
  const home = tempDir();
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: home, WORKSPACE_LOG_LEVEL: 'warn' };
  const child = track(spawn(process.execPath, [CLI], { env, stdio: ['pipe', 'pipe', 'pipe'] }));
  const err = collect(child.stderr!);
  await err.wait(/\n {2}connect .*\n/);
  child.stdin!.end();
  const printed = err
    .text()
    .split('\n')
    .filter((l) => l !== '');
  const shown = blockAfter(doc('mcp-server.md'), '## First run and the banner');
  expect(shown.map(label)).toEqual(printed.map(label));
  expect(shown[0]).toBe(printed[0]);
  // Each line's words other than paths, ids and the key are the CLI's.
  const words = (l: string) => l.split(/\s+/).filter((w) => !/[/…]|^[0-9a-f-]{36}$/.test(w) && w !== '');
  const printedWords = printed.map((l) => words(l.replaceAll(home, '…')).filter((w) => !/^[\w-]{40}$/.test(w)));
  shown.forEach((line, i) => expect(words(line), line).toEqual(printedWords[i]));
});

test('docs/install.md names what the tarball holds and the install-scripts warning', () => {
  const install = doc('install.md');
  const files = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { files: string[] }).files;
  for (const f of files.filter((x) => !x.startsWith('!'))) expect(install, f).toContain(f === 'dist' ? '`dist/`' : `\`${f}\``);
  expect(install).not.toMatch(/nothing else/);
  expect(install).toMatch(/npm warn install-scripts .*better-sqlite3/);
  expect(install).toMatch(/npm install-scripts approve better-sqlite3/);
});
