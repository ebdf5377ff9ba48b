#!/usr/bin/env node
/**
 * Bundles the command (src/cli/main.ts and every module of ours it loads, its lazily loaded
 * parts as chunks of their own) into dist/cli/main.js beside dist/cli/bundle-*.js, over the
 * module tsc wrote there; packages stay imports from node_modules. Node 20 has no compile cache,
 * and loading some 160 small modules one by one cost a stdio server's first tool call about
 * 90 ms more than loading a few larger ones (docs/BENCHMARKS.md). The rest of dist (tsc's
 * output) stays as it is for the tools and the pool's worker thread. Run by `npm run build`.
 */
import { readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'dist', 'cli');

// The last build's chunks: their names change with their contents.
for (const f of readdirSync(OUT)) if (f.startsWith('bundle-')) rmSync(join(OUT, f));

await build({
  entryPoints: [join(ROOT, 'src', 'cli', 'main.ts')],
  outdir: OUT,
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
