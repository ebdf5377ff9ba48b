// A team signed in through OAuth on PostgreSQL, the database a network hop away: `--people`
// (default 50) people, each signed in through the real flow once (register, the consent page
// with their own key, the code exchanged for tokens: their access token stored only as its
// hash), each with a 2025-era session calling getMe (a read) one call after another, against
// `workspace-mcp mcp --http --auth oauth` beside the same people in one `--auth token` server
// (one owner's key; the baseline: nothing of sign-in in the way), both on the same database
// through the same delay proxy (delay-proxy.mjs: each chunk held `--delay-ms`, default 2, each
// way), alternating rounds after a warm-up round; calls/s and p99, ratios the medians of the
// per-round ratios. Each server runs with loop-delay.mjs preloaded: the event loop's delay
// inside it (perf_hooks.monitorEventLoopDelay) over each round's load; and how many kinds of
// statement held its serving thread after start-up (its warnings: PgConnection.watchServing).
// Usage: npm run build && node tools/bench/mcp-oauth.mjs [--people 50] [--seconds 5]
//   [--rounds 3] [--delay-ms 2] [--cli PATH/cli/main.js]   (--cli: another build, a copy of
//   an older dist/ inside the checkout, to measure before and after)
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { delayProxy } from './delay-proxy.mjs';
import { CLI, closeSession, fmt, loadSessions, median, openSession, rpcPoster, tempDir } from './lib.mjs';
import { startPostgres } from './pg-server.mjs';

const { values } = parseArgs({
  options: {
    people: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    'delay-ms': { type: 'string', default: '2' },
    cli: { type: 'string', default: CLI },
  },
});
const PEOPLE = Number(values.people);
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const DELAY = Number(values['delay-ms']);
const SECRET = 'be'.repeat(32);

const work = tempDir('workspace-mcp-bench-oauth-');
const pgServer = await startPostgres(work);
await pgServer.sql('CREATE DATABASE oauth_bench');
const direct = new URL(pgServer.url('oauth_bench'));
const proxy = await delayProxy(Number(direct.port), DELAY);
const viaProxy = new URL(direct);
viaProxy.port = String(proxy.port);

// Owners 1…PEOPLE, each with a key, a project and a bot; names of one length (every getMe answer as long).
const uuid = (i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const keyOf = (i) => `oauth-bench-key-${String(i + 1).padStart(4, '0')}`;
const fixture = {
  owners: Array.from({ length: PEOPLE }, (_, i) => ({
    id: i + 1,
    name: `Owner ${String(i + 1).padStart(4, '0')}`,
    email: `o${i + 1}@example.com`,
    plan: 'pro',
    api_key: keyOf(i),
  })),
  projects: Array.from({ length: PEOPLE }, (_, i) => ({ uuid: uuid(i + 1), owner_id: i + 1, name: 'P' })),
  bots: Array.from({ length: PEOPLE }, (_, i) => ({ id: 10 + i, project_uuid: uuid(i + 1), name: 'B' })),
};
const fixtureFile = join(work, 'people.json');
writeFileSync(fixtureFile, JSON.stringify(fixture));
await new Promise((resolve, reject) => {
  const p = spawn(process.execPath, [CLI, 'seed', fixtureFile, '--db', direct.href], {
    stdio: 'ignore',
    env: { ...process.env, WORKSPACE_SECRET: SECRET },
  });
  p.once('exit', (c) => (c === 0 ? resolve() : reject(new Error(`seed exited ${c}`))));
});

const children = new Set();
process.once('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});
const LOOP_DELAY = join(import.meta.dirname, 'loop-delay.mjs');

/** A server of the built CLI with loop-delay.mjs preloaded; resolves { proc, url, loopFile } once it prints its URL. */
function announce(args, env = {}) {
  const loopFile = join(work, `loop-${children.size}.jsonl`);
  writeFileSync(loopFile, '');
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', LOOP_DELAY, values.cli, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, WORKSPACE_LOG_LEVEL: 'warn', WORKSPACE_SECRET: SECRET, BENCH_LOOP_DELAY_FILE: loopFile, ...env },
    });
    children.add(proc);
    // Its warnings: a statement that held the serving thread is one (PgConnection.watchServing).
    let err = '';
    proc.stderr.on('data', (d) => (err += d));
    proc.held = () => (err.match(/a PostgreSQL statement held the serving thread/g) ?? []).length;
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /^(http:\/\/\S+\/mcp)$/m.exec(out);
      if (m) resolve({ proc, url: m[1], loopFile });
    });
    proc.once('exit', (c) => reject(new Error(`${args.join(' ')} exited ${c}`)));
  });
}

/** The event loop's delay inside `server` since the last call (loop-delay.mjs). */
async function loopDelay(server) {
  const before = readFileSync(server.loopFile, 'utf8').length;
  server.proc.kill('SIGUSR2');
  for (let i = 0; i < 200; i++) {
    const text = readFileSync(server.loopFile, 'utf8');
    if (text.length > before) return JSON.parse(text.slice(before).trim());
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the server did not report its event loop delay');
}

const agent = new Agent({ keepAlive: true, maxSockets: PEOPLE + 10 });

const post = rpcPoster(agent);

/** A 2025-era session with `auth` (headers): { call() → { ms }, close() } (lib.mjs openSession). */
async function open(url, auth) {
  const s = await openSession(post, url, auth);
  if (!s.call) throw new Error(`initialize: ${s.status}`);
  return { call: s.call, close: () => closeSession(agent, url, s) };
}

// The OAuth flow as a client and a person do it (test/mcp/oauth-flow.ts does the same in the tests).
const REDIRECT = 'http://127.0.0.1:9/callback';
async function http(url, init = {}) {
  const res = await fetch(url, { redirect: 'manual', ...init });
  return { status: res.status, headers: res.headers, text: await res.text() };
}
const unescape = (s) => s.replace(/&(amp|lt|gt|quot|#39);/g, (_, e) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]);
async function register(base) {
  const r = await http(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Bench', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
  });
  if (r.status !== 201) throw new Error(`register: ${r.status} ${r.text}`);
  return JSON.parse(r.text).client_id;
}
/** One person's sign-in with `key` through client `clientId`: their access token. */
async function signIn(base, clientId, key) {
  const verifier = randomBytes(32).toString('base64url');
  const params = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: randomBytes(6).toString('hex'),
    resource: `${base}/mcp`,
  };
  const page = await http(`${base}/oauth/authorize?${new URLSearchParams(params)}`);
  if (page.status !== 200) throw new Error(`authorize: ${page.status} ${page.text}`);
  const fields = {};
  for (const m of page.text.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) fields[unescape(m[1])] = unescape(m[2]);
  const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0];
  const back = await http(`${base}/oauth/authorize`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({ ...fields, api_key: key, decision: 'allow' }).toString(),
  });
  const code = back.headers.get('location') && new URL(back.headers.get('location')).searchParams.get('code');
  if (back.status !== 302 || !code) throw new Error(`consent: ${back.status} ${back.text}`);
  const t = await http(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: REDIRECT,
      resource: `${base}/mcp`,
    }).toString(),
  });
  if (t.status !== 200) throw new Error(`token: ${t.status} ${t.text}`);
  return JSON.parse(t.text).access_token;
}

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const db = viaProxy.href;
const servers = {
  oauth: await announce([
    'mcp',
    '--http',
    '--auth',
    'oauth',
    '--public-url',
    base,
    '--port',
    String(port),
    '--db',
    db,
    '--rate-limit',
    '0',
    '--person-rate',
    '0',
  ]),
  token: await announce(['mcp', '--http', '--port', '0', '--db', db, '--rate-limit', '0'], { WORKSPACE_API_KEY: keyOf(0) }),
};
const signInStarted = performance.now();
const clientId = await register(base);
const tokens = [];
for (let i = 0; i < PEOPLE; i++) tokens.push(await signIn(base, clientId, keyOf(i)));
const signInMs = (performance.now() - signInStarted) / PEOPLE;
const authOf = { oauth: (i) => ({ authorization: `Bearer ${tokens[i]}` }), token: () => ({}) };

const res = { oauth: [], token: [] };
for (let r = 0; r < ROUNDS + 1; r++) {
  for (const k of r % 2 ? ['token', 'oauth'] : ['oauth', 'token']) {
    const list = await Promise.all(Array.from({ length: PEOPLE }, (_, i) => open(servers[k].url, authOf[k](i))));
    await loopDelay(servers[k]);
    const figures = await loadSessions(list, r === 0 ? Math.min(2, SECONDS) : SECONDS);
    const loop = await loopDelay(servers[k]);
    await Promise.all(list.map((s) => s.close()));
    if (r > 0) res[k].push({ ...figures, loop });
  }
}

const fig = (k) => ({
  cps: median(res[k].map((r) => r.cps)),
  p50: median(res[k].map((r) => r.p50)),
  p99: median(res[k].map((r) => r.p99)),
  loopP99: median(res[k].map((r) => r.loop.p99)),
  loopMax: Math.max(...res[k].map((r) => r.loop.max)),
});
// The signed-in server again, its calls paced to what --auth token answered: its event loop at the same load.
const pacedList = await Promise.all(Array.from({ length: PEOPLE }, (_, i) => open(servers.oauth.url, authOf.oauth(i))));
await loopDelay(servers.oauth);
const pacedFigures = await loadSessions(pacedList, SECONDS, fig('token').cps);
const paced = { ...pacedFigures, loopP99: (await loopDelay(servers.oauth)).p99 };
await Promise.all(pacedList.map((s) => s.close()));
const out = {
  oauth: { ...fig('oauth'), held: servers.oauth.proc.held() },
  token: { ...fig('token'), held: servers.token.proc.held() },
  oauthPaced: paced,
};
const ratio = {
  cps: median(res.oauth.map((o, i) => o.cps / res.token[i].cps)),
  p99: median(res.oauth.map((o, i) => o.p99 / res.token[i].p99)),
};
console.log(
  `${PEOPLE} people on PostgreSQL ${DELAY} ms away (each chunk held ${DELAY} ms each way), a 2025-era session each calling getMe one call after another, ${ROUNDS} rounds x ${SECONDS} s, alternating; medians`,
);
console.log('server                                   calls/s   p50 ms   p99 ms   event loop delay p99 ms (max)');
for (const [name, r] of [
  ['--auth oauth (each signed in)', out.oauth],
  ['--auth token (one owner)', out.token],
])
  console.log(
    `${name.padEnd(40)} ${fmt(r.cps, 0).padStart(8)} ${fmt(r.p50, 2).padStart(8)} ${fmt(r.p99, 2).padStart(8)}   ${fmt(r.loopP99, 2)} (${fmt(r.loopMax, 1)})`,
  );
console.log(
  `${"--auth oauth, paced to --auth token's calls/s".padEnd(40)} ${fmt(paced.cps, 0).padStart(8)} ${fmt(paced.p50, 2).padStart(8)} ${fmt(paced.p99, 2).padStart(8)}   ${fmt(paced.loopP99, 2)}`,
);
console.log(`ratio oauth/token (medians of per-round ratios): calls/s ${fmt(ratio.cps, 2)}, p99 ${fmt(ratio.p99, 2)}`);
console.log(`sign-in through the real flow (register once, consent, code exchange): ${fmt(signInMs, 0)} ms a person`);
console.log(
  `kinds of statement that held a serving thread after start-up (logged by the server): --auth oauth ${out.oauth.held}, --auth token ${out.token.held}`,
);
console.log(
  `BENCH_JSON ${JSON.stringify({ bench: 'mcp-oauth', people: PEOPLE, seconds: SECONDS, rounds: ROUNDS, delayMs: DELAY, ...out, ratio, signInMs })}`,
);
agent.destroy();
for (const c of children) c.kill();
await Promise.all([...children].map((c) => new Promise((r) => (c.exitCode !== null ? r() : c.once('exit', r)))));
await proxy.close();
await pgServer.stop();
