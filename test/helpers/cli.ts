/** Running the built CLI as a user would: `node dist/cli/main.js ...`. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
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
