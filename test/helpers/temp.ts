/**
 * What a test file makes and must not leave behind: temp folders and child processes. Every
 * temp folder is made here, under one prefix; every spawned process is registered here; both
 * go when the file ends (test/setup.ts), so a failing or forgetful test leaves nothing. The
 * run's global set-up (test/global-setup.ts) points TMPDIR at one folder per run and fails the
 * run if anything is left in it: temp files of spawned CLIs included.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const TEMP_PREFIX = 'workspace-mcp-test-';

const dirs = new Set<string>();
const procs = new Set<ChildProcess>();

/** A fresh empty folder, removed at the latest when the test file ends. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), TEMP_PREFIX));
  dirs.add(dir);
  return dir;
}

/** Remove one folder made by tempDir now. */
export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  dirs.delete(dir);
}

/** Have `proc` stopped at the latest when the test file ends. */
export function track<P extends ChildProcess>(proc: P): P {
  procs.add(proc);
  proc.once('exit', () => procs.delete(proc));
  return proc;
}

/**
 * Stop `proc` (SIGTERM, then SIGKILL after `graceMs`) and resolve once it has exited and its
 * output has been read to the end.
 */
export function stop(proc: ChildProcess, graceMs = 5000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const hard = setTimeout(() => proc.kill('SIGKILL'), graceMs);
    proc.once('close', () => {
      clearTimeout(hard);
      resolve();
    });
    proc.kill('SIGTERM');
  });
}

/** Stop every process and remove every folder this test file made (test/setup.ts runs it). */
export async function cleanUp(): Promise<void> {
  await Promise.all([...procs].map((p) => stop(p)));
  for (const dir of [...dirs]) removeTempDir(dir);
}
