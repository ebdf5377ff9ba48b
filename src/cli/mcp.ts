/**
 * `workspace-mcp [mcp]`: the MCP server, over stdio (default) or Streamable HTTP (`--http`),
 * on the built-in service over a SQLite file (default) or a PostgreSQL database that several
 * instances share (`--db postgres://…`), or on a remote Workspace API (`--remote`).
 * In stdio mode stdout carries only the protocol: every message of ours goes to stderr.
 */
import { join } from 'node:path';
import { SeenIds } from '../mcp/seen.js';
import type { ToolFilter } from '../mcp/serve/tool-filter.js';
import { instructionsFor } from '../mcp/serve/instructions.js';
import type { MoneyPolicy } from '../mcp/money/caps.js';
import { MIN_RESULT_BUDGET, RESULT_BUDGET } from '../mcp/result/budget.js';
import type { Callers } from '../mcp/serve/http.js';
import { intFlag, parse, UsageError } from './args.js';
import { COMMANDS, version } from './help.js';
import type { BackendSetup, Configured, Keyed } from './mcp-backend.js';
import type { McpState } from '../state/mcp-state.js';
import { personServed, servingOver, type ServeOptions } from './mcp-context.js';
import { moneyLine, moneyPolicy } from './mcp-money.js';
import { startStdio } from './mcp-stdio.js';
import { builtToolList } from './tool-list.js';
import { StartError } from './start-error.js';
import { takePort } from './take-port.js';
import { envSecret, findSecret } from '../service/secrets.js';
import { locateDb } from './paths.js';
import { isLoopbackHost } from '../common/loopback.js';
import type { Bound } from '../common/drain.js';
import { SCOPES, type Scope } from '../api/scopes.js';

type Values = Record<string, string | boolean | undefined>;

/** Where the server runs and what it serves: the flags checked first (then the tool filter, the default bot, the money caps). */
interface StartFlags {
  /** The remote API's base URL: `--remote`, else $WORKSPACE_BASE_URL when `--db` is not given. */
  remote: string | undefined;
  /** Which of the two named it, for messages. */
  remoteSource: string;
  rateLimit: number;
  port: number;
  host: string;
  /** `--allowed-hosts`: more names requests may carry as their Host. */
  allowedHosts?: string[];
  /** `--scopes`: the most any request may reach. */
  scopes?: Scope[];
  maxResultChars: number;
  filter: ToolFilter;
}

/** The flags of `mcp` that say where it runs and what it serves, checked. */
function startFlags(values: Values): StartFlags {
  const remoteSource = values.remote !== undefined ? '--remote' : 'WORKSPACE_BASE_URL';
  const remote =
    (values.remote as string | undefined) ?? (values.db === undefined ? process.env.WORKSPACE_BASE_URL || undefined : undefined);
  if (values.remote !== undefined && values.db !== undefined) throw new UsageError('--db and --remote cannot be used together');
  if (remote !== undefined && values['rate-limit'] !== undefined) throw new UsageError('--rate-limit applies to the local backend only');
  if (!values.http && (values.port !== undefined || values.host !== undefined || values['allowed-hosts'] !== undefined))
    throw new UsageError('--port, --host and --allowed-hosts need --http');
  if (!values.http && values.scopes !== undefined) throw new UsageError('--scopes needs --http');
  // One person's own database: no rate limit unless asked for (serve keeps the spec's 120).
  const rateLimit =
    intFlag(values['rate-limit'], 'rate-limit', 0, Number.MAX_SAFE_INTEGER, 'requests a minute per owner; 0 turns the limit off') ?? 0;
  const port = intFlag(values.port, 'port', 0, 65535) ?? 8765;
  const host = (values.host as string | undefined) ?? '127.0.0.1';
  const maxResultChars =
    intFlag(
      values['max-result-chars'],
      'max-result-chars',
      MIN_RESULT_BUDGET,
      Number.MAX_SAFE_INTEGER,
      'characters of a tool result or resource read',
    ) ?? RESULT_BUDGET;
  const filter: ToolFilter = {
    readOnly: values['read-only'] === true,
    tools: nameList(values.tools),
    excludeTools: nameList(values['exclude-tools']),
  };
  return {
    remote,
    remoteSource,
    rateLimit,
    port,
    host,
    allowedHosts: hostList(values['allowed-hosts']),
    scopes: scopeList(values.scopes),
    maxResultChars,
    filter,
  };
}

/** `--scopes a,b`: the scopes any request may reach, workspace:read always among them. */
function scopeList(v: unknown): Scope[] | undefined {
  const names = nameList(v);
  if (names === undefined) return undefined;
  const bad = names.find((n) => !(SCOPES as readonly string[]).includes(n));
  if (bad !== undefined || names.length === 0)
    throw new UsageError(`--scopes takes scopes separated by commas, of ${SCOPES.join(', ')}; not ${bad ?? String(v)}`);
  return SCOPES.filter((s) => s === 'workspace:read' || names.includes(s));
}

/** `--allowed-hosts a,b`: host names as a Host header writes them (no scheme, port or path), lower-cased. */
function hostList(v: unknown): string[] | undefined {
  const names = nameList(v)?.map((n) => n.toLowerCase());
  if (names === undefined) return undefined;
  const bad = names.find((n) => !/^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)$/.test(n));
  if (bad !== undefined || names.length === 0)
    throw new UsageError(`--allowed-hosts takes host names separated by commas (mcp.example.com,10.0.0.5), not ${bad ?? String(v)}`);
  return names;
}

/** The names of a comma-separated flag (`--tools a,b`), or undefined when it is not given. */
function nameList(v: unknown): string[] | undefined {
  if (typeof v !== 'string') return undefined;
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * Which tools are served, for the instructions the first answer carries. Without tool flags
 * there is nothing to check, and the catalog (every method's schemas) is left for the first
 * request that needs it: every tool is served (both backends here give findContacts and
 * getWorkspace their search and directory).
 */
async function servedTools(filter: ToolFilter): Promise<(name: string) => boolean> {
  if (!(filter.readOnly || filter.tools || filter.excludeTools)) return () => true;
  const { checkToolFilter } = await import('../mcp/serve/tool-filter.js');
  try {
    const names = checkToolFilter(filter);
    return (name) => names.includes(name);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/** The default bot and project the user gave: `--bot`, `--project` or their env, checked for form. */
function configuredOf(values: Values): Configured {
  const configured: Configured = {
    botId: intFlag(
      values.bot ?? (process.env.WORKSPACE_BOT_ID || undefined),
      'bot',
      1,
      Number.MAX_SAFE_INTEGER,
      'the default bot; also WORKSPACE_BOT_ID',
    ),
    botSource: values.bot !== undefined ? '--bot' : 'WORKSPACE_BOT_ID',
    projectUuid: (values.project as string | undefined) ?? (process.env.WORKSPACE_PROJECT_UUID || undefined),
  };
  if (
    configured.projectUuid !== undefined &&
    !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(configured.projectUuid)
  )
    throw new UsageError(`--project must be a project uuid, not ${configured.projectUuid}`);
  return configured;
}

/**
 * `opened` with the MCP server's own state (the backend's on PostgreSQL, else the SQLite file
 * `stateFile` in its data folder) and the money caps in its banner; closing it closes both.
 */
async function withState(opened: BackendSetup, policy: MoneyPolicy, stateFile: string): Promise<Opened> {
  let state: McpState;
  try {
    if (opened.state) state = opened.state;
    else {
      const [{ McpStateStore }, { answeredAtOnce }] = await Promise.all([import('../state/mcp-state.js'), import('../state/async.js')]);
      state = answeredAtOnce(McpStateStore.open(join(opened.dataDir, stateFile)));
    }
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
  return { setup, state };
}

/** The backend, opened and checked, and the MCP server's own state. */
interface Opened {
  setup: BackendSetup;
  state: McpState;
}

/**
 * Open the backend and the MCP state: every start-up check of the database, the key and the
 * URL is made here (its code, the store and SQLite among it, is loaded here too).
 */
async function openBackend(flags: StartFlags, values: Values, configured: Configured, policy: MoneyPolicy, seen: SeenIds, keyed: boolean) {
  const [{ openLocal, MCP_STATE_FILE }, remote] = await Promise.all([
    import('./mcp-backend.js'),
    flags.remote !== undefined ? import('./mcp-remote.js') : undefined,
  ]);
  const opened =
    flags.remote !== undefined
      ? await remote!.openRemote(flags.remote, flags.remoteSource, configured, seen, keyed)
      : await openLocal(values.db as string | undefined, flags.rateLimit, configured, keyed);
  return withState(opened, policy, MCP_STATE_FILE);
}

/** `--auth key`: who each request is, by the backend, and each person's context and tools (mcp-context.ts). */
function callersOver(setup: BackendSetup, state: McpState, keyed: Keyed, o: ServeOptions): Callers {
  return {
    ...(keyed.within ? { within: keyed.within } : {}),
    owner: (key) => keyed.owner(key),
    served: personServed(setup, state, keyed, o),
  };
}

/** How `--http` knows who calls: one token, each request's own key, or OAuth sign-in (its public URL and the secret that seals keys). */
type Auth =
  | { kind: 'token' }
  | { kind: 'key'; perPerson: number }
  /** `master`: WORKSPACE_SECRET; unset, the built-in service's database's own secret (databaseSecret). */
  | { kind: 'oauth'; perPerson: number; publicUrl: URL; master: Buffer | undefined };

/** `--auth oauth`: the authorization server over the MCP state's grants, checking keys with the backend's getMe. */
async function signInOver(
  state: McpState,
  keyed: Keyed,
  auth: Auth & { kind: 'oauth'; master: Buffer },
  scopes: readonly string[] | undefined,
) {
  const [{ OAuthServer }, { sealerOf }] = await Promise.all([import('../oauth/server.js'), import('../oauth/secrets.js')]);
  return new OAuthServer({
    publicUrl: auth.publicUrl,
    store: state.oauth(),
    sealer: sealerOf(auth.master),
    checkKey: (key) => keyed.owner(key),
    ...(scopes ? { scopes } : {}),
  });
}

/** `--auth`: token (the default), key or oauth; key and oauth only with --http and no default bot or project of one person's. */
function authOf(values: Values, flags: StartFlags): Auth {
  const auth = (values.auth as string | undefined) ?? 'token';
  if (auth !== 'token' && auth !== 'key' && auth !== 'oauth') throw new UsageError(`--auth must be token, key or oauth, not ${auth}`);
  if (auth === 'token') {
    if (values['public-url'] !== undefined) throw new UsageError('--public-url needs --auth oauth');
    if (values['person-rate'] !== undefined) throw new UsageError('--person-rate needs --auth key or --auth oauth');
    return { kind: 'token' };
  }
  if (!values.http) throw new UsageError(`--auth ${auth} needs --http`);
  {
    const one = [
      ['--bot', values.bot],
      ['WORKSPACE_BOT_ID', process.env.WORKSPACE_BOT_ID || undefined],
      ['--project', values.project],
      ['WORKSPACE_PROJECT_UUID', process.env.WORKSPACE_PROJECT_UUID || undefined],
    ].find(([, v]) => v !== undefined);
    if (one)
      throw new UsageError(
        `${one[0]} names one person's bot or project, and --auth ${auth} serves everyone: leave it out (each person's default bot is their only bot)`,
      );
  }
  const perPerson =
    intFlag(values['person-rate'], 'person-rate', 0, 1_000_000, 'requests a minute per person; 0 turns the limit off') ?? 600;
  if (auth === 'key') {
    if (values['public-url'] !== undefined) throw new UsageError('--public-url needs --auth oauth');
    return { kind: 'key', perPerson };
  }
  const publicUrl = publicUrlOf(values['public-url']);
  // The consent page takes people's API keys: plain http is for trials on this machine only.
  if (publicUrl.protocol === 'http:' && !isLoopbackHost(flags.host))
    throw new UsageError(
      `--public-url ${publicUrl.origin} is plain http, and --host ${flags.host} listens beyond this machine, so the page that takes people's API keys would cross the network in clear: serve it behind TLS and give --public-url https://your.host, or listen on this machine only (leave out --host, or --host 127.0.0.1)`,
    );
  return { kind: 'oauth', perPerson, publicUrl, master: oauthSecret(flags.remote !== undefined) };
}

/** `--public-url`: https (http on a loopback host, for trials), an origin without a path, query or fragment. */
function publicUrlOf(v: unknown): URL {
  if (typeof v !== 'string' || v === '')
    throw new UsageError(
      '--auth oauth needs --public-url URL: the https:// address people reach this server at (e.g. https://mcp.example.com)',
    );
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new UsageError(`--public-url ${v} is not a URL: give https://your.host`);
  }
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && isLoopbackHost(u.hostname)))
    throw new UsageError(`--public-url ${v} must be https:// (http:// only on a loopback host, for trials): hosts sign in only over TLS`);
  if ((u.pathname !== '/' && u.pathname !== '') || u.search || u.hash || u.username || u.password)
    throw new UsageError(`--public-url ${v} must be an origin alone (https://your.host), without a path: the MCP endpoint is its /mcp`);
  return u;
}

/**
 * WORKSPACE_SECRET, which seals the keys people sign in with. Unset, a database of the built-in
 * service gives its own (databaseSecret); a remote API has none of ours, so there it is required.
 */
function oauthSecret(remote: boolean): Buffer | undefined {
  let master: Buffer | undefined;
  try {
    master = envSecret();
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (!master && remote)
    throw new UsageError(
      '--auth oauth with --remote needs WORKSPACE_SECRET (it seals the API keys people sign in with; keep it, and the same on every instance): set it, e.g. export WORKSPACE_SECRET=$(openssl rand -hex 32)',
    );
  return master;
}

/**
 * The secret of the SQLite database `--auth oauth` runs over without WORKSPACE_SECRET: its own
 * `.secret` file, found (or made) and checked when the backend was opened. Keys sealed with it
 * open on every later start over that database, as its encrypted values do.
 */
function databaseSecret(db: string | undefined): Buffer {
  const source = findSecret(locateDb(db).file);
  if (source.kind !== 'file') throw new Error(`the secret of ${locateDb(db).file} was not found after the database was opened`);
  return source.master;
}

export async function runMcp(args: string[]): Promise<void> {
  const { values } = parse(args, COMMANDS.mcp.flags);
  const flags = startFlags(values);
  const auth = authOf(values, flags);
  const keyed = auth.kind !== 'token';
  const isServed = await servedTools(flags.filter);
  const configured = configuredOf(values);
  const policy = moneyPolicy(values, flags.remote !== undefined);
  const seen = new SeenIds();
  const options: ServeOptions = {
    policy,
    defaultBotId: configured.botId,
    seen,
    maxResultChars: flags.maxResultChars,
    filter: flags.filter,
    ui: values['no-ui'] !== true,
    http: values.http === true,
  };
  if (!values.http) {
    // Over stdio the opening message is answered first (it needs only the name, the
    // capabilities and the instructions); the backend is opened and checked right after, and a
    // check that fails still ends the start with one line and exit status 2 (main.ts). Every
    // other request waits for it.
    let opening: Promise<Opened> | undefined;
    const open = () => (opening ??= openBackend(flags, values, configured, policy, seen, keyed));
    const wiring = async () => {
      const { setup, state } = await open();
      const { ctx, tools, wiringOf } = await servingOver(setup, state, options)();
      return wiringOf(ctx, tools);
    };
    // No flag that changes the list (the tool flags, --no-ui): the build's answer to the first
    // tools/list, given before the tools load (test/cli/tool-list-early.test.ts holds it to theirs).
    const { readOnly, tools, excludeTools } = flags.filter;
    const listedEarly = readOnly || tools || excludeTools || !options.ui ? undefined : builtToolList;
    return startStdio(
      wiring,
      instructionsFor(isServed, flags.maxResultChars),
      () => open().then((o) => o.setup),
      values,
      flags.remote,
      listedEarly,
    );
  }
  // The port first: a start refused for it (taken, or no address of this machine) has made
  // nothing, and of two starts on one port only the one that took it opens the backend.
  const { bindMcpHttp } = await import('../mcp/serve/http.js');
  const bound = await takePort(() => bindMcpHttp({ host: flags.host, port: flags.port, version: version() }), flags.host, flags.port);
  try {
    await startHttpOver(flags, values, auth, configured, policy, seen, options, bound);
  } catch (e) {
    await bound.close();
    throw e;
  }
}

/** The `--http` server on the port `bound` took: the backend opened and checked, then its handler installed. */
async function startHttpOver(
  flags: StartFlags,
  values: Values,
  auth: Auth,
  configured: Configured,
  policy: MoneyPolicy,
  seen: SeenIds,
  options: ServeOptions,
  bound: Bound,
): Promise<void> {
  const keyed = auth.kind !== 'token';
  const { setup, state } = await openBackend(flags, values, configured, policy, seen, keyed);
  const { startHttp, startHttpByKey } = await import('./mcp-http.js');
  const listen = { host: flags.host, port: flags.port, allowedHosts: flags.allowedHosts, scopes: flags.scopes, bound };
  if (setup.keyed) {
    const callers = { ...callersOver(setup, state, setup.keyed, options), perPersonPerMinute: auth.kind === 'token' ? 0 : auth.perPerson };
    if (auth.kind !== 'oauth') return startHttpByKey(callers, setup, listen);
    // On PostgreSQL the database was opened with WORKSPACE_SECRET (it is required there).
    const master = auth.master ?? databaseSecret(values.db as string | undefined);
    const signIn = await signInOver(state, setup.keyed, { ...auth, master }, flags.scopes);
    const closing: BackendSetup = { ...setup, close: () => signIn.close().then(() => setup.close()) };
    // On a remote API each getMe counts against the person's 120 a minute: their key is asked about at most every 30 s.
    const keyRecheckMs = flags.remote !== undefined ? 30_000 : 0;
    return startHttpByKey({ ...callers, signIn, keyRecheckMs }, closing, listen, auth.publicUrl);
  }
  return startHttp(servingOver(setup, state, options), setup, listen);
}
