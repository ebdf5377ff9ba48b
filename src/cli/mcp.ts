/**
 * `workspace-mcp [mcp]`: the MCP server, over stdio (default) or Streamable HTTP (`--http`),
 * on the built-in service over a SQLite file (default) or a PostgreSQL database that several
 * instances share (`--db postgres://…`), or on a remote Workspace API (`--remote`).
 * In stdio mode stdout carries only the protocol: every message of ours goes to stderr.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { makeDataDir, openChecked, removeMade, serviceOver, StartError, type Checked, type OwnerSummary } from './open.js';
import { defaultDataDir, expandHome, locateDb } from './paths.js';
import { SeenIds } from '../mcp/seen.js';
import type { ToolFilter } from '../mcp/serve/tool-filter.js';
import { instanceFactory, type Wiring } from '../mcp/serve/instance.js';
import { instructionsFor } from '../mcp/serve/instructions.js';
import { checkLimit, hasCaps, limitsOf, REMOTE_DEFAULTS, type MoneyPolicy } from '../mcp/money/caps.js';
import { MIN_RESULT_BUDGET, RESULT_BUDGET } from '../mcp/result/budget.js';
import type { McpContext } from '../mcp/context.js';
import type { ToolSpec } from '../mcp/tool-spec.js';
import type { AuditTrail, IdempotencyKeys, MoneyWindow } from '../mcp/state.js';
import type { RemoteBackend } from '../remote/client.js';
import type { Backend } from '../api/backend.js';
import { log } from '../log.js';
import { McpStateStore } from '../state/mcp-state.js';
import type { PgStore } from '../store/pg/index.js';
import { intFlag, parse, UsageError } from './args.js';
import { COMMANDS } from './help.js';
import { claudeMcpAdd, createdEmptyHint, createdEmptyWarning, mcpServersJson, newKeyInfo, printBanner, stdioEntry, type BannerInfo } from './banner.js';
import { reachableUrls } from './hosts.js';
import { pgEnv } from './pg-env.js';
import type { SearchParts } from './search.js';

/** The remote mode's audit trail, in its data folder. */
export const AUDIT_FILE = 'audit.jsonl';

/** The MCP server's own state (idempotency keys), a SQLite file in its data folder. */
export const MCP_STATE_FILE = 'mcp-state.sqlite';

/** The MCP server's own state, per scope: a SQLite file of its own, or (PostgreSQL) the shared database. */
interface McpState {
  keys(scope: string): IdempotencyKeys;
  moves(scope: string): MoneyWindow;
  close(): void;
}

/** What a backend needs besides itself: who it acts for, search, where the server's files go, how to close. */
export interface BackendSetup {
  /**
   * Who the server acts for, resolved once at start-up, never by a call: idempotency keys are
   * kept per scope. Local: the database and its owner; remote: the base URL and the key (hashed).
   */
  scope: string;
  /** The owner the backend acts as, when start-up learnt it (remote: unknown once getMe is switched off). */
  ownerId?: number;
  dataDir: string;
  /**
   * The backend, its audit trail and search, made once: the local service's code is loaded by
   * the first call (over stdio, after the first answer); the remote client is made at start-up.
   */
  wire(): Promise<Wired>;
  close(): Promise<void>;
  /** For the start-up banner. */
  banner: Pick<BannerInfo, 'database' | 'remote' | 'owner' | 'newKey' | 'money' | 'createdEmpty'>;
  /** What the model must be told from start-up (the database was created empty), in tool results' warnings. */
  startNote?: string;
  /** The server's own state, when the backend keeps it (PostgreSQL); else a file in `dataDir`. */
  state?: McpState;
  /** On PostgreSQL: what every instance must share beside the database, for questions sealed by one to be answered through another. */
  shared?: { questionKey: Uint8Array };
}

/** A backend and what goes with it. */
export interface Wired extends SearchParts {
  backend: Backend;
  /** The audit trail of data-changing calls: the database's (local), a JSON-lines file (remote). */
  audit: AuditTrail;
  /** Who holds an account, read from the database (PostgreSQL: another instance may have shown it). */
  accountHolder?: (accountId: number) => number | undefined;
}

/** What the user told getWorkspace and the default bot: `--bot`, `--project` or their env. */
interface Configured {
  botId?: number;
  /** Where botId came from, for messages. */
  botSource?: string;
  projectUuid?: string;
}

/** The client of a remote Workspace API (`src/remote/`). */
export async function createRemoteBackend(baseUrl: string, apiKey: string): Promise<RemoteBackend> {
  // Loaded only for --remote: undici is a fair part of the local server's cold start.
  const { RemoteBackend } = await import('../remote/client.js');
  try {
    return new RemoteBackend({ baseUrl, apiKey });
  } catch (e) {
    throw new UsageError(`--remote ${baseUrl}: ${(e as Error).message}`);
  }
}

/**
 * The data folder of the MCP server's own files (exports, its state file), absolute.
 * `$WORKSPACE_DATA_DIR` must exist; the default one is made (owner-only) when first needed.
 */
function dataDirFor(dbFile: string | undefined): string {
  const named = process.env.WORKSPACE_DATA_DIR;
  if (named) {
    const dir = resolve(expandHome(named));
    if (!existsSync(dir) || !statSync(dir).isDirectory())
      throw new StartError(`WORKSPACE_DATA_DIR ${dir} is not an existing folder: create it first, or unset it to use ${dbFile ? dirname(dbFile) : defaultDataDir()}`);
    return dir;
  }
  return dbFile ? dirname(dbFile) : defaultDataDir();
}

async function openLocal(dbFlag: string | undefined, rateLimit: number, configured: Configured): Promise<BackendSetup> {
  if (dbFlag === '') throw new UsageError('--db needs a file path or a postgres:// URL');
  const loc = locateDb(dbFlag);
  const pgUrl = loc.url;
  // On PostgreSQL there is no database file to keep the server's files beside.
  const dataDir = dataDirFor(pgUrl === undefined ? loc.file : undefined);
  const opened = await openChecked(loc, { rateLimit, logger: log, actAs: { apiKey: process.env.WORKSPACE_API_KEY } });
  const store = opened.store;
  if (configured.botId !== undefined) {
    const bot = store.projects.bot(configured.botId);
    if (!bot || bot.deleted_at || (opened.owner !== undefined && bot.owner_id !== opened.owner.id)) {
      const bots = opened.owner ? store.directory.bots(opened.owner.id).map((b) => `${b.id} (${b.name ?? 'no name'})`) : [];
      store.close();
      if (opened.created && pgUrl === undefined) removeMade(opened.file);
      const whose = opened.owner ? `owner ${opened.owner.id}` : 'this owner';
      throw new StartError(`${configured.botSource} ${configured.botId} is not a bot of ${whose}: ${bots.length ? `give one of its bots: ${bots.join(', ')}` : `${whose} has no bot`}`);
    }
  }
  // The default bot as getWorkspace answers it (McpContext.defaultBot): the configured one, else the owner's only bot.
  const bots = opened.owner?.bots ?? [];
  const defaultBot = configured.botId ?? (bots.length === 1 ? bots[0]! : null);
  const owner: (OwnerSummary & { via?: string; defaultBot?: number | null }) | undefined =
    opened.owner && { ...opened.owner, ...('apiKey' in opened.identity ? { via: 'WORKSPACE_API_KEY' } : {}), defaultBot };
  // A start that made the database (a first run, or a mistyped --db) says so where the model looks too.
  const created = opened.created || (pgUrl !== undefined && opened.newKey !== undefined);
  const ownerId = opened.owner?.id ?? ('ownerId' in opened.identity ? opened.identity.ownerId : 0);
  // PostgreSQL: the state in the database every instance shares, loaded only here (as the pool).
  const pg = pgUrl !== undefined ? await postgresParts(store) : undefined;
  let pool: Promise<import('../service/pool.js').ServicePool> | undefined;
  let wired: Promise<Wired> | undefined;
  return {
    // The PostgreSQL scope names no URL: instances may reach the one database by other names.
    scope: pgUrl !== undefined ? `postgres owner ${ownerId}` : `local ${opened.file} owner ${ownerId}`,
    ownerId: opened.owner?.id,
    dataDir,
    wire: () =>
      (wired ??= (async () => {
        if (pgUrl !== undefined)
          pool = import('../service/pool.js').then(async ({ ServicePool }) => {
            // Service threads as `serve` has (WORKSPACE_PG_POOL, checked when the database
            // was opened): each API call waits on its own thread's connection, so one slow
            // transaction never stalls the other sessions.
            const { poolSize, statementTimeoutMs } = pgEnv();
            const p = new ServicePool({ url: pgUrl, rateLimit, secrets: opened.secrets, statementTimeoutMs }, poolSize, log);
            await p.ready();
            return p;
          });
        const [service, { LocalBackend }, { localSearch }, threads] = await Promise.all([
          serviceOver(opened, { rateLimit, logger: log }),
          import('../service/backend.js'),
          import('./search.js'),
          pool,
        ]);
        const backend = new LocalBackend(service, opened.identity, threads);
        return { backend, audit: store.audit, ...localSearch(store, backend), ...(pg ? { accountHolder: (id: number) => store.contactAccounts.get(id)?.contact_id } : {}) };
      })()),
    // The backend's close is the store's; the pool's threads hold their own connections.
    close: async () => {
      store.close();
      await (await pool)?.close();
    },
    banner: {
      database: { file: opened.file, created },
      owner,
      newKey: newKeyInfo(opened.newKey, opened.owner?.id, opened.file),
      ...(created ? { createdEmpty: createdEmptyHint(loc.source) } : {}),
    },
    ...(created ? { startNote: createdEmptyWarning(opened.file, loc.source) } : {}),
    ...(pg ?? {}),
  };
}

/** The MCP server's state and shared question key on PostgreSQL (its code loaded only for a PostgreSQL database). */
async function postgresParts(store: Checked['store']): Promise<Pick<BackendSetup, 'state' | 'shared'>> {
  const [{ PgMcpState }, { envSecret, questionKey }] = await Promise.all([import('../state/pg/mcp-state.js'), import('../service/secrets.js')]);
  const state = new PgMcpState((store as PgStore).conn);
  // openChecked refused a PostgreSQL database without WORKSPACE_SECRET.
  return { state: { keys: (scope) => state.keys(scope), moves: (scope) => state.moves(scope), close() {} }, shared: { questionKey: questionKey(envSecret()!) } };
}

/**
 * The remote base URL, checked for form before anything is sent: http(s), ending in `/v1`
 * (`https://host/api/v1`). A URL without it gets the one to use instead.
 */
function remoteBaseUrl(raw: string, source: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new StartError(`${source} ${raw} is not a URL: give the API's base URL, e.g. https://host/api/v1`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new StartError(`${source} ${raw} is not an http(s) URL: give the API's base URL, e.g. https://host/api/v1`);
  const path = url.pathname.replace(/\/+$/, '');
  if (/\/v1$/.test(path)) return `${url.origin}${path}`;
  // A method URL (…/api/v1/getMe) names its base; otherwise add what is missing.
  const base = /^(.*\/v1)\/[^/]+$/.exec(path)?.[1] ?? (path.endsWith('/api') ? `${path}/v1` : `${path}/api/v1`);
  throw new StartError(`${source} ${raw} is not the API's base URL, which ends in /api/v1: use ${url.origin}${base}`);
}

async function openRemote(raw: string, source: string, configured: Configured, seen: SeenIds): Promise<BackendSetup> {
  const baseUrl = remoteBaseUrl(raw, source);
  const apiKey = process.env.WORKSPACE_API_KEY;
  if (!apiKey) throw new StartError(`--remote needs the API key in WORKSPACE_API_KEY${apiKey === '' ? ' (it is set but empty)' : ''}: set it to your key of ${baseUrl}`);
  const dataDir = dataDirFor(undefined);
  const backend = await createRemoteBackend(baseUrl, apiKey);
  const { checkRemote } = await import('../remote/client.js');
  // A key that fails getMe (401, 402, 403), an unreachable URL or another kind of server is a
  // start-up error, found before the state file is made.
  let me;
  try {
    me = await checkRemote(backend, baseUrl);
  } catch (e) {
    await backend.close();
    throw new StartError((e as Error).message);
  }
  if (!process.env.WORKSPACE_DATA_DIR) makeDataDir(dataDir);
  const [{ remoteSearch }, { JsonlAuditTrail }] = await Promise.all([import('./search.js'), import('../mcp/money/audit.js')]);
  const search = remoteSearch(backend, dataDir, { baseUrl, ...configured, seen });
  const wired: Wired = { backend, audit: new JsonlAuditTrail(join(dataDir, AUDIT_FILE)), ...search };
  return {
    // By the key, not by getMe's owner: getMe may be switched off (then it answers 410).
    scope: `remote ${baseUrl} key ${createHash('sha256').update(apiKey).digest('hex')}`,
    ownerId: me.id || undefined,
    dataDir,
    wire: () => Promise.resolve(wired),
    async close() {
      await search.contacts.close?.();
      await backend.close();
    },
    banner: {
      remote: baseUrl,
      owner: me.id ? { id: me.id, name: me.name, via: 'WORKSPACE_API_KEY', ...(configured.botId !== undefined ? { defaultBot: configured.botId } : {}) } : undefined,
    },
  };
}

function nameList(v: unknown): string[] | undefined {
  if (typeof v !== 'string') return undefined;
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * The money caps: the remote mode's defaults, then `--money-policy FILE` (or
 * `$WORKSPACE_MONEY_POLICY`), then `--max-amount` / `--max-daily` (or their env), each over the last.
 */
function moneyPolicy(values: Record<string, unknown>, remote: boolean): MoneyPolicy {
  const policy: MoneyPolicy = { maxAmount: remote ? { ...REMOTE_DEFAULTS.maxAmount } : {}, maxDaily: remote ? { ...REMOTE_DEFAULTS.maxDaily } : {}, noConfirm: values['no-confirm'] === true };
  const file = (values['money-policy'] as string | undefined) ?? (process.env.WORKSPACE_MONEY_POLICY || undefined);
  try {
    if (file !== undefined) {
      let json: { max_amount?: unknown; max_daily?: unknown };
      try {
        json = JSON.parse(readFileSync(expandHome(file), 'utf8'));
      } catch (e) {
        throw new Error(`cannot be read as JSON: ${(e as Error).message}`);
      }
      if (json.max_amount !== undefined) policy.maxAmount = limitsOf(json.max_amount, 'max_amount');
      if (json.max_daily !== undefined) policy.maxDaily = limitsOf(json.max_daily, 'max_daily');
    }
  } catch (e) {
    throw new UsageError(`--money-policy ${file}: ${(e as Error).message}`);
  }
  const amount = (values['max-amount'] as string | undefined) ?? (process.env.WORKSPACE_MAX_AMOUNT || undefined);
  const daily = (values['max-daily'] as string | undefined) ?? (process.env.WORKSPACE_MAX_DAILY || undefined);
  try {
    if (amount !== undefined) policy.maxAmount = { '*': checkLimit(amount, '--max-amount') };
    if (daily !== undefined) policy.maxDaily = { '*': checkLimit(daily, '--max-daily') };
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  return policy;
}

/** The banner's money line: the caps, and loudly when confirmation is off. */
function moneyLine(p: MoneyPolicy): string {
  const show = (l: Record<string, string>) => Object.entries(l).map(([c, v]) => (c === '*' ? v : `${v} ${c}`)).join(', ') || 'off';
  const caps = hasCaps(p) ? `caps ${show(p.maxAmount)} a call, ${show(p.maxDaily)} per account per 24 h` : 'no caps';
  return p.noConfirm ? `${caps}; confirmation is OFF (--no-confirm): calls over a cap move money without asking anyone` : caps;
}

export async function runMcp(args: string[]): Promise<void> {
  const { values } = parse(args, COMMANDS.mcp.flags);
  const remoteSource = values.remote !== undefined ? '--remote' : 'WORKSPACE_BASE_URL';
  const remote = (values.remote as string | undefined) ?? (values.db === undefined ? process.env.WORKSPACE_BASE_URL || undefined : undefined);
  if (values.remote !== undefined && values.db !== undefined) throw new UsageError('--db and --remote cannot be used together');
  if (remote !== undefined && values['rate-limit'] !== undefined) throw new UsageError('--rate-limit applies to the local backend only');
  if (!values.http && (values.port !== undefined || values.host !== undefined)) throw new UsageError('--port and --host need --http');
  // One person's own database: no rate limit unless asked for (serve keeps the spec's 120).
  const rateLimit = intFlag(values['rate-limit'], 'rate-limit', 0, Number.MAX_SAFE_INTEGER, 'requests a minute per owner; 0 turns the limit off') ?? 0;
  const port = intFlag(values.port, 'port', 0, 65535) ?? 8765;
  const host = (values.host as string | undefined) ?? '127.0.0.1';
  const maxResultChars =
    intFlag(values['max-result-chars'], 'max-result-chars', MIN_RESULT_BUDGET, Number.MAX_SAFE_INTEGER, 'characters of a tool result or resource read') ??
    RESULT_BUDGET;
  const filter: ToolFilter = {
    readOnly: values['read-only'] === true,
    tools: nameList(values.tools),
    excludeTools: nameList(values['exclude-tools']),
  };
  // Without tool flags there is nothing to check, and the catalog (every method's schemas) is
  // left for the first request that needs it.
  // Which tools are served, for the instructions the first answer carries. Without flags, every
  // tool: both backends here give findContacts and getWorkspace their search and directory.
  let isServed: (name: string) => boolean = () => true;
  if (filter.readOnly || filter.tools || filter.excludeTools) {
    const { checkToolFilter } = await import('../mcp/serve/tool-filter.js');
    try {
      const names = checkToolFilter(filter);
      isServed = (name) => names.includes(name);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
  }

  const configured: Configured = {
    botId: intFlag(values.bot ?? (process.env.WORKSPACE_BOT_ID || undefined), 'bot', 1, Number.MAX_SAFE_INTEGER, 'the default bot; also WORKSPACE_BOT_ID'),
    botSource: values.bot !== undefined ? '--bot' : 'WORKSPACE_BOT_ID',
    projectUuid: (values.project as string | undefined) ?? (process.env.WORKSPACE_PROJECT_UUID || undefined),
  };
  if (configured.projectUuid !== undefined && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(configured.projectUuid))
    throw new UsageError(`--project must be a project uuid, not ${configured.projectUuid}`);
  const policy = moneyPolicy(values, remote !== undefined);
  const seen = new SeenIds();
  const opened =
    remote !== undefined
      ? await openRemote(remote, remoteSource, configured, seen)
      : await openLocal(values.db as string | undefined, rateLimit, configured);
  let state: McpState;
  try {
    state = opened.state ?? McpStateStore.open(join(opened.dataDir, MCP_STATE_FILE));
  } catch (e) {
    await opened.close();
    throw new StartError(`the MCP server's state file cannot be opened: ${(e as Error).message}`);
  }
  const setup: BackendSetup = {
    ...opened,
    banner: { ...opened.banner, money: moneyLine(policy) },
    async close() {
      await opened.close();
      state.close();
    },
  };
  /** The context and the tools over the wired backend; the MCP layer's code is loaded here. */
  const serving = async (): Promise<{ ctx: McpContext; tools: ToolSpec[]; wiringOf: (ctx: McpContext, tools: ToolSpec[]) => Wiring }> => {
    const [wired, { McpContext }, { selectTools, wiringOf }] = await Promise.all([setup.wire(), import('../mcp/context.js'), import('../mcp/serve/server.js')]);
    const ctx = new McpContext({
      backend: wired.backend,
      keys: state.keys(setup.scope),
      dataDir: setup.dataDir,
      ownerId: setup.ownerId,
      contacts: wired.contacts,
      directory: wired.directory,
      audit: wired.audit,
      accountHolder: wired.accountHolder,
      questionKey: setup.shared?.questionKey,
      money: { policy, window: state.moves(setup.scope) },
      defaultBotId: configured.botId,
      startNote: setup.startNote,
      seen,
      maxResultChars,
      ui: values['no-ui'] !== true,
    });
    return { ctx, tools: selectTools(ctx, filter), wiringOf };
  };

  if (values.http) {
    // The Streamable HTTP transport is loaded only when asked for: stdio starts faster.
    const [{ isLoopback, serveMcpHttp }, { ctx, tools }] = await Promise.all([import('../mcp/serve/http.js'), serving()]);
    const chosen = process.env.WORKSPACE_MCP_TOKEN || undefined;
    const token = chosen ?? (isLoopback(host) ? undefined : randomBytes(24).toString('base64url'));
    let http;
    try {
      http = await serveMcpHttp(ctx, tools, { host, port, token });
    } catch (e) {
      await setup.close();
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE') throw new StartError(`port ${port} on ${host} is in use: give --port another number (0: any free port)`);
      if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new StartError(`--host ${host} is not an address of this machine: give one it has, e.g. 127.0.0.1`);
      throw e;
    }
    const header = token === undefined ? '' : ` --header "Authorization: Bearer ${chosen ? '$WORKSPACE_MCP_TOKEN' : token}"`;
    // Bound to every interface (0.0.0.0): the addresses a client reaches, this machine's first.
    const [url, ...others] = reachableUrls(http.url, host) as [string, ...string[]];
    printBanner({
      ready: `MCP server ready at ${url}${others.length ? ` (also ${others.join(', ')})` : ''} (Streamable HTTP)`,
      ...setup.banner,
      // A token made here is shown: clients need it, and it changes with every start.
      ...(token !== undefined && !chosen ? { token: `${token} (clients must send "Authorization: Bearer ${token}"; set WORKSPACE_MCP_TOKEN to choose it)` } : {}),
      config: JSON.stringify({ mcpServers: { workspace: { type: 'http', url, ...(token !== undefined ? { headers: { Authorization: `Bearer ${chosen ? '<WORKSPACE_MCP_TOKEN>' : token}` } } : {}) } } }),
      connect: `claude mcp add --transport http workspace ${url}${header}`,
    });
    process.stdout.write(`${url}\n`); // stdout-ok: --http announces its URL (stdout is not the protocol here)
    const stop = () => {
      void http.close().then(() => setup.close()).finally(() => process.exit(0));
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return;
  }

  // Both protocol eras over one connection: the first message (initialize, or server/discover
  // of 2026-07-28) picks the era, and the factory builds the instance that serves it. The
  // instance answers it at once; the tools, and the service under them, are loaded by the first
  // request that needs them (every start-up check is done by now).
  const factory = instanceFactory(async () => {
    const { ctx, tools, wiringOf } = await serving();
    return wiringOf(ctx, tools);
  }, instructionsFor(isServed, maxResultChars));
  let closing = false;
  const stop = () => {
    if (closing) return;
    closing = true;
    void served
      .close()
      .then(() => setup.close())
      .finally(() => process.exit(0));
  };
  const served = serveStdio((rc) => factory(rc), {
    transport: new StdioServerTransport(),
    onerror: (e) => log.warn({ err: e }, 'MCP stdio'),
  });
  process.stdin.once('end', stop);
  process.stdin.once('close', stop);
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const entry = stdioEntry(
    stdioArgs(values, remote, setup),
    remote !== undefined || setup.banner.owner?.via === 'WORKSPACE_API_KEY',
    // The URL holds a password and the secret is one: both named, never shown.
    setup.shared ? { DATABASE_URL: '<your postgres:// URL>', WORKSPACE_SECRET: '<the shared secret>' } : {},
  );
  printBanner({
    ready: 'MCP server ready over stdio (stdin and stdout carry the protocol: start it from an MCP client)',
    ...setup.banner,
    // The whole block for a client's config file, and Claude Code's command.
    config: mcpServersJson(entry),
    connect: claudeMcpAdd(entry),
  });
}

/** The arguments that start this same server from a client's config: absolute paths, same flags. */
function stdioArgs(values: Record<string, string | boolean | undefined>, remote: string | undefined, setup: BackendSetup): string[] {
  const out = remote !== undefined ? ['--remote', setup.banner.remote!] : setup.shared ? [] : ['--db', setup.banner.database!.file];
  if (values['rate-limit'] !== undefined) out.push('--rate-limit', String(values['rate-limit']));
  if (values['read-only']) out.push('--read-only');
  if (values['no-ui']) out.push('--no-ui');
  if (typeof values.tools === 'string') out.push('--tools', values.tools);
  if (typeof values['exclude-tools'] === 'string') out.push('--exclude-tools', values['exclude-tools']);
  if (typeof values.bot === 'string') out.push('--bot', values.bot);
  if (typeof values.project === 'string') out.push('--project', values.project);
  if (typeof values['max-result-chars'] === 'string') out.push('--max-result-chars', values['max-result-chars']);
  return out;
}
