// getMe through the whole pipeline (rate limit off) beside a bare node:http server answering
// the same bytes, in the same run, alternating rounds; prints requests/s and the ratio.
// Usage: npm run build && node tools/bench/getme.mjs [rounds] [requests-per-round]
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, fmt, load, median, spawnServer, tempDir } from './lib.mjs';

const rounds = Number(process.argv[2] ?? 5);
const total = Number(process.argv[3] ?? 5000);
const dir = tempDir();
const db = join(dir, 'bench.db');
const fixture = join(dir, 'fixture.json');
writeFileSync(fixture, JSON.stringify({ owners: [{ id: 1, name: 'Bench', email: 'b@example.com', plan: 'pro', api_key: 'bench-key' }] }));
execFileSync(process.execPath, [CLI, 'seed', fixture, '--db', db], { stdio: 'ignore' });

const ours = await spawnServer([CLI, 'serve', '--db', db, '--port', '0', '--rate-limit', '0']);
const req = { method: 'GET', path: 'getMe', headers: { accept: 'application/json', authorization: 'Bearer bench-key' } };
const probe = await fetch(`${ours.baseUrl}/getMe`, { headers: req.headers });
const bytes = await probe.text();
const bare = await spawnServer([join(import.meta.dirname, 'bare-server.mjs'), bytes]);

const a = [];
const b = [];
const ratios = [];
for (let i = 0; i < rounds + 1; i++) {
  const x = await load(ours.baseUrl, { ...req, total });
  const y = await load(bare.baseUrl, { ...req, total });
  if (i === 0) continue; // warm-up
  a.push(x);
  b.push(y);
  ratios.push(x.rps / y.rps);
}
ours.proc.kill();
bare.proc.kill();
const m = (xs, k) => median(xs.map((x) => x[k]));
console.log(`getMe over HTTP, ${rounds} rounds x ${total} requests, 10 connections`);
console.log(`| server | req/s (median) | p50 ms | p99 ms |`);
console.log(`|---|---|---|---|`);
console.log(`| workspace-mcp serve (full pipeline) | ${fmt(m(a, 'rps'), 0)} | ${fmt(m(a, 'p50'), 2)} | ${fmt(m(a, 'p99'), 2)} |`);
console.log(`| bare node:http, same bytes | ${fmt(m(b, 'rps'), 0)} | ${fmt(m(b, 'p50'), 2)} | ${fmt(m(b, 'p99'), 2)} |`);
console.log(`ratio ours/bare (median of per-round ratios): ${fmt(median(ratios), 2)}`);
const fig = (xs) => ({ rps: m(xs, 'rps'), p50: m(xs, 'p50'), p99: m(xs, 'p99') });
console.log(`BENCH_JSON ${JSON.stringify({ bench: 'getme', rounds, total, connections: 10, ours: fig(a), bare: fig(b), ratio: median(ratios) })}`);
