/**
 * One temp folder per test run: TMPDIR (and TMP, TEMP) point into it before the test workers
 * start, so every temp file of the run (the suite's own, and those of the CLIs it spawns) lands
 * there. At the end anything left in it fails the run, naming what was left; the folder is
 * removed either way, so even a crashed run leaves nothing in the system's temp folder.
 */
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { placePostgresBinaries } from './helpers/pg-binaries.js';

const VARS = ['TMPDIR', 'TMP', 'TEMP'] as const;

export default function setup(): () => void {
  // Each test project runs this; the first one makes the folder for the whole run.
  if (process.env.WORKSPACE_TEST_TMP) return () => {};
  const saved = VARS.map((k) => [k, process.env[k]] as const);
  const root = mkdtempSync(join(tmpdir(), 'workspace-mcp-test-run-'));
  // Passable by other users, as the system's temp folder is (the folders inside stay private):
  // a test may run the CLI as another user on a folder it opened up.
  chmodSync(root, 0o755);
  process.env.WORKSPACE_TEST_TMP = root;
  for (const k of VARS) process.env[k] = root;
  const unplace = placePostgresBinaries(root);
  return () => {
    unplace();
    const left = readdirSync(root);
    rmSync(root, { recursive: true, force: true });
    delete process.env.WORKSPACE_TEST_TMP;
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    if (left.length > 0) {
      // A throw here is only logged by vitest: set the exit status ourselves.
      process.stderr.write(`\nFAIL the tests left ${left.length} temp file(s) behind: ${left.join(', ')}\n`);
      process.exitCode = 1;
    }
  };
}
