/**
 * The repo stands alone: no tracked file names a path outside it or a path of the machine it
 * was written on, and the suite makes its temp folders only through its one helper (which
 * removes them). The searched-for strings are built, so this file does not match itself.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/world.js';

function trackedFiles(): string[] {
  const r = spawnSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' });
  expect(r.status, `git ls-files: ${r.stderr}`).toBe(0);
  return r.stdout.split('\0').filter(Boolean);
}

/** Tracked text files whose content contains `needle`, as "file:line". */
function mentions(needle: string, files = trackedFiles()): string[] {
  const hits: string[] = [];
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    if (text.includes('\0')) continue; // binary
    text.split('\n').forEach((line, i) => {
      if (line.includes(needle)) hits.push(`${file}:${i + 1}`);
    });
  }
  return hits;
}

/** A root no checkout is in: a path read from a file under it that leaves it, left. */
const NOWHERE = resolve('/', 'checkout-root-' + process.pid);

describe('the repo stands alone', () => {
  it('no tracked file names a relative path that climbs out of the checkout (a folder beside the clone, which GitHub does not have)', () => {
    // `../x` read from the file's own folder, and a document's also from the root (the folder
    // it is read from): either way it must stay inside the checkout.
    const climb = /(?<![\w.])(?:\.\.[/\\])+[\w.-]+/g;
    const hits: string[] = [];
    for (const file of trackedFiles()) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      if (text.includes('\0')) continue; // binary
      const bases = file.endsWith('.md') ? [dirname(file), '.'] : [dirname(file)];
      text.split('\n').forEach((line, i) => {
        for (const [path] of line.matchAll(climb)) {
          // Resolved under a root of no name: `../main/x` from a checkout called main climbs out too.
          const inside = bases.every((base) => {
            const r = relative(NOWHERE, resolve(NOWHERE, base, path));
            return !r.startsWith('..') && !isAbsolute(r);
          });
          if (!inside) hits.push(`${file}:${i + 1}: ${path}`);
        }
      });
    }
    expect(hits).toEqual([]);
  });

  it('no tracked file names an absolute path of this machine (the checkout, the home folder, the work folder, any folder under /home)', () => {
    const needles = [ROOT, `${homedir()}/`, `/${'work'}/`, `/${'home'}/`].filter((n) => n.length > 2);
    for (const needle of needles) expect(mentions(needle), needle).toEqual([]);
  });

  it('the tests make temp folders only through test/helpers/temp.ts, which removes them', () => {
    const own = ['test/helpers/temp.ts', 'test/global-setup.ts'];
    const tests = trackedFiles().filter((f) => f.startsWith('test/') && !own.includes(f));
    expect(mentions(['mk', 'dtemp'].join(''), tests)).toEqual([]);
  });
});
