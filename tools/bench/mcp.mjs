// MCP over stdio: tool calls per second with p50/p99 (a 2025-11-25 client), and cold start
// (spawn → the answer to `initialize`, and to a 2026-07-28 client's `server/discover` probe), for
// the built CLI (local backend, rate limit off) calling getMe, beside a bare SDK (v2) server with
// one tool answering the same JSON (mcp-bare-server.mjs), in the same run, alternating rounds
// after a warm-up; medians shown. Then short blocks, as real clients call: both servers kept
// running, one client session each, blocks of `block` calls taking turns between them with a
// pause of `pause` ms before each block (the server that waits is idle all that time).
// Usage: npm run build && node tools/bench/mcp.mjs [rounds=5] [calls-per-round=2000] [cold-starts=10]
//   [blocks=20] [block=125] [pause-ms=1000]
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI, fmt, median, seedDb, tempDir } from './lib.mjs';

const rounds = Number(process.argv[2] ?? 5);
const calls = Number(process.argv[3] ?? 2000);
const colds = Number(process.argv[4] ?? 10);
const blocks = Number(process.argv[5] ?? 20);
const block = Number(process.argv[6] ?? 125);
const pause = Number(process.argv[7] ?? 1000);
const dir = tempDir();
const db = seedDb(dir, 'bench.db');
const baseEnv = { ...process.env, WORKSPACE_API_KEY: 'bench-key', WORKSPACE_LOG_LEVEL: 'warn' };

const SERVERS = {
  ours: { args: [CLI, 'mcp', '--db', db, '--rate-limit', '0'], tool: 'getMe', arguments: {}, env: baseEnv },
  bare: { args: [join(import.meta.dirname, 'mcp-bare-server.mjs')], tool: 'getMe', arguments: {}, env: baseEnv },
};

/** A connected SDK client of a fresh server process, and the server's pid. */
async function connect(s) {
  const client = new Client({ name: 'bench', version: '1' });
  const transport = new StdioClientTransport({ command: process.execPath, args: s.args, env: s.env, stderr: 'ignore' });
  await client.connect(transport);
  return { client, pid: transport.pid };
}

/**
 * The CPU time the server's main thread has run so far, in µs (the kernel's run time of the
 * thread, /proc/PID/schedstat: it counts no time spent waiting for a core, so it hardly moves
 * with the machine's load); undefined off Linux.
 */
function threadCpuUs(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1000;
  } catch {
    return undefined;
  }
}

/**
 * `n` sequential tool calls on a connected session: calls/s, every latency (ms, in order), the
 * server's main-thread CPU of every call (µs, in order; empty off Linux), the last result's text.
 */
async function timedCalls({ client, pid }, s, n) {
  const lat = [];
  const cpu = [];
  let text;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const c = threadCpuUs(pid);
    const t = process.hrtime.bigint();
    const r = await client.callTool({ name: s.tool, arguments: s.arguments });
    if (r.isError) throw new Error(`${s.tool}: ${r.content[0].text}`);
    lat.push(Number(process.hrtime.bigint() - t) / 1e6);
    if (c !== undefined) cpu.push(threadCpuUs(pid) - c);
    text = r.content[0].text;
  }
  return { cps: n / (Number(process.hrtime.bigint() - t0) / 1e9), lat, cpu, text };
}

const pct = (sorted, p) => sorted[Math.floor(sorted.length * p)];
const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : undefined);

/** Sequential tool calls of a fresh server through the SDK client: calls/s, p50, p99 (ms); the last result's text. */
async function callRound(s, n = calls) {
  const session = await connect(s);
  const { cps, lat, cpu, text } = await timedCalls(session, s, n);
  await session.client.close();
  lat.sort((a, b) => a - b);
  return { cps, p50: pct(lat, 0.5), p99: pct(lat, 0.99), cpu: mean(cpu), text };
}

// The bare server answers exactly what ours answers.
SERVERS.bare.env = { ...baseEnv, BARE_TOOL_TEXT: (await callRound(SERVERS.ours, 1)).text };
if ((await callRound(SERVERS.bare, 1)).text !== SERVERS.bare.env.BARE_TOOL_TEXT) throw new Error('the bare server answers other text');

const OPENINGS = {
  initialize: {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'b', version: '1' } },
  },
  discover: {
    jsonrpc: '2.0',
    id: 1,
    method: 'server/discover',
    params: {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'b', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  },
};

const LIST_TOOLS = [
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 2, method: 'tools/list' },
];

/**
 * Spawn → the answer to the opening message on stdout (raw JSON-RPC, no client library in the
 * way), ms. `tools`: initialize, then, as soon as its answer is read (`pauseMs` later, if given),
 * notifications/initialized and tools/list, as a client does before it shows any tools: the
 * time to the tools/list answer from the spawn, or from sending it when there is a pause.
 */
function coldStart(s, opening, pauseMs) {
  return new Promise((resolve, reject) => {
    let t0 = process.hrtime.bigint();
    const p = spawn(process.execPath, s.args, { env: s.env, stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    let asked = false;
    const done = () => {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      p.kill();
      resolve(ms);
    };
    p.stdout.on('data', (d) => {
      out += d;
      if (opening !== 'tools') {
        if (out.includes('"id":1')) done();
        return;
      }
      if (out.includes('"id":2')) return done();
      if (asked || !out.includes('"id":1')) return;
      asked = true;
      const ask = () => {
        if (pauseMs !== undefined) t0 = process.hrtime.bigint();
        p.stdin.write(LIST_TOOLS.map((m) => JSON.stringify(m) + '\n').join(''));
      };
      if (pauseMs === undefined) ask();
      else setTimeout(ask, pauseMs);
    });
    p.once('error', reject);
    p.stdin.write(JSON.stringify(OPENINGS[opening === 'tools' ? 'initialize' : opening]) + '\n');
  });
}

/** How long after the initialize answer the tools/list of `listed` is sent (ms). */
const LIST_PAUSE_MS = 200;

const res = { ours: [], bare: [] };
for (let i = 0; i < rounds + 1; i++) {
  for (const k of i % 2 ? ['bare', 'ours'] : ['ours', 'bare']) {
    const r = await callRound(SERVERS[k]);
    if (i > 0) res[k].push(r); // round 0 warms up
  }
}
// Short blocks: both servers up, one session each; a block of one, then of the other, a pause before each.
const sessions = { ours: await connect(SERVERS.ours), bare: await connect(SERVERS.bare) };
const short = { ours: [], bare: [] };
for (let i = 0; i < blocks + 1; i++) {
  for (const k of i % 2 ? ['bare', 'ours'] : ['ours', 'bare']) {
    await new Promise((r) => setTimeout(r, pause));
    const r = await timedCalls(sessions[k], SERVERS[k], block);
    if (i > 0) short[k].push(r); // the first pair warms up
  }
}
for (const c of Object.values(sessions)) await c.client.close();

const cold = { ours: [], bare: [] };
const discover = { ours: [], bare: [] };
const tools = { ours: [], bare: [] };
const listed = { ours: [], bare: [] };
for (let i = 0; i < colds; i++) {
  for (const k of i % 2 ? ['bare', 'ours'] : ['ours', 'bare']) {
    cold[k].push(await coldStart(SERVERS[k], 'initialize'));
    discover[k].push(await coldStart(SERVERS[k], 'discover'));
    tools[k].push(await coldStart(SERVERS[k], 'tools'));
    listed[k].push(await coldStart(SERVERS[k], 'tools', LIST_PAUSE_MS));
  }
}

const row = (k) => {
  const cps = median(res[k].map((r) => r.cps));
  return {
    cps,
    p50: median(res[k].map((r) => r.p50)),
    p99: median(res[k].map((r) => r.p99)),
    cpu: median(res[k].map((r) => r.cpu)),
    cold: median(cold[k]),
    discover: median(discover[k]),
    tools: median(tools[k]),
    listed: median(listed[k]),
  };
};
const shortRow = (k) => {
  const lat = short[k].flatMap((r) => r.lat).sort((a, b) => a - b);
  return {
    cps: median(short[k].map((r) => r.cps)),
    p50: pct(lat, 0.5),
    p99: pct(lat, 0.99),
    first: median(short[k].map((r) => r.lat[0])),
    rest: median(short[k].map((r) => median(r.lat.slice(1)))),
    // the server's main-thread CPU a call, µs: the whole block, its first call, calls 2-5, the rest
    cpu: median(short[k].map((r) => mean(r.cpu))),
    cpuFirst: median(short[k].map((r) => r.cpu[0])),
    cpuNext: median(short[k].map((r) => mean(r.cpu.slice(1, 5)))),
    cpuRest: median(short[k].map((r) => mean(r.cpu.slice(5)))),
  };
};
const ours = { ...row('ours'), short: shortRow('ours') };
const bare = { ...row('bare'), short: shortRow('bare') };
console.log(`MCP over stdio, node ${process.version}; ${rounds} rounds x ${calls} sequential calls; ${colds} cold starts; medians`);
console.log(
  'server                          calls/s   p50 ms   p99 ms   server CPU µs a call   cold start ms (initialize / server/discover)',
);
for (const [name, r] of [
  [`ours (${SERVERS.ours.tool})`, ours],
  ['bare SDK v2 server (same JSON)', bare],
]) {
  console.log(
    `${name.padEnd(30)} ${fmt(r.cps, 0).padStart(8)} ${fmt(r.p50, 3).padStart(8)} ${fmt(r.p99, 3).padStart(8)} ${fmt(r.cpu, 0).padStart(22)} ${fmt(r.cold, 0).padStart(15)} / ${fmt(r.discover, 0)}`,
  );
}
console.log(
  `short blocks: ${blocks} blocks x ${block} calls each way, taking turns, ${pause} ms pause before each block, one session each; medians`,
);
console.log(
  'server                          calls/s   p50 ms   p99 ms   1st call ms   the rest ms   server CPU µs a call: block / 1st / 2nd-5th / the rest',
);
for (const [name, r] of [
  [`ours (${SERVERS.ours.tool})`, ours.short],
  ['bare SDK v2 server (same JSON)', bare.short],
]) {
  console.log(
    `${name.padEnd(30)} ${fmt(r.cps, 0).padStart(8)} ${fmt(r.p50, 3).padStart(8)} ${fmt(r.p99, 3).padStart(8)} ${fmt(r.first, 3).padStart(13)} ${fmt(r.rest, 3).padStart(13)}   ${[r.cpu, r.cpuFirst, r.cpuNext, r.cpuRest].map((c) => fmt(c, 0)).join(' / ')}`,
  );
}
const ratio = {
  calls: median(res.ours.map((o, i) => o.cps / res.bare[i].cps)),
  short: median(short.ours.map((o, i) => o.cps / short.bare[i].cps)),
  // bare ÷ ours of the server's main-thread CPU a call (higher is better for ours, as calls/s)
  cpu: median(res.ours.map((o, i) => res.bare[i].cpu / o.cpu)),
  shortCpu: median(short.ours.map((o, i) => mean(short.bare[i].cpu) / mean(o.cpu))),
  cold: median(cold.ours.map((o, i) => o / cold.bare[i])),
  discover: median(discover.ours.map((o, i) => o / discover.bare[i])),
  tools: median(tools.ours.map((o, i) => o / tools.bare[i])),
};
console.log(
  `ratio ours/bare (medians of per-round ratios): calls/s ${fmt(ratio.calls, 2)}, short blocks ${fmt(ratio.short, 2)}, cold start ${fmt(ratio.cold, 2)}, server/discover ${fmt(ratio.discover, 2)}`,
);
console.log(
  `server CPU a call, bare / ours (medians of per-round ratios; higher is better for ours): long rounds ${fmt(ratio.cpu, 2)}, short blocks ${fmt(ratio.shortCpu, 2)}`,
);
console.log(
  `cold start to the tools/list answer (initialize, its answer, then tools/list at once), ms: ours ${fmt(ours.tools, 0)}, bare ${fmt(bare.tools, 0)} (${fmt(ratio.tools, 2)}x); ` +
    `tools/list sent ${LIST_PAUSE_MS} ms after the initialize answer, answered in: ours ${fmt(ours.listed, 1)} ms, bare ${fmt(bare.listed, 1)} ms`,
);
console.log(
  `BENCH_JSON ${JSON.stringify({ bench: 'mcp', rounds, calls, colds, blocks, block, pause, listPause: LIST_PAUSE_MS, ours, bare, ratio })}`,
);
