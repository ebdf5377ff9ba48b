#!/usr/bin/env node
/**
 * Where `serve` spends its CPU: for each case, `workspace-mcp serve --rate-limit 0` under
 * `node --cpu-prof` on the HTTP benches' database (lib.mjs httpFixture), autocannon with 10
 * connections for a few seconds, then the server is stopped (writing its .cpuprofile) and the
 * profile summarised: the top entries by self time and, for our own code (dist/), by total time.
 * Then, without the profiler, the server's CPU time a request (from /proc) beside the same
 * case's bare baseline of run.mjs: the figure that hardly moves with the machine's load.
 * The MCP cases: `mcpGetMe`, getMe over stdio (`workspace-mcp mcp`, a raw JSON-RPC client,
 * sequential calls) profiled the same way, with the server's CPU a call beside the bare SDK
 * server of mcp-bare-server.mjs answering the same JSON; `mcpStart`, the server's CPU from spawn
 * to its answer to `initialize` beside the bare server's (median of --starts), and a profile of
 * one start of ours; `mcpBlocks`, getMe in blocks of 125 calls with a 1 s pause before each,
 * ours and the bare server taking turns: a profile of ours (shares of its busy time) and the
 * main-thread CPU a call of each.
 *
 *   npm run build && node tools/bench/profile.mjs [--cases getMe,debit,getContacts,mcpGetMe,mcpBlocks,mcpStart]
 *     [--seconds 10] [--requests 20000] [--starts 15] [--blocks 20] [--top 20] [--keep DIR]   (--keep: leave the .cpuprofile files in DIR)
 *   node tools/bench/profile.mjs --summary FILE.cpuprofile [--top 20]
 *
 * Percentages are of all samples the server took while the load ran, idle included (a server
 * waiting for its socket is idle; that share is shown on its own line).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { BENCH_KEY, CLI, httpFixture, median, ROOT, seedDb, spawnServer, tempDir } from './lib.mjs';
import { benchRequire } from './tools.mjs';

const HERE = import.meta.dirname;

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: 'getMe,debit,getContacts' },
    seconds: { type: 'string', default: '10' },
    top: { type: 'string', default: '20' },
    keep: { type: 'string' },
    summary: { type: 'string' },
    requests: { type: 'string', default: '20000' },
    starts: { type: 'string', default: '15' },
    blocks: { type: 'string', default: '20' },
  },
});
const TOP = Number(values.top);

const auth = { accept: 'application/json', authorization: `Bearer ${BENCH_KEY}` };
const CASES = {
  getMe: { method: 'GET', path: 'getMe', headers: auth, bare: 'bytes' },
  getListSchema: { method: 'GET', path: 'getListSchema?schema_id=SCHEMA', headers: auth, bare: 'bytes' },
  debit: {
    method: 'POST',
    path: 'withdrawFundsFromContactAccount',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ account_id: 501, amount: 1, description: 'bench' }),
    bare: 'db',
  },
  getContacts: { method: 'GET', path: 'getContacts?bot_id=10&limit=100', headers: auth, bare: 'db' },
  getContacts1000: { method: 'GET', path: 'getContacts?bot_id=10&limit=1000', headers: auth, bare: 'db' },
};

/**
 * Self and total time by function (name, file, line) of a .cpuprofile, from the sample taken at
 * `fromUs` on (the monotonic clock in microseconds, as `process.hrtime` and the profile keep it):
 * start-up and warm-up left out.
 */
export function summarize(profile, top = TOP, fromUs = 0, requests = 0, ofBusy = false) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const keyOf = (n) => {
    const f = n.callFrame;
    const url = f.url ? relative(ROOT, f.url.replace(/^file:\/\//, '')) : '';
    return `${f.functionName || '(anonymous)'} ${url ? `${url}:${f.lineNumber + 1}` : ''}`.trim();
  };
  const self = new Map();
  const total = new Map();
  let all = 0;
  const dt = profile.timeDeltas;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += dt[i];
    const us = dt[i + 1] ?? 0; // the time a sample covers is the delta to the next one
    if (at < fromUs) continue;
    all += us;
    let id = profile.samples[i];
    const k = keyOf(byId.get(id));
    self.set(k, (self.get(k) ?? 0) + us);
    const seen = new Set();
    while (id !== undefined) {
      const key = keyOf(byId.get(id));
      if (!seen.has(key)) {
        seen.add(key);
        total.set(key, (total.get(key) ?? 0) + us);
      }
      id = parent.get(id);
    }
  }
  const idle = self.get('(idle)') ?? 0;
  // ofBusy: shares of the busy time (a profile mostly idle by design, as short blocks with pauses)
  const pct = (us) => `${((100 * us) / (ofBusy ? all - idle : all)).toFixed(1).padStart(5)} %`;
  const perRequest = requests > 0 ? `; busy ${((all - idle) / requests).toFixed(1)} µs a request (${requests} requests)` : '';
  const busy = `${((100 * (all - idle)) / all).toFixed(1)} % busy`;
  const lines = [`${(all / 1e6).toFixed(2)} s sampled, ${busy}${perRequest}`, '', ofBusy ? 'self time (of the busy time):' : 'self time:'];
  const shown = [...self].filter(([k]) => !ofBusy || k !== '(idle)');
  for (const [k, us] of shown.sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${pct(us)}  ${k}`);
  lines.push('', ofBusy ? 'total time, our code (dist/), of the busy time:' : 'total time, our code (dist/):');
  const ours = [...total].filter(([k]) => k.includes('dist/') && !k.includes('node_modules')).sort((a, b) => b[1] - a[1]);
  for (const [k, us] of ours.slice(0, top)) lines.push(`  ${pct(us)}  ${k}`);
  return lines.join('\n');
}

/** CPU time (user + system) a process has used so far, in µs; undefined off Linux. */
function cpuUs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10_000; // utime, stime in ticks of 1/100 s
  } catch {
    return undefined;
  }
}

const cannon = (autocannon, url, c, opts) =>
  new Promise((resolve, reject) =>
    autocannon({ url, method: c.method, headers: c.headers, body: c.body, connections: 10, ...opts }, (err, res) => {
      if (err) return reject(err);
      if (res.non2xx + res.errors > 0) return reject(new Error(`${url}: ${res.non2xx} non-2xx, ${res.errors} errors`));
      resolve(res);
    }),
  );

async function profileCase(name, c, dir, autocannon) {
  const db = join(dir, `${name}.db`);
  const bareDb = join(dir, `${name}-bare.db`);
  for (const file of [db, bareDb])
    execFileSync(process.execPath, [CLI, 'seed', join(dir, 'fixture.json'), '--db', file], { stdio: 'ignore' });
  const env = { WORKSPACE_LOG_LEVEL: 'warn' };
  const serveArgs = [CLI, 'serve', '--db', db, '--port', '0', '--rate-limit', '0'];
  const profDir = join(dir, `${name}-prof`);
  const profiled = await spawnServer(['--cpu-prof', '--cpu-prof-dir', profDir, ...serveArgs], { stderr: 'ignore', env, cwd: ROOT });
  let path = c.path;
  if (path.includes('SCHEMA')) {
    const res = await fetch(`${profiled.baseUrl}/createListSchema`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'Orders',
        project_uuid: httpFixture().projects[0].uuid,
        fields: [{ name: 'Title', slug: 'title', type: 'string', is_required: true }],
      }),
    });
    path = path.replace('SCHEMA', (await res.json()).data.id);
  }
  await cannon(autocannon, `${profiled.baseUrl}/${path}`, c, { duration: 1 }); // warm-up, left out of the summary with the start-up
  const from = Number(process.hrtime.bigint() / 1000n);
  const res = await cannon(autocannon, `${profiled.baseUrl}/${path}`, c, { duration: Number(values.seconds) });
  const exited = new Promise((resolve) => profiled.proc.once('exit', resolve));
  profiled.proc.kill('SIGTERM');
  await exited;
  const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
  const profile = JSON.parse(readFileSync(join(profDir, file), 'utf8'));
  if (values.keep) {
    mkdirSync(values.keep, { recursive: true });
    writeFileSync(join(values.keep, `${name}.cpuprofile`), JSON.stringify(profile));
  }

  // Server CPU a request, without the profiler, beside the bare baseline of the same case
  // (run.mjs): the figure that hardly moves with the machine's load, unlike requests a second.
  const ours = await spawnServer(serveArgs, { stderr: 'ignore', env, cwd: ROOT });
  // (The same file as the profiled server's: the list it made is there.)
  let bare;
  if (c.bare === 'db') bare = await spawnServer([join(HERE, 'bare-db-server.mjs'), bareDb], { stderr: 'ignore' });
  else {
    const answer = await fetch(`${ours.baseUrl}/${path}`, { method: c.method, headers: c.headers, body: c.body });
    const bytes = join(dir, `${name}.body`);
    writeFileSync(bytes, Buffer.from(await answer.arrayBuffer()));
    bare = await spawnServer([join(HERE, 'run.mjs'), '--bare', bytes, answer.headers.get('content-type') ?? 'application/json'], {
      stderr: 'ignore',
    });
  }
  const amount = Number(values.requests);
  const perRequest = { ours: [], bare: [] };
  for (let round = 0; round < 3; round++) {
    for (const [k, server] of round % 2
      ? [
          ['bare', bare],
          ['ours', ours],
        ]
      : [
          ['ours', ours],
          ['bare', bare],
        ]) {
      const url = `${server.baseUrl}/${path}`;
      await cannon(autocannon, url, c, { amount: 1000 });
      const t0 = cpuUs(server.proc.pid);
      await cannon(autocannon, url, c, { amount });
      const t1 = cpuUs(server.proc.pid);
      if (t0 !== undefined && t1 !== undefined) perRequest[k].push((t1 - t0) / amount);
    }
  }
  for (const server of [ours, bare]) server.proc.kill('SIGTERM');
  const cpu = perRequest.ours.length ? { ours: median(perRequest.ours), bare: median(perRequest.bare) } : undefined;
  return { rps: res.requests.average, requests: res.requests.total, profile, from, cpu };
}

// ---------------------------------------------------------------- MCP over stdio

const OPENING = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'profile', version: '1' } };

/** A raw JSON-RPC client of a stdio server (no client library's cost in the way): request(method, params) → the message answering it. */
function stdioPeer(args, env, stderr = 'ignore') {
  const proc = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', stderr] });
  let buf = '';
  let id = 0;
  const waiting = new Map();
  proc.stdout.on('data', (d) => {
    buf += d;
    for (let i; (i = buf.indexOf('\n')) >= 0;) {
      const m = JSON.parse(buf.slice(0, i));
      buf = buf.slice(i + 1);
      waiting.get(m.id)?.(m);
      waiting.delete(m.id);
    }
  });
  const request = (method, params) =>
    new Promise((resolve) => {
      waiting.set(++id, resolve);
      proc.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    });
  const end = () => new Promise((resolve) => (proc.once('exit', resolve), proc.stdin.end()));
  return { proc, request, end };
}

async function mcpSession(args, env) {
  const peer = stdioPeer(args, env);
  await peer.request('initialize', OPENING);
  peer.proc.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  return peer;
}

const MCP_ENV = { WORKSPACE_API_KEY: BENCH_KEY, WORKSPACE_LOG_LEVEL: 'warn' };
const mcpServers = (db, text) => ({
  ours: { args: [CLI, 'mcp', '--db', db, '--rate-limit', '0'], env: MCP_ENV },
  bare: { args: [join(HERE, 'mcp-bare-server.mjs')], env: { ...MCP_ENV, BARE_TOOL_TEXT: text } },
});
const GETME = { name: 'getMe', arguments: {} };

/** getMe over stdio: a profile of ours, then the server's CPU a call beside the bare SDK server answering the same JSON. */
async function profileMcpGetMe(dir) {
  const db = seedDb(dir, 'mcp.db');
  const calls = Number(values.requests) / 4;
  const probe = await mcpSession([CLI, 'mcp', '--db', db, '--rate-limit', '0'], MCP_ENV);
  const text = (await probe.request('tools/call', GETME)).result.content[0].text;
  await probe.end();
  const servers = mcpServers(db, text);
  const profDir = join(dir, 'mcpGetMe-prof');
  const profiled = await mcpSession(['--cpu-prof', '--cpu-prof-dir', profDir, ...servers.ours.args], servers.ours.env);
  for (let i = 0; i < 300; i++) await profiled.request('tools/call', GETME);
  const from = Number(process.hrtime.bigint() / 1000n);
  for (let i = 0; i < calls; i++) await profiled.request('tools/call', GETME);
  await profiled.end();
  const profile = JSON.parse(
    readFileSync(
      join(
        profDir,
        readdirSync(profDir).find((f) => f.endsWith('.cpuprofile')),
      ),
      'utf8',
    ),
  );
  const perCall = { ours: [], bare: [] };
  for (let round = 0; round < 3; round++) {
    for (const k of round % 2 ? ['bare', 'ours'] : ['ours', 'bare']) {
      const peer = await mcpSession(servers[k].args, servers[k].env);
      for (let i = 0; i < 300; i++) await peer.request('tools/call', GETME);
      const t0 = cpuUs(peer.proc.pid);
      for (let i = 0; i < calls; i++) {
        const r = await peer.request('tools/call', GETME);
        if (r.result.content[0].text !== text) throw new Error(`${k} answered other text`);
      }
      const t1 = cpuUs(peer.proc.pid);
      await peer.end();
      if (t0 !== undefined && t1 !== undefined) perCall[k].push((t1 - t0) / calls);
    }
  }
  return { calls, profile, from, cpu: perCall.ours.length ? { ours: median(perCall.ours), bare: median(perCall.bare) } : undefined };
}

const BLOCK = 125;
const PAUSE_MS = 1000;

/** The kernel's run time of a process's main thread so far, µs (/proc/PID/schedstat). */
function threadCpuUs(pid) {
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1000;
}

/**
 * getMe over stdio as real clients call, in short blocks with a pause before each, ours and the
 * bare server taking turns: a profile of ours (after 300 calls of warm-up), then without the
 * profiler the main-thread CPU a call of each, medians of `--blocks` blocks.
 */
async function profileMcpBlocks(dir) {
  const db = seedDb(dir, 'blocks.db');
  const blocks = Number(values.blocks);
  const probe = await mcpSession([CLI, 'mcp', '--db', db, '--rate-limit', '0'], MCP_ENV);
  const text = (await probe.request('tools/call', GETME)).result.content[0].text;
  await probe.end();
  const servers = mcpServers(db, text);
  const sleep = () => new Promise((r) => setTimeout(r, PAUSE_MS));
  const run = async (profiled) => {
    const profDir = join(dir, 'mcpBlocks-prof');
    const peers = {
      ours: await mcpSession([...(profiled ? ['--cpu-prof', '--cpu-prof-dir', profDir] : []), ...servers.ours.args], servers.ours.env),
      bare: await mcpSession(servers.bare.args, servers.bare.env),
    };
    for (const k of ['ours', 'bare']) for (let i = 0; i < 300; i++) await peers[k].request('tools/call', GETME);
    const from = Number(process.hrtime.bigint() / 1000n);
    const cpu = { ours: [], bare: [] };
    for (let b = 0; b < blocks; b++) {
      for (const k of b % 2 ? ['bare', 'ours'] : ['ours', 'bare']) {
        await sleep();
        const c0 = threadCpuUs(peers[k].proc.pid);
        for (let i = 0; i < BLOCK; i++) await peers[k].request('tools/call', GETME);
        cpu[k].push((threadCpuUs(peers[k].proc.pid) - c0) / BLOCK);
      }
    }
    for (const p of Object.values(peers)) await p.end();
    if (!profiled) return { ours: median(cpu.ours), bare: median(cpu.bare) };
    const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
    return { from, profile: JSON.parse(readFileSync(join(profDir, file), 'utf8')) };
  };
  const { from, profile } = await run(true);
  return { calls: blocks * BLOCK, profile, from, cpu: await run(false) };
}

/** Spawn → the answer to initialize: the server's CPU (ms) at that moment, ours beside the bare server, alternating; one profiled start of ours. */
async function profileMcpStart(dir) {
  const db = seedDb(dir, 'start.db');
  const servers = mcpServers(db, '{}');
  const start = (s, extra = []) =>
    new Promise((resolve) => {
      const peer = stdioPeer([...extra, ...s.args], s.env);
      void peer.request('initialize', OPENING).then(() => {
        const cpu = cpuUs(peer.proc.pid);
        peer.proc.once('exit', () => resolve(cpu === undefined ? undefined : cpu / 1000));
        peer.proc.kill('SIGTERM');
      });
    });
  const cpu = { ours: [], bare: [] };
  for (let i = 0; i < Number(values.starts); i++)
    for (const k of i % 2 ? ['bare', 'ours'] : ['ours', 'bare']) cpu[k].push(await start(servers[k]));
  const profDir = join(dir, 'mcpStart-prof');
  await start(servers.ours, ['--cpu-prof', '--cpu-prof-dir', profDir, '--cpu-prof-interval', '250']);
  const profile = JSON.parse(
    readFileSync(
      join(
        profDir,
        readdirSync(profDir).find((f) => f.endsWith('.cpuprofile')),
      ),
      'utf8',
    ),
  );
  return { cpu: cpu.ours.includes(undefined) ? undefined : { ours: median(cpu.ours), bare: median(cpu.bare) }, profile };
}

if (values.summary) {
  process.stdout.write(summarize(JSON.parse(readFileSync(values.summary, 'utf8'))) + '\n');
} else {
  const autocannon = benchRequire()('autocannon');
  const dir = tempDir();
  try {
    writeFileSync(join(dir, 'fixture.json'), JSON.stringify(httpFixture()));
    for (const name of values.cases.split(',')) {
      if (name === 'mcpGetMe') {
        const { calls, profile, from, cpu } = await profileMcpGetMe(dir);
        process.stdout.write(`## mcpGetMe (tools/call getMe over stdio), ${calls} sequential calls under the profiler\n\n`);
        if (cpu)
          process.stdout.write(
            `server CPU a call, no profiler (median of 3 rounds of ${calls} calls, alternating): ours ${cpu.ours.toFixed(0)} µs, ` +
              `bare SDK server ${cpu.bare.toFixed(0)} µs (one tool answering the same JSON); bare / ours ${(cpu.bare / cpu.ours).toFixed(2)}\n`,
          );
        process.stdout.write(summarize(profile, TOP, from, calls) + '\n\n');
        continue;
      }
      if (name === 'mcpBlocks') {
        const { calls, profile, from, cpu } = await profileMcpBlocks(dir);
        process.stdout.write(
          `## mcpBlocks (tools/call getMe over stdio in blocks of ${BLOCK} calls, a ${PAUSE_MS} ms pause before each, taking turns with the bare SDK server), ${calls} calls of ours under the profiler\n\n`,
        );
        process.stdout.write(
          `server main-thread CPU a call, no profiler (medians of the blocks): ours ${cpu.ours.toFixed(0)} µs, bare SDK server ${cpu.bare.toFixed(0)} µs; bare / ours ${(cpu.bare / cpu.ours).toFixed(2)}; shares below are of the busy time (idle left out)\n`,
        );
        process.stdout.write(summarize(profile, TOP, from, calls, true) + '\n\n');
        continue;
      }
      if (name === 'mcpStart') {
        const { cpu, profile } = await profileMcpStart(dir);
        process.stdout.write(`## mcpStart (spawn to the answer to initialize, over stdio)\n\n`);
        if (cpu)
          process.stdout.write(
            `server CPU to the answer (median of ${values.starts} starts each, alternating): ours ${cpu.ours.toFixed(0)} ms, bare SDK server ${cpu.bare.toFixed(0)} ms; ours / bare ${(cpu.ours / cpu.bare).toFixed(2)}\n`,
          );
        process.stdout.write(summarize(profile, TOP) + '\n\n');
        continue;
      }
      const c = CASES[name];
      if (!c) throw new Error(`unknown case ${name}: one of ${Object.keys(CASES).join(', ')}`);
      const { rps, requests, profile, from, cpu } = await profileCase(name, c, dir, autocannon);
      process.stdout.write(
        `## ${name} (${c.method} ${c.path.split('?')[0]}), 10 connections, ${values.seconds} s, ${Math.round(rps)} req/s under the profiler\n\n`,
      );
      if (cpu) {
        process.stdout.write(
          `server CPU a request, no profiler (median of 3 rounds of ${values.requests} requests, alternating): ` +
            `ours ${cpu.ours.toFixed(0)} µs, bare node:http ${cpu.bare.toFixed(0)} µs (${c.bare === 'db' ? 'doing the same SQL' : 'sending the same bytes'}); bare / ours ${(cpu.bare / cpu.ours).toFixed(2)}\n`,
        );
      }
      process.stdout.write(summarize(profile, TOP, from, requests) + '\n\n');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
