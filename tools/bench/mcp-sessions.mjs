// MCP over Streamable HTTP with many people: `workspace-mcp mcp --http --auth key` (each
// request's bearer its caller's own API key; every session a different owner's) beside a bare
// SDK (v2) HTTP server with one tool answering the same JSON (mcp-bare-server.mjs --http), each
// in its own process, in the same run, alternating rounds.
// - `sessions` concurrent 2025-era sessions (default 50), each calling getMe (a read) one call
//   after another for `seconds`: calls/s and p99 of each server, ratios the medians of the
//   per-round ratios;
// - resident memory (VmRSS) per idle session: the growth from `many` more sessions opened
//   (initialize and notifications/initialized, then nothing) over the server with none open;
// - what happens at `many` (default 500) sessions: the calls of `sessions` of them meanwhile,
//   then one more owner's initialize, and one owner's sessions past its bound (100 by default);
// - `sessions` people coming at once to a fresh server, each opening a session and asking
//   tools/list: how long until all have their tools.
// A raw JSON-RPC client over node:http with keep-alive (no client library's cost in the way),
// in this process on the same cores.
// Usage: npm run build && node tools/bench/mcp-sessions.mjs [--sessions 50] [--seconds 5]
//   [--rounds 3] [--many 500]
import { spawn } from 'node:child_process';
import { Agent } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CLI, closeSession, fmt, loadSessions, median, openSession, rpcPoster, seedDb, tempDir } from './lib.mjs';

const { values } = parseArgs({
  options: {
    sessions: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    many: { type: 'string', default: '500' },
  },
});
const SESSIONS = Number(values.sessions);
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const MANY = Number(values.many);

// Owners 1…MANY+1, each with a key, a project and a bot; names of one length, so every getMe
// answer is as long as the bare server's.
const owners = MANY + 1;
const dir = tempDir();
const uuid = (i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const db = seedDb(dir, 'sessions.db', {
  owners: Array.from({ length: owners }, (_, i) => ({
    id: i + 1,
    name: `Owner ${String(i + 1).padStart(4, '0')}`,
    email: `o${i + 1}@example.com`,
    plan: 'pro',
    api_key: `owner-key-${i + 1}`,
  })),
  projects: Array.from({ length: owners }, (_, i) => ({ uuid: uuid(i + 1), owner_id: i + 1, name: 'P' })),
  bots: Array.from({ length: owners }, (_, i) => ({ id: 10 + i, project_uuid: uuid(i + 1), name: 'B' })),
});
const keyOf = (i) => `owner-key-${i + 1}`;

const agent = new Agent({ keepAlive: true, maxSockets: MANY + 50 });
let nextId = 0;

const post = rpcPoster(agent);

/** A 2025-era session opened with `key` as the bearer (lib.mjs openSession). */
const open = (url, key) => openSession(post, url, { authorization: `Bearer ${key}` });
const close = (url, s) => closeSession(agent, url, s);

function rssMb(pid) {
  return Number(/VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
}

const children = new Set();
process.once('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});
function announce(args, env) {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, args, {
      stdio: ['ignore', 'pipe', 'ignore'],
      env: { ...process.env, WORKSPACE_LOG_LEVEL: 'warn', ...env },
    });
    children.add(proc);
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /(http:\/\/\S+)/.exec(out);
      if (m) resolve({ proc, url: m[1].endsWith('/mcp') ? m[1] : `${m[1].replace(/\/$/, '')}/mcp` });
    });
    proc.once('exit', (c) => reject(new Error(`${args.join(' ')} exited ${c}`)));
  });
}

const OURS = [CLI, 'mcp', '--db', db, '--http', '--port', '0', '--auth', 'key', '--rate-limit', '0', '--person-rate', '0'];
const BARE = [join(import.meta.dirname, 'mcp-bare-server.mjs'), '--http'];
const ours = await announce(OURS);
const probe = await open(ours.url, keyOf(0));
const text = (await probe.call()).text;
await close(ours.url, probe);
const bare = await announce(BARE, { BARE_TOOL_TEXT: text });
const servers = { ours, bare };
const openAll = (k, from, n) => Promise.all(Array.from({ length: n }, (_, i) => open(servers[k].url, keyOf(from + i))));

// Concurrent sessions, alternating rounds after a warm-up round.
const res = { ours: [], bare: [] };
for (let i = 0; i < ROUNDS + 1; i++) {
  for (const k of i % 2 ? ['bare', 'ours'] : ['ours', 'bare']) {
    const list = await openAll(k, 0, SESSIONS);
    const r = await loadSessions(list, i === 0 ? Math.min(2, SECONDS) : SECONDS);
    await Promise.all(list.map((s) => close(servers[k].url, s)));
    if (i > 0) res[k].push(r);
  }
}

// Idle sessions on fresh servers (the load above grew their heaps, which would hide the
// sessions' own growth): memory after one session's call, then with many, calls among them
// meanwhile, then the bounds.
for (const k of ['ours', 'bare']) servers[k].proc.kill();
servers.ours = await announce(OURS);
servers.bare = await announce(BARE, { BARE_TOOL_TEXT: text });
const many = {};
for (const k of ['ours', 'bare']) {
  const one = await open(servers[k].url, keyOf(MANY));
  await one.call();
  await close(servers[k].url, one);
  const before = rssMb(servers[k].proc.pid);
  const first = await openAll(k, 0, SESSIONS);
  const atFew = rssMb(servers[k].proc.pid);
  const rest = [];
  for (let i = SESSIONS; i < MANY; i += 50) rest.push(...(await openAll(k, i, Math.min(50, MANY - i))));
  const atMany = rssMb(servers[k].proc.pid);
  const busy = await loadSessions(first, SECONDS);
  const after = rssMb(servers[k].proc.pid);
  const extraOwner = await open(servers[k].url, keyOf(MANY));
  // One owner's own sessions until refused (at most 150).
  let ownerRefused;
  const own = [];
  for (let i = 0; i < 150 && !ownerRefused; i++) {
    const s = await open(servers[k].url, keyOf(0));
    // Refused: its sessions open are those opened here and the one among the idle ones.
    if (s.call) own.push(s);
    else ownerRefused = { open: own.length + 1, status: s.status, retryAfter: s.retryAfter };
  }
  many[k] = {
    before,
    atFew,
    atMany,
    perSession: ((atMany - before) * 1024) / MANY,
    busy,
    after,
    extraOwner: extraOwner.call ? { status: 200 } : { status: extraOwner.status, retryAfter: extraOwner.retryAfter },
    ownerRefused,
  };
  for (const s of [...first, ...rest, ...own, ...(extraOwner.call ? [extraOwner] : [])]) await close(servers[k].url, s);
}

// People who come at once to a fresh server: each opens a session and asks tools/list (the
// first a client asks for), all together; a fresh pair of servers each round.
const lists = { ours: [], bare: [] };
for (let i = 0; i < ROUNDS; i++) {
  for (const k of ['ours', 'bare']) {
    servers[k].proc.kill();
    servers[k] = await announce(k === 'ours' ? OURS : BARE, k === 'ours' ? {} : { BARE_TOOL_TEXT: text });
  }
  for (const k of i % 2 ? ['bare', 'ours'] : ['ours', 'bare']) {
    const t = performance.now();
    const lat = await Promise.all(
      Array.from({ length: SESSIONS }, async (_, j) => {
        const s = await open(servers[k].url, keyOf(j));
        const t0 = performance.now();
        const r = await post(servers[k].url, { jsonrpc: '2.0', id: ++nextId, method: 'tools/list' }, s.headers);
        if (r.status !== 200 || !r.message?.result?.tools?.length) throw new Error(`tools/list: ${r.status}`);
        return performance.now() - t0;
      }),
    );
    lists[k].push({ all: performance.now() - t, p50: median(lat), max: Math.max(...lat) });
  }
}
const listFig = (k) => ({
  all: median(lists[k].map((r) => r.all)),
  p50: median(lists[k].map((r) => r.p50)),
  max: median(lists[k].map((r) => r.max)),
});
const firstLists = { ours: listFig('ours'), bare: listFig('bare') };

const fig = (k) => ({
  cps: median(res[k].map((r) => r.cps)),
  p50: median(res[k].map((r) => r.p50)),
  p99: median(res[k].map((r) => r.p99)),
});
const out = { ours: fig('ours'), bare: fig('bare') };
const ratio = {
  cps: median(res.ours.map((o, i) => o.cps / res.bare[i].cps)),
  p99: median(res.ours.map((o, i) => o.p99 / res.bare[i].p99)),
};
console.log(
  `MCP over Streamable HTTP, ${SESSIONS} concurrent sessions (ours: each its own owner's key), getMe one call after another each, ${ROUNDS} rounds x ${SECONDS} s, alternating; medians`,
);
console.log('server                              calls/s   p50 ms   p99 ms');
for (const [name, r] of [
  ['ours (--auth key, getMe)', out.ours],
  ['bare SDK v2 HTTP server (same JSON)', out.bare],
])
  console.log(`${name.padEnd(35)} ${fmt(r.cps, 0).padStart(8)} ${fmt(r.p50, 2).padStart(8)} ${fmt(r.p99, 2).padStart(8)}`);
console.log(`ratio ours/bare (medians of per-round ratios): calls/s ${fmt(ratio.cps, 2)}, p99 ${fmt(ratio.p99, 2)}`);
for (const k of ['ours', 'bare']) {
  const m = many[k];
  console.log(
    `${k}, a fresh process: VmRSS ${fmt(m.before)} MB after one session's call and none open, ${fmt(m.atFew)} MB with ${SESSIONS} idle, ` +
      `${fmt(m.atMany)} MB with ${MANY} (${fmt(m.perSession, 0)} KB a session), ${fmt(m.after)} MB after ${SESSIONS} of them called for ${SECONDS} s ` +
      `(${fmt(m.busy.cps, 0)} calls/s, p99 ${fmt(m.busy.p99, 2)} ms); one more owner's initialize: ${m.extraOwner.status}` +
      `${m.extraOwner.retryAfter ? ` Retry-After ${m.extraOwner.retryAfter}` : ''}; one owner's own sessions: ` +
      (m.ownerRefused
        ? `refused with ${m.ownerRefused.open} open, ${m.ownerRefused.status} Retry-After ${m.ownerRefused.retryAfter}`
        : 'none refused of 150 more'),
  );
}
for (const k of ['ours', 'bare'])
  console.log(
    `${k}: ${SESSIONS} people at once on a fresh server, each initialize then tools/list: all listed in ${fmt(firstLists[k].all, 0)} ms, ` +
      `tools/list p50 ${fmt(firstLists[k].p50, 1)} ms, slowest ${fmt(firstLists[k].max, 1)} ms (medians of ${ROUNDS} rounds)`,
  );
console.log(
  `BENCH_JSON ${JSON.stringify({ bench: 'mcp-sessions', sessions: SESSIONS, seconds: SECONDS, rounds: ROUNDS, many: MANY, ...out, ratio, idle: many, firstLists })}`,
);
agent.destroy();
for (const c of children) c.kill();
