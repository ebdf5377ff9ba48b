/**
 * The built command is one bundle of our modules (tools/bundle.mjs, run by `npm run build`):
 * dist/cli/main.js and the chunks it loads import nothing of ours but other chunks, so a process
 * loads a few files of ours instead of tsc's 160 (docs/BENCHMARKS.md, the stdio server's first
 * tool call). That it works is what every test of the CLI runs; this holds the shape.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';

const DIR = join(CLI, '..');

/** The relative specifiers a built module imports, statically or on demand. */
function relativeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}\/[^"']+)["']/g)].map((m) => m[1]!);
}

describe('the built command', () => {
  it('is dist/cli/main.js with its chunks, which import only one another', () => {
    const chunks = readdirSync(DIR).filter((f) => /^bundle-.*\.js$/.test(f));
    expect(chunks.length).toBeGreaterThan(0);
    const seen = new Set<string>();
    const todo = ['main.js'];
    while (todo.length > 0) {
      const f = todo.pop()!;
      if (seen.has(f)) continue;
      seen.add(f);
      for (const spec of relativeImports(join(DIR, f))) {
        expect(spec, `${f} imports ${spec}`).toMatch(/^\.\/bundle-[^/]+\.js$/);
        expect(existsSync(join(DIR, spec)), `${f} imports ${spec}, which is not there`).toBe(true);
        todo.push(spec.slice(2));
      }
    }
    // The lazily loaded parts are chunks of their own: main.js does not hold the store.
    expect(seen.size).toBeGreaterThan(5);
    expect(readFileSync(CLI, 'utf8')).not.toMatch(/better-sqlite3/);
  });
});
