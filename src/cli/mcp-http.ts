/** `workspace-mcp mcp --http`: the MCP server over Streamable HTTP, its bearer token and its banner. */
import { randomBytes } from 'node:crypto';
import { DRAINING, type McpContext } from '../mcp/context.js';
import type { Callers, HttpOptions, McpHttpServer } from '../mcp/serve/http.js';
import { isLoopbackHost } from '../common/loopback.js';
import type { ToolSpec } from '../mcp/tool-spec.js';
import { printBanner } from './banner.js';
import { listeningOn, reachableUrls } from './hosts.js';
import type { BackendSetup } from './mcp-backend.js';
import { tierUpSooner } from './jit.js';
import { drainOnSignals } from '../common/drain.js';
import { flushTelemetry } from '../common/telemetry.js';
import { version } from './help.js';

/**
 * Where `--http` listens (`--host`, `--port`; `bound`: that port, taken before the backend was
 * opened), the names it answers to besides (`--allowed-hosts`), what it lets requests reach (`--scopes`).
 */
type Listen = Pick<HttpOptions, 'host' | 'port' | 'allowedHosts' | 'scopes'> & { bound: NonNullable<HttpOptions['bound']> };

/** `--drain-timeout`, in ms: how long the requests in hand may take once SIGTERM came. */
let drainMs = 30_000;

/** Sets `--drain-timeout` (main.ts reads it, before the backend opens). */
export function drainFor(ms: number): void {
  drainMs = ms;
}

/**
 * Serve `serving`'s tools over Streamable HTTP on `host`:`port` until SIGINT or SIGTERM, which
 * close the server and then `setup`. Off a loopback address a bearer token is required: the one
 * in $WORKSPACE_MCP_TOKEN, else one made here and shown in the banner.
 */
export async function startHttp(
  serving: () => Promise<{ ctx: McpContext; tools: ToolSpec[] }>,
  setup: BackendSetup,
  listen: Listen,
): Promise<void> {
  const { host } = listen;
  // The Streamable HTTP transport is loaded only when asked for: stdio starts faster.
  const [{ serveMcpHttp }, { ctx, tools }] = await Promise.all([import('../mcp/serve/http.js'), serving()]);
  const chosen = process.env.WORKSPACE_MCP_TOKEN || undefined;
  // Only a loopback address, as written, runs without a token: a name (127.evil.example) may resolve anywhere;
  // --allowed-hosts names more than this machine: a page under such a name must not drive a tokenless server.
  const token = chosen ?? (isLoopbackHost(host) && !listen.allowedHosts ? undefined : randomBytes(24).toString('base64url'));
  const http = await listening(() => serveMcpHttp(ctx, tools, { ...listen, token, version: version() }), setup);
  const header = token === undefined ? '' : ` --header "Authorization: Bearer ${chosen ? '$WORKSPACE_MCP_TOKEN' : token}"`;
  // Bound to every interface (0.0.0.0): the addresses a client reaches, this machine's first.
  const [url, ...others] = reachableUrls(http.url, host) as [string, ...string[]];
  printBanner({
    ready: `MCP server ready at ${url}${others.length ? ` (also ${others.join(', ')})` : ''} (Streamable HTTP)`,
    ...setup.banner,
    // A token made here is shown: clients need it, and it changes with every start.
    ...(token !== undefined && !chosen
      ? { token: `${token} (clients must send "Authorization: Bearer ${token}"; set WORKSPACE_MCP_TOKEN to choose it)` }
      : {}),
    config: JSON.stringify({
      mcpServers: {
        workspace: {
          type: 'http',
          url,
          ...(token !== undefined ? { headers: { Authorization: `Bearer ${chosen ? '<WORKSPACE_MCP_TOKEN>' : token}` } } : {}),
        },
      },
    }),
    connect: `claude mcp add --transport http workspace ${url}${header}`,
  });
  announced(url, http, setup);
}

/** `serve()`'s server on the port taken before the backend was opened; if it fails, `setup` is closed. */
async function listening(serve: () => Promise<McpHttpServer>, setup: BackendSetup): Promise<McpHttpServer> {
  try {
    return await serve();
  } catch (e) {
    await setup.close();
    throw e;
  }
}

/**
 * `mcp --http --auth key`: every request carries its caller's own Workspace API key as its
 * bearer and acts as that key's owner (`callers`); no token of the server's own. With
 * `--auth oauth` (`callers.signIn`, `publicUrl`), each person signs in and their grant's key is used.
 */
export async function startHttpByKey(callers: Callers, setup: BackendSetup, listen: Listen, publicUrl?: URL): Promise<void> {
  const { serveMcpHttpByKey } = await import('../mcp/serve/http.js');
  const http = await listening(() => serveMcpHttpByKey(callers, { ...listen, version: version() }), setup);
  if (setup.ready) http.drain.notReadyUntil(setup.ready());
  const [url, ...others] = reachableUrls(http.url, listen.host) as [string, ...string[]];
  if (publicUrl) {
    const endpoint = `${publicUrl.origin}/mcp`;
    printBanner({
      ready: `MCP server ready at ${endpoint} (listening on ${listeningOn(http.url, listen.host)}; each person signs in with OAuth)`,
      ...setup.banner,
      config: JSON.stringify({ mcpServers: { workspace: { type: 'http', url: endpoint } } }),
      connect: `add ${endpoint} as a custom connector (claude.ai: Settings → Connectors → Add custom connector; ChatGPT: Settings → Connectors), or: claude mcp add --transport http workspace ${endpoint}`,
    });
    return announced(endpoint, http, setup);
  }
  printBanner({
    ready: `MCP server ready at ${url}${others.length ? ` (also ${others.join(', ')})` : ''} (Streamable HTTP; each request as the owner of its API key)`,
    ...setup.banner,
    config: JSON.stringify({
      mcpServers: { workspace: { type: 'http', url, headers: { Authorization: 'Bearer <your Workspace API key>' } } },
    }),
    connect: `claude mcp add --transport http workspace ${url} --header "Authorization: Bearer $WORKSPACE_API_KEY"`,
  });
  announced(url, http, setup);
}

/** The URL on stdout; SIGINT and SIGTERM drain the server (http/drain.ts), close it, then `setup`. */
function announced(url: string, http: McpHttpServer, setup: BackendSetup): void {
  tierUpSooner();
  process.stdout.write(`${url}\n`); // stdout-ok: --http announces its URL (stdout is not the protocol here)
  drainOnSignals(async () => {
    // Bulk runs stop between their steps (a task's run too, which no request waits for).
    const cut = await http.drainAndClose(drainMs, DRAINING.begin());
    await setup.close();
    // What telemetry still holds is sent before the exit.
    await flushTelemetry();
    return cut;
  });
}
