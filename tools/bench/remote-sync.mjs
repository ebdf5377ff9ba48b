// The remote backend at the upstream's limit: `workspace-mcp mcp --remote` (over stdio, the
// SDK's client) against our own `serve` at its default 120 requests a minute, on a bot of
// --contacts contacts (tools/seed-contacts.mjs). Between the two sits a recording proxy in this
// process, so every request the upstream counts is seen: the server's own start-up getMe too.
//
//   1. export: a fresh `mcp --remote` (its own data folder) runs exportContacts of the bot;
//   2. full index sync: once the upstream's window has passed, a fresh `mcp --remote` (a new
//      data folder: no index yet) is asked findContacts until its index is complete;
//   3. incremental sync: --added contacts are added upstream (straight into its database, in
//      id and time order, as the API adds them), and a new `mcp --remote` on the same data
//      folder is asked findContacts once its index is past the catch-up interval;
//   4. a restart inside the window: at once, while the upstream's window still holds the
//      requests above, a new `mcp --remote` exports the newest --restart contacts (more than
//      the window has left): its pacer knows nothing of them but what the answers' headers say.
// Each phase: wall time from the process's spawn to the answer, the upstream requests in that
// span (by method and status), and the ideal: every request the upstream counted ÷ 120 a
// minute. After each sync the index's ids are compared with the upstream's listed ids (none
// missing, none extra). Prints a summary and a last `BENCH_JSON {...}` line.
//
//   npm run build && node tools/bench/remote-sync.mjs [--contacts 200000] [--added 500] [--restart 30000]
//     [--cli PATH/cli/main.js]
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { openDb } from '../../dist/store/db.js';
import { CLI, ROOT, spawnServer, tempDir } from './lib.mjs';

const { values } = parseArgs({
  options: {
    contacts: { type: 'string', default: '200000' },
    added: { type: 'string', default: '500' },
    restart: { type: 'string', default: '30000' },
    // Another build's CLI for `mcp --remote` (a copy of an older dist/ inside the checkout), to see before and after.
    cli: { type: 'string' },
  },
});
const N = Number(values.contacts);
const ADDED = Number(values.added);
const RESTART = Math.min(Number(values.restart), N);
const LIMIT = 120; // serve's default, a minute
const BOT = 900;
const say = (m) => process.stderr.write(`[remote-sync ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const dir = tempDir('workspace-remote-sync-');
const db = join(dir, 'upstream.db');
let t = performance.now();
execFileSync(process.execPath, [join(ROOT, 'tools', 'seed-contacts.mjs'), '--db', db, '--count', String(N), '--bot', String(BOT)], {
  stdio: 'ignore',
});
const seedSeconds = (performance.now() - t) / 1000;
say(`seeded ${N} contacts in ${seedSeconds.toFixed(1)} s`);
const server = await spawnServer([CLI, 'serve', '--db', db, '--port', '0'], { stderr: 'ignore', env: { WORKSPACE_LOG_LEVEL: 'warn' } });
const upstream = new URL(server.baseUrl);

// ---------------------------------------------------------------- the recording proxy
/** Every request the upstream answered: when it was forwarded (ms), its method, status and X-RateLimit-Remaining. */
const seen = [];
const agent = new Agent({ keepAlive: true });
const proxy = createServer((req, res) => {
  const at = performance.now();
  const up = request(
    { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent },
    (ur) => {
      const remaining = ur.headers['x-ratelimit-remaining'];
      seen.push({
        at,
        method: req.url.split('?')[0].split('/').pop(),
        status: ur.statusCode,
        remaining: remaining === undefined ? null : Number(remaining),
      });
      res.writeHead(ur.statusCode, ur.headers);
      ur.pipe(res);
    },
  );
  up.on('error', () => res.destroy());
  req.pipe(up);
});
await new Promise((r) => proxy.listen(0, '127.0.0.1', r));
const remoteUrl = `http://127.0.0.1:${proxy.address().port}/api/v1`;

/** Listed contact ids upstream. */
function upstreamIds() {
  const d = new Database(db, { readonly: true });
  const ids = d
    .prepare(`SELECT c.id FROM contacts c JOIN bots b ON b.id = c.bot_id WHERE c.preview = 0 AND c.deleted_at IS NULL`)
    .pluck()
    .all();
  d.close();
  return ids;
}

/** The index's ids beside the upstream's: missing and extra, none of either when the copy is right. */
function checkIndex(dataDir) {
  const files = readdirSync(join(dataDir, 'search')).filter((n) => n.endsWith('.db'));
  if (files.length !== 1) throw new Error(`expected one index file, found ${files.join(', ')}`);
  const m = new Database(join(dataDir, 'search', files[0]), { readonly: true });
  const indexed = new Set(m.prepare('SELECT id FROM contacts').pluck().all());
  m.close();
  const listed = upstreamIds();
  const listedSet = new Set(listed);
  return {
    indexed: indexed.size,
    listed: listed.length,
    missing: listed.filter((id) => !indexed.has(id)).length,
    extra: [...indexed].filter((id) => !listedSet.has(id)).length,
  };
}

/** A `workspace-mcp mcp --remote` over stdio on `dataDir`, connected; its spawn time. */
async function startMcp(dataDir) {
  const spawnedAt = performance.now();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [values.cli ?? CLI, 'mcp', '--remote', remoteUrl],
    env: { ...process.env, WORKSPACE_API_KEY: 'bench-key', WORKSPACE_DATA_DIR: dataDir, WORKSPACE_LOG_LEVEL: 'warn' },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'remote-sync-bench', version: '1' });
  await client.connect(transport);
  return { client, spawnedAt };
}

const LONG = { timeout: 30 * 60_000, resetTimeoutOnProgress: true };

/** The upstream requests in [from, to]: how many, by method, 429s, the ideal. */
function span(from, to) {
  const rs = seen.filter((r) => r.at >= from && r.at <= to);
  const byMethod = {};
  for (const r of rs) byMethod[r.method] = (byMethod[r.method] ?? 0) + 1;
  const refused = rs.filter((r) => r.status === 429).length;
  const counted = rs.length - refused; // a refused request is not counted upstream
  return { requests: rs.length, counted, byMethod, got429: refused, idealSeconds: (counted / LIMIT) * 60 };
}

/**
 * Wait until the upstream's current window has passed: it starts at the request that left
 * LIMIT - 1 remaining and lasts a minute; a fresh process then starts on a fresh window.
 */
async function waitWindow() {
  const start = seen.findLast((r) => r.remaining === LIMIT - 1);
  if (!start) return 0;
  const wait = Math.max(0, start.at + 60_000 + 1000 - performance.now());
  say(`waiting ${(wait / 1000).toFixed(0)} s for the upstream's window to pass`);
  await sleep(wait);
  return wait / 1000;
}

const result = { bench: 'remote-sync', contacts: N, limitPerMinute: LIMIT, seedSeconds };

// ---------------------------------------------------------------- 1. the export
{
  const dataDir = tempDir('workspace-remote-export-');
  const { client, spawnedAt } = await startMcp(dataDir);
  say('exportContacts over --remote');
  const calledAt = performance.now();
  const res = await client.callTool({ name: 'exportContacts', arguments: { bot_id: BOT } }, undefined, LONG);
  const end = performance.now();
  await client.close();
  const listed = upstreamIds().length;
  const s = span(spawnedAt, end);
  result.export = {
    ...s,
    count: res.structuredContent?.count ?? null,
    listed,
    error: res.isError ? JSON.stringify(res.content).slice(0, 300) : null,
    seconds: (end - spawnedAt) / 1000,
    toolSeconds: (end - calledAt) / 1000,
    ratio: (end - spawnedAt) / 1000 / s.idealSeconds,
  };
  say(
    `export: ${result.export.count} of ${listed} contacts in ${result.export.seconds.toFixed(1)} s, ${s.requests} requests ` +
      `(${JSON.stringify(s.byMethod)}), ideal ${s.idealSeconds.toFixed(1)} s, 429s ${s.got429}`,
  );
}

// ---------------------------------------------------------------- 2. the full index sync
const syncDir = tempDir('workspace-remote-index-');
result.windowWaitSeconds = await waitWindow();
/** findContacts of a name no contact has (no live account reads) until the index is complete; its last meta.index. */
async function findUntilSynced(client) {
  for (let i = 0; ; i++) {
    const r = await client.callTool({ name: 'findContacts', arguments: { query: 'Nobody Zzyzx' } }, undefined, LONG);
    if (r.isError) throw new Error(`findContacts: ${JSON.stringify(r.content).slice(0, 300)}`);
    const index = r.structuredContent?.meta?.index;
    if (index?.complete && !index.syncing) return { index, calls: i + 1 };
  }
}
{
  const { client, spawnedAt } = await startMcp(syncDir);
  say('full index sync over --remote (findContacts on a fresh data folder)');
  const { index, calls } = await findUntilSynced(client);
  const end = performance.now();
  await client.close();
  const s = span(spawnedAt, end);
  result.sync = {
    ...s,
    findCalls: calls,
    index,
    check: checkIndex(syncDir),
    seconds: (end - spawnedAt) / 1000,
    ratio: (end - spawnedAt) / 1000 / s.idealSeconds,
    endedAt: end,
  };
  say(
    `full sync: ${index.contacts} contacts in ${result.sync.seconds.toFixed(1)} s, ${s.requests} requests (${JSON.stringify(s.byMethod)}), ` +
      `ideal ${s.idealSeconds.toFixed(1)} s, 429s ${s.got429}, check ${JSON.stringify(result.sync.check)}`,
  );
}

// ---------------------------------------------------------------- 3. +ADDED contacts, the next sync
{
  // As the API adds them: new ids, created now, listed (the store's own connection: its triggers keep its indexes).
  const d = openDb(db);
  const now = Math.floor(Date.now() / 1000);
  const iso = new Date(now * 1000).toISOString().slice(0, 19) + '+00:00';
  const ins = d.prepare(
    `INSERT INTO contacts (bot_id, messenger, name, phone, email, telegram_id, telegram_username, created_at, created_ts, preview, deleted_at)
     VALUES (?, 'telegram', ?, NULL, NULL, ?, NULL, ?, ?, 0, NULL)`,
  );
  d.transaction(() => {
    for (let i = 0; i < ADDED; i++) ins.run(BOT, `Added ${i}`, String(8_000_000_000 + i), iso, now);
    d.prepare('UPDATE bots SET subscriber_count = subscriber_count + ? WHERE id = ?').run(ADDED, BOT);
  }).immediate();
  d.close();
  // The index reads the end of the list again once its last read is 10 s old (catch-up interval).
  await sleep(Math.max(0, result.sync.endedAt + 11_000 - performance.now()));
  const { client, spawnedAt } = await startMcp(syncDir);
  say(`incremental sync after +${ADDED} contacts (a new mcp --remote on the same data folder)`);
  const r = await client.callTool({ name: 'findContacts', arguments: { query: `Added ${ADDED - 1}` } }, undefined, LONG);
  const end = performance.now();
  await client.close();
  const s = span(spawnedAt, end);
  const index = r.structuredContent?.meta?.index;
  result.incremental = {
    ...s,
    added: ADDED,
    found: r.structuredContent?.data?.length ?? 0,
    index,
    check: checkIndex(syncDir),
    seconds: (end - spawnedAt) / 1000,
    pages: s.byMethod.getContacts ?? 0,
  };
  say(
    `incremental: ${s.requests} requests (${JSON.stringify(s.byMethod)}) in ${result.incremental.seconds.toFixed(1)} s, ` +
      `429s ${s.got429}, check ${JSON.stringify(result.incremental.check)}`,
  );
}
delete result.sync.endedAt;

// ---------------------------------------------------------------- 4. a restart inside the window
{
  // What the upstream's current window holds: the counted requests since the last one that started a window.
  const at = performance.now();
  const start = seen.findLastIndex((r) => r.remaining === LIMIT - 1);
  const held = start < 0 || seen[start].at + 60_000 <= at ? 0 : seen.slice(start).filter((r) => r.status !== 429).length;
  const d = new Database(db, { readonly: true });
  const dateFrom = d
    .prepare(`SELECT created_ts FROM contacts WHERE bot_id = ? AND preview = 0 AND deleted_at IS NULL ORDER BY id DESC LIMIT 1 OFFSET ?`)
    .pluck()
    .get(BOT, RESTART - 1);
  d.close();
  const { client, spawnedAt } = await startMcp(tempDir('workspace-remote-restart-'));
  say(`restart: a new mcp --remote while the upstream's window holds ${held} requests; exportContacts of the newest ${RESTART}`);
  const res = await client.callTool({ name: 'exportContacts', arguments: { bot_id: BOT, date_from: dateFrom } }, undefined, LONG);
  const end = performance.now();
  await client.close();
  const s = span(spawnedAt, end);
  result.restart = { ...s, held, count: res.structuredContent?.count ?? null, seconds: (end - spawnedAt) / 1000 };
  say(`restart: ${result.restart.count} contacts in ${result.restart.seconds.toFixed(1)} s, ${s.requests} requests, 429s ${s.got429}`);
}

const all = span(0, Infinity);
result.total = { requests: all.requests, got429: all.got429 };
process.stdout.write(
  [
    `remote-sync: ${N.toLocaleString('en')} contacts, serve at ${LIMIT} a minute, mcp --remote over stdio`,
    `  export      ${result.export.seconds.toFixed(1)} s for ${result.export.requests} requests; ideal ${result.export.idealSeconds.toFixed(1)} s (${result.export.ratio.toFixed(2)}×); 429s ${result.export.got429}`,
    `  full sync   ${result.sync.seconds.toFixed(1)} s for ${result.sync.requests} requests; ideal ${result.sync.idealSeconds.toFixed(1)} s (${result.sync.ratio.toFixed(2)}×); 429s ${result.sync.got429}`,
    `  +${ADDED}        ${result.incremental.requests} requests (${JSON.stringify(result.incremental.byMethod)}) in ${result.incremental.seconds.toFixed(1)} s; 429s ${result.incremental.got429}`,
    `  restart     ${result.restart.requests} requests in ${result.restart.seconds.toFixed(1)} s, the window holding ${result.restart.held} at its start; 429s ${result.restart.got429}`,
    `BENCH_JSON ${JSON.stringify(result)}`,
  ].join('\n') + '\n',
);
agent.destroy();
proxy.close();
server.proc.kill();
