/** `workspace-mcp mcp` over stdio (the default): the server, and the client config that starts it again. */
import { resolve } from 'node:path';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { ListToolsResult } from '@modelcontextprotocol/server';
import { instanceFactory, type Wiring } from '../mcp/serve/instance.js';
import { log } from '../common/log.js';
import { flushTelemetry, sessionStarted } from '../common/telemetry.js';
import { tierUpSooner } from './jit.js';
import { claudeMcpAdd, mcpServersJson, printBanner, stdioEntry } from './banner.js';
import type { BackendSetup } from './mcp-backend.js';
import { expandHome } from './paths.js';

/** How long a server that was sent nothing waits before opening its backend anyway. */
const OPEN_UNASKED_MS = 50;

/**
 * Serve over stdin and stdout until stdin ends or SIGINT or SIGTERM, which close the server
 * and then the backend. `instructions` are answered at once. `open` (the backend, with every
 * start-up check) is called once the first answer is written (with `listedEarly`, the second, or
 * OPEN_UNASKED_MS after the first), or by the first request that
 * needs it, or when stdin ends or nothing came within OPEN_UNASKED_MS; `wiring` (the tools, and
 * the service under them) is loaded by the first request that needs it. Resolves once the
 * backend is open, rejects with its start-up error (the CLI then exits with status 2). The
 * banner prints the client config that starts the same server again: the flags `values`
 * (`remote`: the base URL, if remote), the money caps among them (flags, or the variables they
 * came from). `listedEarly`: what tools/list answers while the tools load (tool-list.ts), when no
 * flag changes the list.
 */
export async function startStdio(
  wiring: () => Promise<Wiring>,
  instructions: string,
  open: () => Promise<BackendSetup>,
  values: Record<string, string | boolean | undefined>,
  remote: string | undefined,
  listedEarly?: (apps: boolean) => ListToolsResult | undefined,
): Promise<void> {
  // Both protocol eras over one connection: the first message (initialize, or server/discover
  // of 2026-07-28) picks the era, and the factory builds the instance that serves it. The
  // instance answers it at once; the tools, and the service under them, are loaded by the first
  // request that needs them, once the backend has passed every start-up check.
  // MCP tasks (2025-11-25) on: over stdio the server acts with its own key, which outlives a request.
  // A tools/list that comes before the tools loaded is answered with `listedEarly`'s list, if given.
  const factory = instanceFactory(wiring, instructions, { tasks: true, listedEarly });
  let asked!: () => void;
  const opened = new Promise<void>((resolve) => (asked = resolve)).then(open);
  /** The backend, opened when first asked for. */
  const backend = () => {
    asked();
    return opened;
  };
  let closing = false;
  // The stdio session lasts as long as the process serves (mcp.server.session.duration).
  const sessionEnded = sessionStarted('pipe');
  const stop = () => {
    if (closing) return;
    closing = true;
    sessionEnded();
    // A backend that fails its checks is main.ts's to report (one line, exit status 2).
    void backend().then(
      (setup) =>
        served
          .close()
          .then(() => setup.close())
          // What telemetry still holds is sent before the exit.
          .finally(() => flushTelemetry().finally(() => process.exit(0))),
      () => {},
    );
  };
  const transport = new StdioServerTransport();
  const send = transport.send.bind(transport);
  // The first answer written opens the backend; later messages go out as the transport sends them.
  // With an early tools/list to give, the second answer does, or OPEN_UNASKED_MS after the first:
  // a client asks tools/list as soon as it has read the opening answer, and that answer then
  // waits for none of the backend's start-up.
  let before = listedEarly ? 2 : 1;
  transport.send = async (...message) => {
    await send(...message);
    if (--before > 0) {
      setTimeout(backend, OPEN_UNASKED_MS);
      return;
    }
    transport.send = send;
    void backend().catch(() => {});
  };
  const served = serveStdio((rc) => factory(rc), {
    transport,
    onerror: (e) => log.warn({ err: e }, 'MCP stdio'),
  });
  process.stdin.once('end', stop);
  process.stdin.once('close', stop);
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const unasked = setTimeout(backend, OPEN_UNASKED_MS);
  const setup = await opened.finally(() => clearTimeout(unasked));
  // Start-up is over (the backend open: after the first answer, or nothing asked within
  // OPEN_UNASKED_MS): the calls from now on are the server's work.
  tierUpSooner();
  // The tools and the service under them load now, while the client reads the first answer,
  // rather than when its tools/list comes.
  factory.load();
  const entry = stdioEntry(stdioArgs(values, remote, setup), remote !== undefined || setup.banner.owner?.via === 'WORKSPACE_API_KEY', {
    // The URL holds a password and the secret is one: both named, never shown.
    ...(setup.shared ? { DATABASE_URL: '<your postgres:// URL>', WORKSPACE_SECRET: '<the shared secret>' } : {}),
    ...moneyEnv(values),
  });
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
  // The money caps as they were given: a config that dropped them would move money past them.
  if (typeof values['money-policy'] === 'string') out.push('--money-policy', policyPath(values['money-policy']));
  if (typeof values['max-amount'] === 'string') out.push('--max-amount', values['max-amount']);
  if (typeof values['max-daily'] === 'string') out.push('--max-daily', values['max-daily']);
  if (values['no-confirm']) out.push('--no-confirm');
  return out;
}

/** The money variables a cap came from (its flag not given: the flag wins, mcp-money.ts), for the config's env. */
function moneyEnv(values: Record<string, string | boolean | undefined>): Record<string, string> {
  const env: Record<string, string> = {};
  const from = (flag: string, name: string, value = (v: string) => v) => {
    const v = process.env[name];
    if (values[flag] === undefined && v) env[name] = value(v);
  };
  from('money-policy', 'WORKSPACE_MONEY_POLICY', policyPath);
  from('max-amount', 'WORKSPACE_MAX_AMOUNT');
  from('max-daily', 'WORKSPACE_MAX_DAILY');
  return env;
}

/** A policy file's path as a client started elsewhere finds it: absolute, ~ expanded. */
function policyPath(file: string): string {
  return resolve(expandHome(file));
}
