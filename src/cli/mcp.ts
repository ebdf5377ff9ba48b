/**
 * `workspace-mcp [mcp]`: the MCP server, over stdio (default) or Streamable HTTP (`--http`),
 * on the built-in service over a SQLite file (default) or a remote Workspace API (`--remote`).
 * In stdio mode stdout carries only the protocol: every message of ours goes to stderr.
 */
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { DEFAULT_OWNER_SETTING, openService } from '../app/open.js';
import { defaultDataDir, resolveDbFile } from '../app/paths.js';
import { createMcpServer, selectTools, type ToolFilter } from '../mcp/server.js';
import { OrderedStdioServerTransport } from '../mcp/stdio.js';
import { Workspace } from '../mcp/workspace.js';
import type { RemoteBackend } from '../remote/client.js';
import { LocalBackend, type Backend } from '../service/backend.js';
import { log } from '../service/log.js';
import { Store } from '../store/index.js';
import type { IdempotencyStore } from '../store/idempotency.js';
import { intFlag, parse, UsageError } from './args.js';

/** What a backend needs besides itself: where idempotency keys live, where exports go, how to close. */
export interface BackendSetup {
  backend: Backend;
  keys: IdempotencyStore;
  dataDir: string;
  close(): Promise<void>;
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

/** The data folder of the MCP server's own files (exports; with --remote, its key file). */
function dataDirFor(dbFile: string | undefined): string {
  return process.env.WORKSPACE_DATA_DIR || (dbFile ? dirname(dbFile) : defaultDataDir());
}

function openLocal(dbFlag: string | undefined, rateLimit: number): BackendSetup {
  const dbFile = resolveDbFile(dbFlag);
  const service = openService(dbFile, { rateLimit, logger: log });
  const store = service.store;
  const apiKey = process.env.WORKSPACE_API_KEY;
  let identity: { apiKey: string } | { ownerId: number };
  if (apiKey) identity = { apiKey };
  else {
    const setting = store.core.setting(DEFAULT_OWNER_SETTING);
    const ownerId = setting !== undefined ? Number(setting) : store.core.firstOwner()?.id;
    if (ownerId === undefined || !Number.isInteger(ownerId)) throw new UsageError(`database ${dbFile} has no owner`);
    identity = { ownerId };
  }
  const backend = new LocalBackend(service, identity);
  return { backend, keys: store.idempotency, dataDir: dataDirFor(dbFile), close: () => backend.close() };
}

async function openRemote(baseUrl: string): Promise<BackendSetup> {
  const apiKey = process.env.WORKSPACE_API_KEY;
  if (!apiKey) throw new UsageError('--remote needs the API key in $WORKSPACE_API_KEY');
  const backend = await createRemoteBackend(baseUrl, apiKey);
  const { checkRemote } = await import('../remote/client.js');
  // A key that fails getMe (401, 402, 403) or an unreachable URL is a start-up error.
  try {
    const me = await checkRemote(backend, baseUrl);
    log.info({ owner: me.id, remote: baseUrl }, 'remote backend ready');
  } catch (e) {
    await backend.close();
    throw new UsageError((e as Error).message);
  }
  const dataDir = dataDirFor(undefined);
  // The remote API has no idempotency keys of ours: keep them in a local SQLite file.
  const state = Store.open(join(dataDir, 'mcp-state.db'));
  return {
    backend,
    keys: state.idempotency,
    dataDir,
    async close() {
      await backend.close();
      state.close();
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

export async function runMcp(args: string[]): Promise<void> {
  const { values } = parse(args, {
    db: { type: 'string' },
    'rate-limit': { type: 'string' },
    remote: { type: 'string' },
    http: { type: 'boolean' },
    port: { type: 'string' },
    host: { type: 'string' },
    'read-only': { type: 'boolean' },
    tools: { type: 'string' },
    'exclude-tools': { type: 'string' },
  });
  const remote = (values.remote as string | undefined) ?? (values.db === undefined ? process.env.WORKSPACE_BASE_URL || undefined : undefined);
  if (values.remote !== undefined && values.db !== undefined) throw new UsageError('--db and --remote cannot be used together');
  if (remote !== undefined && values['rate-limit'] !== undefined) throw new UsageError('--rate-limit applies to the local backend only');
  if (!values.http && (values.port !== undefined || values.host !== undefined)) throw new UsageError('--port and --host need --http');
  const rateLimit = intFlag(values['rate-limit'], 'rate-limit') ?? 120;
  const port = intFlag(values.port, 'port', 0, 65535) ?? 8765;
  const host = (values.host as string | undefined) ?? '127.0.0.1';
  const filter: ToolFilter = {
    readOnly: values['read-only'] === true,
    tools: nameList(values.tools),
    excludeTools: nameList(values['exclude-tools']),
  };

  const setup = remote !== undefined ? await openRemote(remote) : openLocal(values.db as string | undefined, rateLimit);
  const ws = new Workspace({ backend: setup.backend, keys: setup.keys, dataDir: setup.dataDir });
  let tools;
  try {
    tools = selectTools(ws, filter);
  } catch (e) {
    await setup.close();
    throw new UsageError((e as Error).message);
  }

  if (values.http) {
    // The Streamable HTTP transport is loaded only when asked for: stdio starts faster.
    const { isLoopback, serveMcpHttp } = await import('../mcp/http.js');
    let token = process.env.WORKSPACE_MCP_TOKEN || undefined;
    if (!token && !isLoopback(host)) {
      token = randomBytes(24).toString('base64url');
      process.stderr.write(
        `workspace-mcp: bound to ${host}, so clients must send "Authorization: Bearer ${token}" ` +
          '(set $WORKSPACE_MCP_TOKEN to choose the token)\n',
      );
    }
    const http = await serveMcpHttp(ws, tools, { host, port, token });
    process.stdout.write(`${http.url}\n`); // stdout-ok: --http announces its URL (stdout is not the protocol here)
    const stop = () => {
      void http.close().then(() => setup.close()).finally(() => process.exit(0));
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return;
  }

  const server = createMcpServer(ws, tools);
  const transport = new OrderedStdioServerTransport();
  let closing = false;
  const stop = () => {
    if (closing) return;
    closing = true;
    void server
      .close()
      .then(() => setup.close())
      .finally(() => process.exit(0));
  };
  const onclose = server.onclose;
  server.onclose = () => {
    onclose?.();
    stop();
  };
  process.stdin.once('end', stop);
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await server.connect(transport);
}
