/**
 * Running the built CLI as a user would: `node dist/cli/main.js ...`, once to completion or as
 * a server that announces its URL, and reading a stdio MCP server's JSON-RPC lines. Spawned
 * processes are stopped when the test file ends (test/helpers/temp.ts).
 */
import { spawn, spawnSync, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { Readable } from 'node:stream';
import { removeTempDir, tempDir, track } from './temp.js';
import { ROOT } from './world.js';
import { rawWithinBudget } from './budget.js';

export const CLI = join(ROOT, 'dist', 'cli', 'main.js');

/**
 * `process.env` without the WORKSPACE_* variables and DATABASE_URL, plus `extra`: a clean shell, so a variable
 * set where the tests run (a WORKSPACE_DB, a key) changes nothing.
 */
export function cliEnv(extra: Record<string, string> = {}): Record<string, string> {
  const e: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('WORKSPACE_') && k !== 'DATABASE_URL') e[k] = v;
  return { ...e, WORKSPACE_LOG_LEVEL: 'warn', ...extra };
}

/** Run the CLI to its end with `extra` variables in a clean environment. */
export function runCli(args: string[], extra: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: cliEnv(extra) });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
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

export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Run the built CLI to its end without blocking this process (an HTTP server in the test can
 * answer it). stdin is closed at once, so a server that did start stops at end of input.
 */
export function runCliAsync(
  args: string[],
  env: Record<string, string>,
  opts: { uid?: number; gid?: number; cwd?: string } = {},
): Promise<CliRun> {
  // As another user, from where that user can read the CLI.
  const copy = opts.uid !== undefined && !reachableByAll(ROOT) ? linkedCheckout() : undefined;
  const proc = track(
    spawn(process.execPath, [copy ? join(copy, 'dist', 'cli', 'main.js') : CLI, ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...opts,
    }),
  );
  if (copy) proc.once('close', () => removeTempDir(copy));
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    proc.once('error', reject);
    proc.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** Whether every user may pass every folder down to `dir` (a checkout in a private folder, as `mktemp -d` makes, is out of their reach). */
function reachableByAll(dir: string): boolean {
  for (let d = dir; ; d = dirname(d)) {
    if ((statSync(d).mode & 0o001) === 0) return false;
    if (dirname(d) === d) return true;
  }
}

/**
 * The built CLI and what it loads (`dist`, `node_modules`, `package.json`) in a temp folder any
 * user may pass: hard links where the file system allows (nothing copied), else copies.
 */
function linkedCheckout(): string {
  const dir = tempDir();
  chmodSync(dir, 0o755);
  const parts = ['dist', 'node_modules', 'package.json'].map((p) => join(ROOT, p));
  if (spawnSync('cp', ['-al', ...parts, dir]).status !== 0) {
    const r = spawnSync('cp', ['-a', ...parts, dir], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`could not copy the CLI where another user can run it: ${r.stderr}`);
  }
  return dir;
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

export interface Announced {
  proc: ChildProcess;
  url: string;
  /** Everything the process wrote to stderr so far. */
  stderr(): string;
  /** The first match of `re` in stderr, as soon as it is written. */
  waitForStderr(re: RegExp): Promise<RegExpExecArray>;
}

/**
 * Start the built CLI with `args` and resolve once its stdout announces a URL matching
 * `announce` (serve prints its base URL, `mcp --http` its /mcp URL).
 */
export function spawnAnnounced(args: string[], announce: RegExp, env: Record<string, string> = cliEnv()): Promise<Announced> {
  const proc = track(spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] }));
  const err = collect(proc.stderr!);
  const out = collect(proc.stdout!);
  return new Promise((resolve, reject) => {
    out.wait(announce).then((m) => resolve({ proc, url: m[1]!, stderr: err.text, waitForStderr: (re) => err.wait(re) }), reject);
    proc.once('exit', (code) => reject(new Error(`${args[0]} exited ${code}: ${err.text()}`)));
  });
}

export type Served = Announced & { baseUrl: string };

/** Start `serve` on an ephemeral port (with `extra` variables); resolves once it prints its base URL. */
export async function spawnServe(args: string[], extra: Record<string, string> = {}): Promise<Served> {
  const started = await spawnAnnounced(['serve', '--port', '0', ...args], /(http:\/\/\S+\/api\/v1)/, cliEnv(extra));
  return { ...started, baseUrl: started.url };
}

/** A stdio MCP server of the built CLI, spoken to in raw JSON-RPC lines. */
export interface RpcProcess {
  proc: ChildProcessWithoutNullStreams;
  send(message: object): void;
  /** The answer with this id, as soon as its line is complete. */
  answer(id: number): Promise<any>;
  /** Every complete stdout line so far, raw. */
  lines(): string[];
  stderr(): string;
}

export function spawnRpc(args: string[], env: Record<string, string> = cliEnv(), cli = CLI): RpcProcess {
  const proc = track(spawn(process.execPath, [cli, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] }));
  let out = '';
  let err = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
  // The last piece may be a line still arriving.
  const lines = () => out.split('\n').slice(0, -1);
  return {
    proc,
    send: (m) => proc.stdin.write(JSON.stringify(m) + '\n'),
    answer: (id) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const hit = lines()
            .map((l) => JSON.parse(l))
            .find((m) => m.id === id);
          if (!hit) return false;
          proc.stdout.off('data', check);
          proc.off('exit', gone);
          rawWithinBudget(hit.result);
          resolve(hit);
          return true;
        };
        const gone = () => reject(new Error(`exited before answering ${id}: ${err}`));
        if (!check()) {
          proc.stdout.on('data', check);
          proc.once('exit', gone);
        }
      }),
    lines,
    stderr: () => err,
  };
}

/** The initialize request every raw JSON-RPC session starts with. */
export const INITIALIZE = {
  jsonrpc: '2.0',
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
} as const;
