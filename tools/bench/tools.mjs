/**
 * The tools only the benchmarks use (the load generator autocannon, the baseline servers
 * json-server and Prism) are no devDependencies, so `npm ci` stays lean: the first bench that
 * needs them installs these pinned versions into a cache folder outside the checkout
 * ($WORKSPACE_BENCH_TOOLS, default <system temp>/workspace-mcp-bench-tools) and later runs reuse it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** Pinned: the figures in docs/BENCHMARKS.md name these versions (Prism 5.14 is the newest that runs on Node 20). */
export const BENCH_TOOLS = { autocannon: '8.0.0', 'json-server': '0.17.4', '@stoplight/prism-cli': '5.14.2' };

// Fixed when first imported, before run.mjs points TMPDIR at its run's folder; its children
// (pg.mjs, profile.mjs) inherit the variable and so use the same folder.
process.env.WORKSPACE_BENCH_TOOLS ||= join(tmpdir(), 'workspace-mcp-bench-tools');
export const TOOLS_DIR = process.env.WORKSPACE_BENCH_TOOLS;

function installed(name) {
  try {
    return JSON.parse(readFileSync(join(TOOLS_DIR, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

/** `require` from the tools' folder, after installing them there if any is missing or another version. */
export function benchRequire() {
  const missing = Object.entries(BENCH_TOOLS).filter(([name, version]) => installed(name) !== version);
  if (missing.length > 0) {
    process.stderr.write(`bench: installing ${missing.map(([n, v]) => `${n}@${v}`).join(', ')} into ${TOOLS_DIR} (once)\n`);
    mkdirSync(TOOLS_DIR, { recursive: true });
    writeFileSync(join(TOOLS_DIR, 'package.json'), JSON.stringify({ private: true, dependencies: BENCH_TOOLS }, null, 2) + '\n');
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefix', TOOLS_DIR], {
      cwd: TOOLS_DIR,
      stdio: ['ignore', 2, 2],
      shell: process.platform === 'win32',
    });
  }
  return createRequire(join(TOOLS_DIR, 'package.json'));
}

/** Each tool's installed version, for the report ('not installed' before the first bench that needs them). */
export function benchToolVersions() {
  return Object.keys(BENCH_TOOLS)
    .map((name) => `${name} ${installed(name) ?? 'not installed'}`)
    .join(', ');
}

/** The path of a tool's command (its package.json `bin`), or undefined. */
export function benchBin(require, pkg, bin) {
  try {
    const file = require.resolve(`${pkg}/package.json`);
    const meta = JSON.parse(readFileSync(file, 'utf8'));
    const rel = typeof meta.bin === 'string' ? meta.bin : meta.bin?.[bin];
    return rel ? join(dirname(file), rel) : undefined;
  } catch {
    return undefined;
  }
}
