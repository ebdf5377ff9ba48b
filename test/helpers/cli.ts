/** Running the built CLI as a user would: `node dist/cli/main.js ...`. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Readable } from 'node:stream';
import { ROOT } from './world.js';

export const CLI = join(ROOT, 'dist', 'cli', 'main.js');

export function runCli(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Start the built CLI with `args` and resolve once its stdout announces a URL matching
 * `announce` (serve prints its base URL, `mcp --http` its /mcp URL).
 */
export function spawnAnnounced(
  args: string[],
  announce: RegExp,
  env: Record<string, string | undefined> = { ...process.env },
): Promise<{ proc: ChildProcess; url: string; stderr: () => string }> {
  const proc = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = announce.exec(out);
      if (m) resolve({ proc, url: m[1]!, stderr: () => err });
    });
    proc.once('exit', (code) => reject(new Error(`${args[0]} exited ${code}: ${err}`)));
  });
}

/** Start `serve` on an ephemeral port; resolves once it prints its base URL. */
export async function spawnServe(args: string[], env: Record<string, string> = {}): Promise<{ proc: ChildProcess; baseUrl: string; stderr: () => string }> {
  const { proc, url, stderr } = await spawnAnnounced(['serve', '--port', '0', ...args], /(http:\/\/\S+\/api\/v1)/, { ...process.env, ...env });
  return { proc, baseUrl: url, stderr };
}

/** This process's environment without any WORKSPACE_* variable, plus `extra`. */
export function cliEnv(extra: Record<string, string> = {}): Record<string, string> {
  const e: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('WORKSPACE_')) e[k] = v;
  return { ...e, WORKSPACE_LOG_LEVEL: 'warn', ...extra };
}

export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Run the built CLI to its end without blocking this process (an HTTP server in the test can
 * answer it). stdin is closed at once, so a server that did start stops at end of input.
 */
export function runCliAsync(args: string[], env: Record<string, string>, opts: { uid?: number; gid?: number; cwd?: string } = {}): Promise<CliRun> {
  const proc = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    proc.once('error', reject);
    proc.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/**
 * Every file under `dir` with its size, mode and content hash: equal snapshots mean nothing
 * was created or changed. SQLite's `-shm` (a shared-memory index readers write into) is named
 * but its content is not compared.
 */
export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p);
      const key = relative(dir, p);
      if (st.isDirectory()) {
        out[`${key}/`] = (st.mode & 0o777).toString(8);
        walk(p);
      } else {
        const hash = p.endsWith('-shm') ? '' : createHash('sha256').update(readFileSync(p)).digest('hex');
        out[key] = `${(st.mode & 0o777).toString(8)} ${hash}`;
      }
    }
  };
  walk(dir);
  return out;
}

/** What a stream has said so far, and a wait for a pattern in it (on each chunk, no polling). */
export function collect(stream: Readable): { text: () => string; wait: (re: RegExp, ms?: number) => Promise<RegExpExecArray> } {
  let text = '';
  stream.on('data', (d: Buffer) => (text += d.toString()));
  return {
    text: () => text,
    wait: (re, ms = 15_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const m = re.exec(text);
          if (!m) return;
          stream.off('data', check);
          clearTimeout(timer);
          resolve(m);
        };
        const timer = setTimeout(() => {
          stream.off('data', check);
          reject(new Error(`timed out waiting for ${re}; got: ${text}`));
        }, ms);
        stream.on('data', check);
        check();
      }),
  };
}
