#!/usr/bin/env node
/**
 * The `workspace-mcp` command: mcp (default), demo, serve, seed, admin; `--help` (also after a
 * command) and `--version`. Bad usage is one line on stderr and exit status 2. Only deliberate
 * command output goes to stdout.
 */
import { StartError } from './start-error.js';
import { takePort } from './take-port.js';
import { locateDb } from './paths.js';
import type { Answerer } from '../http/server.js';
import { log } from '../common/log.js';
import { flushTelemetry } from '../common/telemetry.js';
import { closest, intFlag, parse, UsageError } from './args.js';
import { counted, createdEmptyHint, newKeyInfo, printBanner } from './banner.js';
import { commandHelp, COMMANDS, mainHelp, version, type CommandName } from './help.js';
import { reachableUrls } from './hosts.js';
import { pgEnv } from './pg-env.js';
import { tierUpSooner } from './jit.js';

async function serve(args: string[]): Promise<void> {
  const { values } = parse(args, COMMANDS.serve.flags);
  const port = intFlag(values.port, 'port', 0, 65535) ?? 8080;
  // The spec's limit: 120 requests a minute per owner, every method counted.
  const rateLimit =
    intFlag(values['rate-limit'], 'rate-limit', 0, Number.MAX_SAFE_INTEGER, 'requests a minute per owner; 0 turns the limit off') ?? 120;
  if (values.db === '') throw new UsageError('--db needs a file path');
  const drainMs = drainTimeoutMs(values['drain-timeout']);
  const host = (values.host as string | undefined) ?? '127.0.0.1';
  const loc = locateDb(values.db as string | undefined);
  await startTelemetryIfAsked({ remote: false, api: true });
  // The port first: a start refused for it (taken, or no address of this machine) has made
  // nothing, and of two starts on one port only the one that took it makes the database.
  const { bindApi, serveOn } = await import('../http/server.js');
  const bound = await takePort(() => bindApi(host, port, { logger: log, version: version() }), host, port);
  let serving: Serving;
  try {
    serving = await openServing(loc, rateLimit);
  } catch (e) {
    await bound.close();
    throw e;
  }
  const { opened, service, pool } = serving;
  const answerer: Answerer = pool ?? service;
  const listening = serveOn(bound, answerer, { logger: log, version: version() });
  const { server, drain } = listening;
  tierUpSooner();
  // Bound to every interface (0.0.0.0): the addresses a client reaches, this machine's first.
  const [baseUrl, ...others] = reachableUrls(listening.baseUrl, host) as [string, ...string[]];
  const created = opened.created || (loc.url !== undefined && opened.newKey !== undefined);
  printBanner({
    ready: `Workspace API ready at ${baseUrl}${others.length ? ` (also ${others.join(', ')})` : ''} (${rateLimit > 0 ? `${counted(rateLimit, 'request')} a minute per owner` : 'no rate limit'})`,
    database: { file: opened.file, created },
    ...(created ? { createdEmpty: createdEmptyHint(loc.source) } : {}),
    owner: opened.owner,
    newKey: newKeyInfo(opened.newKey, opened.owner?.id, opened.file),
    connectLabel: 'try',
    connect: `curl -H 'Accept: application/json' -H 'Authorization: Bearer <key>' ${baseUrl}/getMe`,
  });
  process.stdout.write(`${baseUrl}\n`); // stdout-ok: serve announces its base URL
  // SIGTERM or SIGINT: the drain (drain.ts), then the listener and the database closed, exit 0.
  const { drainOnSignals } = await import('../common/drain.js');
  drainOnSignals(async () => {
    const cut = await drain.drain(server, drainMs);
    await new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
    await pool?.close();
    service.store.close();
    // What telemetry still holds is sent before the exit.
    await flushTelemetry();
    return cut;
  });
}

/** What `serve` answers with: the service over its database, and on PostgreSQL the pool of service threads. */
type Serving = {
  opened: import('./open.js').Opened;
  service: import('./open.js').Opened['service'];
  pool: import('../service/pool.js').ServicePool | undefined;
};

/** The database at `loc` checked and opened (made, on a first start), with its service; on PostgreSQL its pool too. */
async function openServing(loc: ReturnType<typeof locateDb>, rateLimit: number): Promise<Serving> {
  // The store and SQLite load only for the commands that open a database.
  const { openService } = await import('./open.js');
  const opened = await openService(loc, { rateLimit, logger: log });
  const service = opened.service;
  if (loc.url === undefined) return { opened, service, pool: undefined };
  // On PostgreSQL the requests are answered by service threads (WORKSPACE_PG_POOL of them),
  // each with its own connection, so that this thread never waits on the database (see
  // service/pool.ts).
  let pool: import('../service/pool.js').ServicePool | undefined;
  try {
    const { poolSize, statementTimeoutMs } = pgEnv();
    pool = new (await import('../service/pool.js')).ServicePool(
      { url: loc.url, rateLimit, secrets: opened.secrets, statementTimeoutMs },
      poolSize,
      log,
    );
    await pool.ready();
    return { opened, service, pool };
  } catch (e) {
    await pool?.close();
    service.store.close();
    throw e;
  }
}

/** `--drain-timeout S`: how long the requests in hand may take once SIGTERM came (default 30 s), in ms. */
function drainTimeoutMs(v: unknown): number {
  return (intFlag(v, 'drain-timeout', 0, 3600, 'seconds the requests in hand may take after SIGTERM') ?? 30) * 1000;
}

async function mcp(args: string[]): Promise<void> {
  const { values } = parse(args, COMMANDS.mcp.flags);
  if (values['drain-timeout'] !== undefined) {
    if (!values.http) throw new UsageError('--drain-timeout applies to --http only');
    (await import('./mcp-http.js')).drainFor(drainTimeoutMs(values['drain-timeout']));
  }
  // Telemetry (when asked for) is installed before runMcp builds any server; the two load side by side.
  const remote = args.some((a) => a === '--remote' || a.startsWith('--remote='));
  const [{ runMcp }] = await Promise.all([import('./mcp.js'), startTelemetryIfAsked({ remote, api: false })]);
  await runMcp(args);
}

/** The variables that ask for telemetry (each signal's exporter is otlp unless named otherwise, as the spec says). */
const OTEL_ASKING = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT',
  'OTEL_TRACES_EXPORTER',
  'OTEL_METRICS_EXPORTER',
];

/**
 * OTEL_* asking for telemetry (and OTEL_SDK_DISABLED not forbidding it): the SDK loaded and
 * started before any server is built (`remote`: the backend is `--remote`'s; `api`: `serve`). Else
 * nothing of it is loaded.
 */
async function startTelemetryIfAsked(o: { remote: boolean; api: boolean }): Promise<void> {
  const env = process.env;
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return;
  if (!OTEL_ASKING.some((name) => (env[name]?.trim() ?? '') !== '')) return;
  const { startTelemetry } = await import('./telemetry.js');
  await startTelemetry(version(), o);
}

function out(text: string): void {
  process.stdout.write(text + '\n'); // stdout-ok: help and version
}

/** `--help` or `-h` among a command's arguments (before a `--`). */
function asksHelp(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

/** An unknown command's line: the command it is likely a slip of, and the ones there are. */
function unknownCommand(typed: string): string {
  const names = Object.keys(COMMANDS);
  const meant = closest(typed, [...names, 'help', 'version']);
  return `unknown command: ${typed}: ${meant ? `did you mean ${meant}? ` : ''}the commands are ${names.join(', ')} (workspace-mcp --help)`;
}

export async function main(argv: string[]): Promise<void> {
  const [first, ...rest] = argv;
  if (first !== undefined && Object.hasOwn(COMMANDS, first) && asksHelp(rest)) return out(commandHelp(first as CommandName));
  switch (first) {
    case 'serve':
      return serve(rest);
    case 'seed':
      return (await import('./seed.js')).runSeed(rest);
    case 'demo':
      return (await import('./seed.js')).runDemo(rest);
    case 'admin':
      return (await import('./admin.js')).runAdmin(rest);
    case 'mcp':
      return mcp(rest);
    case '-h':
    case '--help':
    case 'help':
      return out(rest[0] !== undefined && Object.hasOwn(COMMANDS, rest[0]) ? commandHelp(rest[0] as CommandName) : mainHelp());
    case '-v':
    case '--version':
    case 'version':
      return out(version());
    default:
      if (asksHelp(argv)) return out(commandHelp('mcp'));
      if (first === undefined || first.startsWith('-')) return mcp(argv);
      throw new UsageError(unknownCommand(first));
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
