/** `workspace-mcp mcp --http`: the MCP server over Streamable HTTP, its bearer token and its banner. */
import { randomBytes } from 'node:crypto';
import type { McpContext } from '../mcp/context.js';
import type { ToolSpec } from '../mcp/tool-spec.js';
import { printBanner } from './banner.js';
import { reachableUrls } from './hosts.js';
import type { BackendSetup } from './mcp-backend.js';
import { StartError } from './open.js';

/**
 * Serve `serving`'s tools over Streamable HTTP on `host`:`port` until SIGINT or SIGTERM, which
 * close the server and then `setup`. Off the loopback a bearer token is required: the one in
 * $WORKSPACE_MCP_TOKEN, else one made here and shown in the banner.
 */
export async function startHttp(
  serving: () => Promise<{ ctx: McpContext; tools: ToolSpec[] }>,
  setup: BackendSetup,
  host: string,
  port: number,
): Promise<void> {
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
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
      throw new StartError(`--host ${host} is not an address of this machine: give one it has, e.g. 127.0.0.1`);
    throw e;
  }
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
  process.stdout.write(`${url}\n`); // stdout-ok: --http announces its URL (stdout is not the protocol here)
  const stop = () => {
    void http
      .close()
      .then(() => setup.close())
      .finally(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
