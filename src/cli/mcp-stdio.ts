/** `workspace-mcp mcp` over stdio (the default): the server, and the client config that starts it again. */
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { instanceFactory, type Wiring } from '../mcp/serve/instance.js';
import { log } from '../log.js';
import { claudeMcpAdd, mcpServersJson, printBanner, stdioEntry } from './banner.js';
import type { BackendSetup } from './mcp-backend.js';

/**
 * Serve over stdin and stdout until stdin ends or SIGINT or SIGTERM, which close the server
 * and then `setup`. `instructions` are answered at once; `wiring` (the tools, and the service
 * under them) is loaded by the first request that needs it. The banner prints the client config
 * that starts the same server again: the flags `values` (`remote`: the base URL, if remote).
 */
export function startStdio(
  wiring: () => Promise<Wiring>,
  instructions: string,
  setup: BackendSetup,
  values: Record<string, string | boolean | undefined>,
  remote: string | undefined,
): void {
  // Both protocol eras over one connection: the first message (initialize, or server/discover
  // of 2026-07-28) picks the era, and the factory builds the instance that serves it. The
  // instance answers it at once; the tools, and the service under them, are loaded by the first
  // request that needs them (every start-up check is done by now).
  // MCP tasks (2025-11-25) on: over stdio the server acts with its own key, which outlives a request.
  const factory = instanceFactory(wiring, instructions, { tasks: true });
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
