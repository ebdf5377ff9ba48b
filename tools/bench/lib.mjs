// Shared bench helpers: temp dirs, spawned servers, seeded databases, medians.
import { execFileSync, spawn } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI = join(ROOT, 'dist', 'cli', 'main.js');

const tempDirs = [];
function removeTempDirs() {
  for (const d of tempDirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/**
 * A temp folder removed when this process ends, however it ends short of SIGKILL: at exit, on
 * an uncaught error, and on Ctrl-C or SIGTERM, which would otherwise skip the 'exit' handlers.
 */
export function tempDir(prefix = 'workspace-mcp-bench-') {
  if (tempDirs.length === 0) {
    process.once('exit', removeTempDirs);
    for (const [signal, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ])
      process.once(signal, () => process.exit(code));
  }
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/** Servers still running when this process ends are stopped with it, not left orphaned. */
const servers = new Set();
process.once('exit', () => {
  for (const p of servers) p.kill('SIGKILL');
});

/**
 * Spawn a node script that prints its base URL on stdout; resolves {proc, baseUrl}.
 * `stderr`: 'inherit' (default) or 'ignore'; `env` is added to this process's environment;
 * `onSpawn(proc)` hears of the process at once (to kill it at the end even if it never announces).
 */
export function spawnServer(args, { stderr = 'inherit', env = {}, cwd, onSpawn } = {}) {
  const proc = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', stderr], env: { ...process.env, ...env } });
  servers.add(proc);
  proc.once('exit', () => servers.delete(proc));
  onSpawn?.(proc);
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /(http:\/\/\S+\/api\/v1)/.exec(out);
      if (m) resolve({ proc, baseUrl: m[1] });
    });
    proc.once('exit', (c) => reject(new Error(`${args[0]} exited ${c}`)));
  });
}

/**
 * CPU seconds of this process's finished children, their own children included (Linux's
 * cutime + cstime); undefined elsewhere. Unlike wall time it hardly moves with the machine's
 * load: the figure to compare an install or build against on a shared machine.
 */
export function childCpuSeconds() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields[0] is field 3, state
    return (Number(fields[13]) + Number(fields[14])) / 100; // cutime, cstime in ticks of 1/100 s
  } catch {
    return undefined;
  }
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

export function fmt(n, d = 1) {
  return Number(n).toFixed(d);
}

/** The small world the MCP benches call: owner 1 (`bench-key`), bot 10, contact 100, account 500. */
export const MCP_BENCH_FIXTURE = {
  owners: [{ id: 1, name: 'Bench', email: 'b@example.com', plan: 'pro', api_key: 'bench-key' }],
  projects: [{ uuid: '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10', owner_id: 1, name: 'P' }],
  bots: [{ id: 10, project_uuid: '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10', name: 'B' }],
  contacts: [{ id: 100, bot_id: 10, messenger: 'telegram', name: 'Ann', telegram_id: '1' }],
  accounts: [{ id: 500, contact_id: 100, currency: 'USD', amount: 1000 }],
};

/** Seed `fixture` into `dir/name` with the built CLI; returns the database path. */
export function seedDb(dir, name, fixture = MCP_BENCH_FIXTURE) {
  const db = join(dir, name);
  const file = join(dir, `${name}.fixture.json`);
  writeFileSync(file, JSON.stringify(fixture));
  execFileSync(process.execPath, [CLI, 'seed', file, '--db', db], { stdio: 'ignore' });
  return db;
}

export const BENCH_KEY = 'bench-key';
export const BENCH_PROJECT = '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10';

/**
 * The HTTP benches' world: owner 1 (`bench-key`), bot 10 with 1200 contacts (ids 1000…2199),
 * each with 3 tags and 2 variables (one of them utm_), and accounts 500 (USD, empty) and 501
 * (EUR, 10^13 minor units to debit from).
 */
export function httpFixture() {
  return {
    owners: [{ id: 1, name: 'Bench', email: 'bench@example.com', plan: 'pro', api_key: BENCH_KEY }],
    projects: [{ uuid: BENCH_PROJECT, owner_id: 1, name: 'Bench' }],
    bots: [{ id: 10, project_uuid: BENCH_PROJECT, name: 'Bench bot' }],
    contacts: Array.from({ length: 1200 }, (_, i) => ({
      id: 1000 + i,
      bot_id: 10,
      messenger: 'telegram',
      name: `Contact ${i}`,
      telegram_id: String(800000 + i),
      telegram_username: `user${i}`,
      phone: `+4477009${String(i).padStart(5, '0')}`,
      email: `c${i}@example.com`,
      tags: ['vip', 'newsletter', `cohort-${i % 12}`],
      variables: [
        { name: 'city', value: ['London', 'Leeds', 'York'][i % 3] },
        { name: 'utm_source', value: 'newsletter' },
      ],
    })),
    accounts: [
      { id: 500, contact_id: 1000, currency: 'USD', amount: 0 },
      { id: 501, contact_id: 1000, currency: 'EUR', amount: 10 ** 13 },
    ],
  };
}

/**
 * A JSON-RPC client over node:http with `agent` (keep-alive): `post(url, body, headers)` POSTs
 * one message and resolves { status, headers, message } (the answer, from JSON or the SSE
 * stream; none for a notification).
 */
export function rpcPoster(agent) {
  return (url, body, headers) =>
    new Promise((resolve, reject) => {
      const data = JSON.stringify(body);
      const req = request(
        url,
        {
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'content-length': Buffer.byteLength(data),
            ...headers,
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d) => (text += d));
          res.on('end', () => {
            let message;
            if (text && (res.headers['content-type'] ?? '').includes('text/event-stream')) {
              for (const line of text.split('\n')) if (line.startsWith('data: ')) message = JSON.parse(line.slice(6));
            } else if (text) message = JSON.parse(text);
            resolve({ status: res.statusCode, headers: res.headers, message });
          });
        },
      );
      req.once('error', reject);
      req.end(data);
    });
}

/** Every session of `list` calls (`call()` → { ms }) one call after another for `seconds`: calls/s, p50, p99 (ms). */
export async function loadSessions(list, seconds, rate = 0) {
  const lat = [];
  const until = performance.now() + seconds * 1000;
  const t0 = performance.now();
  // `rate`: the sessions together start at most that many calls a second, each at its own even pace.
  const every = rate > 0 ? (list.length / rate) * 1000 : 0;
  await Promise.all(
    list.map(async (s, i) => {
      let next = t0 + (every * i) / list.length;
      while (performance.now() < until) {
        if (every) {
          const wait = next - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          next += every;
          if (performance.now() >= until) break;
        }
        lat.push((await s.call()).ms);
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  return { cps: lat.length / secs, p50: lat[Math.floor(lat.length / 2)], p99: lat[Math.floor(lat.length * 0.99)] };
}

let nextRpcId = 0;

/**
 * A 2025-era session opened with `post` (rpcPoster) at `url` with `auth` (headers): { headers,
 * call() → { ms, text } of a getMe call } or { status, retryAfter } when initialize is refused.
 */
export async function openSession(post, url, auth) {
  const init = await post(
    url,
    {
      jsonrpc: '2.0',
      id: ++nextRpcId,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
    },
    auth,
  );
  if (init.status !== 200) return { status: init.status, retryAfter: init.headers['retry-after'] };
  const headers = { ...auth, 'mcp-session-id': init.headers['mcp-session-id'], 'mcp-protocol-version': '2025-11-25' };
  const note = await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  if (note.status !== 202) throw new Error(`notifications/initialized: ${note.status}`);
  return {
    headers,
    async call() {
      const t = performance.now();
      const r = await post(
        url,
        { jsonrpc: '2.0', id: ++nextRpcId, method: 'tools/call', params: { name: 'getMe', arguments: {} } },
        headers,
      );
      if (r.status !== 200 || !r.message?.result || r.message.result.isError)
        throw new Error(`getMe: ${r.status} ${JSON.stringify(r.message)}`);
      return { ms: performance.now() - t, text: r.message.result.content[0].text };
    },
  };
}

/** Ends session `s` (openSession) with DELETE. */
export function closeSession(agent, url, s) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'DELETE', agent, headers: s.headers }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.once('error', reject);
    req.end();
  });
}
