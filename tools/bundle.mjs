#!/usr/bin/env node
/**
 * Bundles the command (src/cli/main.ts and every module of ours it loads, its lazily loaded
 * parts as chunks of their own) into dist/cli/main.js beside dist/cli/bundle-*.js, over the
 * module tsc wrote there; packages stay imports from node_modules. Node 20 has no compile cache,
 * and loading some 160 small modules one by one cost a stdio server's first tool call about
 * 90 ms more than loading a few larger ones (docs/BENCHMARKS.md). The rest of dist (tsc's
 * output) stays as it is for the tools and the pool's worker thread. Run by `npm run build`;
 * `loadedFiles` is what test/cli/bundle.test.ts and check-install read of the result.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
/** Where the command's bundle is: main.js and its chunks. */
export const BUNDLE_DIR = join(ROOT, 'dist', 'cli');

/**
 * The files of ours `dir`/main.js loads, statically or on demand, and those they load: paths
 * relative to `dir` (one starting with ../ is outside it).
 */
export function loadedFiles(dir = BUNDLE_DIR) {
  const seen = new Set();
  for (const todo = ['main.js']; todo.length > 0;) {
    const f = todo.pop();
    if (seen.has(f)) continue;
    seen.add(f);
    const text = readFileSync(join(dir, f), 'utf8');
    for (const [, spec] of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}\/[^"']+)["']/g)) {
      todo.push(normalize(join(dirname(f), spec)));
    }
  }
  return seen;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { build } = await import('esbuild');
  // The last build's chunks: their names change with their contents.
  for (const f of readdirSync(BUNDLE_DIR)) if (f.startsWith('bundle-')) rmSync(join(BUNDLE_DIR, f));
  await build({
    entryPoints: [join(ROOT, 'src', 'cli', 'main.ts')],
    outdir: BUNDLE_DIR,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    chunkNames: 'bundle-[name]-[hash]',
    sourcemap: true,
    allowOverwrite: true,
    logLevel: 'warning',
  });
}
