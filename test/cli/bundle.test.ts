/**
 * The built command is one bundle of our modules (tools/bundle.mjs, run by `npm run build`):
 * dist/cli/main.js and the chunks it loads import nothing of ours but other chunks, so a process
 * loads a few files of ours instead of tsc's 160 (docs/BENCHMARKS.md, the stdio server's first
 * tool call). That it works is what every test of the CLI runs; this holds the shape.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUNDLE_DIR, loadedFiles } from '../../tools/bundle.mjs';

describe('the built command', () => {
  it('is dist/cli/main.js with its chunks, which import only one another', () => {
    const loaded = [...loadedFiles()];
    for (const f of loaded) {
      expect(f, `main.js loads ${f}`).toMatch(/^(main|bundle-[^/]+)\.js$/);
      expect(existsSync(join(BUNDLE_DIR, f)), `main.js loads ${f}, which is not there`).toBe(true);
    }
    // The lazily loaded parts are chunks of their own: main.js does not hold the store.
    expect(loaded.length).toBeGreaterThan(5);
    expect(readFileSync(join(BUNDLE_DIR, 'main.js'), 'utf8')).not.toMatch(/better-sqlite3/);
  });
});
