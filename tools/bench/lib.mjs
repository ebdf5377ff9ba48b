// Shared bench helpers: spawn servers, drive fixed-concurrency HTTP load with undici, summarize.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI = join(ROOT, 'dist', 'cli', 'main.js');

export function tempDir() {
  return mkdtempSync(join(tmpdir(), 'workspace-mcp-bench-'));
}

/** Spawn a node script that prints its base URL on stdout; resolves {proc, baseUrl}. */
export function spawnServer(args) {
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /(http:\/\/\S+\/api\/v1)/.exec(out);
      if (m) resolve({ proc, baseUrl: m[1] });
    });
    proc.once('exit', (c) => reject(new Error(`server exited ${c}`)));
  });
}

/** Send `total` requests with `concurrency` in flight; returns {rps, p50, p99} (ms). */
export async function load(baseUrl, { method, path, headers = {}, body, total = 5000, concurrency = 10 }) {
  const url = new URL(baseUrl);
  const pool = new Pool(url.origin, { connections: concurrency, pipelining: 1 });
  const fullPath = `${url.pathname}/${path}`;
  const lat = [];
  let sent = 0;
  const worker = async () => {
    while (sent < total) {
      sent++;
      const t0 = process.hrtime.bigint();
      const res = await pool.request({ method, path: fullPath, headers, body });
      await res.body.text();
      if (res.statusCode >= 300) throw new Error(`status ${res.statusCode} on ${path}`);
      lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  };
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  await pool.close();
  lat.sort((a, b) => a - b);
  return { rps: total / secs, p50: lat[Math.floor(lat.length * 0.5)], p99: lat[Math.floor(lat.length * 0.99)] };
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

export function fmt(n, d = 1) {
  return Number(n).toFixed(d);
}
