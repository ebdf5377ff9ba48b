#!/usr/bin/env node
/**
 * The `workspace-mcp` command: mcp (default), serve, seed, admin. Bad usage is one line on
 * stderr and exit status 2. Only deliberate command output goes to stdout.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { openService, openStore, StartError } from './open.js';
import { locateDb } from './paths.js';
import type { Answerer } from '../http/server.js';
import { log } from '../log.js';
import { intFlag, parse, UsageError } from './args.js';
import { printBanner } from './banner.js';
import { pgEnv } from './pg-env.js';

const USAGE = `usage:
  workspace-mcp [mcp] [--db FILE|URL [--rate-limit N] | --remote BASE_URL] [--http [--port N] [--host H]]
                [--read-only] [--tools a,b,...] [--exclude-tools a,b,...] [--max-result-chars N] [--no-ui]
  workspace-mcp serve [--db FILE|URL] [--port N] [--host H] [--rate-limit N]
  workspace-mcp seed FIXTURE.json [--db FILE|URL]
  workspace-mcp admin COMMAND [--db FILE|URL] ...`;

async function serve(args: string[]): Promise<void> {
  const { values } = parse(args, {
    db: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    'rate-limit': { type: 'string' },
  });
  const port = intFlag(values.port, 'port', 0, 65535) ?? 8080;
  // The spec's limit: 120 requests a minute per owner, every method counted.
  const rateLimit = intFlag(values['rate-limit'], 'rate-limit', 0, Number.MAX_SAFE_INTEGER, 'requests a minute per owner; 0 turns the limit off') ?? 120;
  if (values.db === '') throw new UsageError('--db needs a file path');
  const host = (values.host as string | undefined) ?? '127.0.0.1';
  const loc = locateDb(values.db as string | undefined);
  const opened = await openService(loc, { rateLimit, logger: log });
  const service = opened.service;
  const { listen } = await import('../http/server.js');
  // On PostgreSQL the requests are answered by service threads (WORKSPACE_PG_POOL of them),
  // each with its own connection, so that this thread never waits on the database (see
  // service/pool.ts).
  let pool: import('../service/pool.js').ServicePool | undefined;
  if (loc.url !== undefined) {
    const { poolSize, statementTimeoutMs } = pgEnv();
    pool = new (await import('../service/pool.js')).ServicePool({ url: loc.url, rateLimit, secrets: opened.secrets, statementTimeoutMs }, poolSize, log);
  }
  await pool?.ready();
  const answerer: Answerer = pool ?? service;
  let listening;
  try {
    listening = await listen(answerer, host, port, { logger: log });
  } catch (e) {
    service.store.close();
    await pool?.close();
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new StartError(`port ${port} on ${host} is in use: give --port another number (0: any free port)`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new StartError(`--host ${host} is not an address of this machine: give one it has, e.g. 127.0.0.1`);
    throw e;
  }
  const { server, baseUrl } = listening;
  printBanner({
    ready: `Workspace API ready at ${baseUrl} (${rateLimit > 0 ? `${rateLimit} requests a minute per owner` : 'no rate limit'})`,
    database: { file: opened.file, created: opened.created },
    owner: opened.owner,
    newKey: opened.newKey,
    connectLabel: 'try',
    connect: `curl -H 'Accept: application/json' -H 'Authorization: Bearer <key>' ${baseUrl}/getMe`,
  });
  process.stdout.write(`${baseUrl}\n`); // stdout-ok: serve announces its base URL
  const stop = () => {
    server.close();
    server.closeAllConnections();
    service.store.close();
    void (pool?.close() ?? Promise.resolve()).then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

async function seed(args: string[]): Promise<void> {
  // Loaded by the command that needs it: the MCP server's cold start loads neither this nor
  // the HTTP server (and qs with its dependencies) nor the admin commands.
  const { FixtureError, loadFixture } = await import('../store/seed.js');
  const { values, positionals } = parse(args, { db: { type: 'string' } }, 1);
  const file = positionals[0];
  if (!file) throw new UsageError('seed needs a fixture file: workspace-mcp seed FIXTURE.json [--db FILE]');
  let fixture: unknown;
  try {
    fixture = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UsageError(`cannot read fixture ${file}: ${(e as Error).message}`);
  }
  if (values.db === '') throw new UsageError('--db needs a file path');
  const loc = locateDb(values.db as string | undefined);
  // A PostgreSQL database is never removed: it was there before the seed.
  const existed = loc.url !== undefined || existsSync(loc.file);
  const store = await openStore(loc, { create: true });
  let failed = false;
  try {
    const counts = loadFixture(store, fixture);
    const summary = Object.entries(counts)
      .map(([k, n]) => `${n} ${k}`)
      .join(', ');
    process.stderr.write(`seeded: ${summary || 'nothing'}\n`);
  } catch (e) {
    failed = true;
    if (e instanceof FixtureError) throw new UsageError(`fixture ${file}: ${e.message}; nothing was written`);
    throw e;
  } finally {
    store.close();
    // "Nothing is written": a database this seed made is not left behind, empty, by a bad fixture.
    if (failed && !existed) for (const f of [loc.file, `${loc.file}-wal`, `${loc.file}-shm`]) rmSync(f, { force: true });
  }
}

async function mcp(args: string[]): Promise<void> {
  const { runMcp } = await import('./mcp.js');
  await runMcp(args);
}

export async function main(argv: string[]): Promise<void> {
  const [first, ...rest] = argv;
  switch (first) {
    case 'serve':
      return serve(rest);
    case 'seed':
      return seed(rest);
    case 'admin':
      return (await import('./admin.js')).runAdmin(rest);
    case 'mcp':
      return mcp(rest);
    case '-h':
    case '--help':
    case 'help':
      process.stdout.write(USAGE + '\n'); // stdout-ok: help text
      return;
    default:
      if (first === undefined || first.startsWith('-')) return mcp(argv);
      throw new UsageError(`unknown command: ${first}`);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  const e = err;
  // Bad flags and bad start-up input (a missing folder, a file that is not ours, a wrong key):
  // one line naming the problem and the fix, exit status 2.
  if (e instanceof UsageError || e instanceof StartError) {
    // One line, always: some parser messages carry their own line breaks.
    process.stderr.write(`workspace-mcp: ${e.message.replace(/\s*\n\s*/g, ' ')}\n`);
    process.exit(2);
  }
  process.stderr.write(`workspace-mcp: ${(e instanceof Error ? e.message : String(e)).replace(/\s*\n\s*/g, ' ')}\n`);
  process.exit(1);
});
