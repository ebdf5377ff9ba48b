/**
 * MCP test harness: a seeded database (a temp SQLite file, or in the `postgres` test project a
 * PostgreSQL database: helpers/store.ts), the built-in service behind a backend, the MCP
 * server, and an SDK's real Client joined to it by an in-memory pipe: the v1 SDK's (2025-11-25)
 * or, when the test project sets WORKSPACE_TEST_ERA=2026-07-28, the v2 SDK's pinned to that
 * revision (see clients.ts).
 *
 * The backend is the built-in service in-process (LocalBackend), or, when the test project sets
 * WORKSPACE_TEST_BACKEND=remote, the remote client (undici) pointed at the same service served
 * over real HTTP on 127.0.0.1: the same behaviour suites then run against both, unchanged.
 */
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Server } from 'node:http';
import { bootstrap } from '../../src/cli/open.js';
import { localSearch, remoteSearch, type SearchParts } from '../../src/cli/search-wiring.js';
import { listen } from '../../src/http/server.js';
import type { SyncOptions } from '../../src/mcp/remote/contact-index.js';
import { SeenIds } from '../../src/mcp/seen.js';
import { RemoteBackend, type RemoteOptions } from '../../src/remote/client.js';
import type { Backend } from '../../src/api/backend.js';
import { LocalBackend } from '../../src/service/backend.js';
import type { Service } from '../../src/service/pipeline.js';
import type { StoreApi } from '../../src/store/store-api.js';
import { mcpServerFactory, selectTools, type McpServerFactory, type ToolFilter } from '../../src/mcp/serve/server.js';
import type { ToolSpec } from '../../src/mcp/tool-spec.js';
import { McpContext } from '../../src/mcp/context.js';
import { JsonlAuditTrail } from '../../src/mcp/money/audit.js';
import type { AuditTrail } from '../../src/mcp/state.js';
import type { MoneyPolicy } from '../../src/mcp/money/caps.js';
import { McpStateStore } from '../../src/state/mcp-state.js';
import { answeredAtOnce, promised } from '../../src/state/async.js';
import { folderOf, openStore, removeStore, seedStore } from '../helpers/store.js';
import { connectInMemory, TEST_ERA, type ConnectOptions, type McpClient } from './clients.js';
import { accountFixture, ANN, testService, type Fixture } from '../helpers/world.js';

/** The account world (Ann and her USD account 500) plus more contacts in Alice's bot 10 and Bob's bot 20. */
export function mcpFixture(): Fixture {
  return {
    ...accountFixture(),
    contacts: [
      {
        ...ANN,
        created_at: '2026-01-01T00:00:00Z',
        tags: ['vip'],
        variables: [{ name: 'photo', value: 'https://example.com/ann.jpg', type: 1 }],
      },
      {
        id: 101,
        bot_id: 10,
        messenger: 'telegram',
        name: 'Ben',
        telegram_id: '5002',
        created_at: '2026-01-02T00:00:00Z',
        referrer_id: 100,
      },
      { id: 102, bot_id: 10, messenger: 'vk', name: 'Cid, "the third"', vk_user_id: 7003, created_at: '2026-01-03T00:00:00Z' },
      { id: 200, bot_id: 20, messenger: 'telegram', name: 'Bob fan', telegram_id: '6001', created_at: '2026-01-01T00:00:00Z' },
    ],
  };
}

/**
 * The base world with `n` more contacts in bot 10 (ids from 1000), one a second from
 * 2026-02-01; `more(i)` adds or replaces fields of the i-th.
 */
export function manyContacts(n: number, more: (i: number) => Record<string, unknown> = () => ({})): Fixture {
  const f = mcpFixture();
  const base = Date.parse('2026-02-01T00:00:00Z');
  const added = Array.from({ length: n }, (_, i) => ({
    id: 1000 + i,
    bot_id: 10,
    messenger: 'telegram',
    name: `C${i}`.padEnd(10, 'x'),
    telegram_id: String(90000 + i),
    created_at: new Date(base + i * 1000).toISOString(),
    ...more(i),
  }));
  return { ...f, contacts: [...(f.contacts as unknown[]), ...added] };
}

/** Which backend the MCP behaviour suites run over in this test project. */
export const TEST_BACKEND: 'local' | 'remote' = process.env.WORKSPACE_TEST_BACKEND === 'remote' ? 'remote' : 'local';

/** The scope of a world's idempotency keys: who it acts for, as the CLI resolves it at start-up. */
function scopeOf(o: { apiKey?: string }): string {
  return o.apiKey ? `test key ${o.apiKey}` : 'test owner 1';
}

export interface McpWorld {
  /** The folder beside the database (the MCP server's state file, exports). */
  dir: string;
  store: StoreApi;
  service: Service;
  context: McpContext;
  /** The MCP server's own state file (idempotency keys), beside the database; keys in `scopeOf(options)`. */
  state: McpStateStore;
  /** The tools served (the catalog's after the filter, then `extraTools`). */
  tools: ToolSpec[];
  /** Builds server instances over this world (for another client or transport). */
  factory: McpServerFactory;
  client: McpClient;
  /** Remote backend: the base URL of the service it talks to ('' for the local backend). */
  baseUrl: string;
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  /** Close it (again is a no-op). */
  close(): Promise<void>;
}

export interface StartOptions {
  fixture?: Fixture;
  /** Serve this existing database (a file or URL from `seedStore`, left in place on close) instead of seeding a new one. */
  dbFile?: string;
  filter?: ToolFilter;
  /** Act by this key instead of as owner 1. */
  apiKey?: string;
  rateLimit?: number;
  /** Wrap the backend (to count or fail calls). */
  wrap?: (b: Backend) => Backend;
  /** The money caps (`--max-amount`, `--max-daily`, `--no-confirm`); none when absent. */
  money?: Partial<MoneyPolicy>;
  /** `--bot`: the default bot. */
  defaultBotId?: number;
  /** Remote backend: the client's options (pacing, clock) and the search index's sync options. */
  remote?: Partial<RemoteOptions>;
  /**
   * Remote backend: the running service to talk to (another world's `baseUrl`) instead of one of
   * its own. With that world's `dbFile`, two MCP servers share one `serve` and one data folder.
   */
  serveUrl?: string;
  sync?: SyncOptions;
  /** The service's clock. */
  now?: () => Date;
  /** This backend instead of the test project's. */
  backend?: 'local' | 'remote';
  /** A new database as `serve` and `mcp` make it (the default owner, project and bot), not a fixture. */
  fresh?: boolean;
  /** Test-only tools served beside the catalog's. */
  extraTools?: ToolSpec[];
  /** The result budget (--max-result-chars); every call of the world's client is checked against it. */
  maxResultChars?: number;
  /** The client's options: false elicitation makes a client that cannot ask its user. */
  client?: Omit<ConnectOptions, 'budget'>;
  /** The MCP Apps views (`--no-ui` is false); on by default, as in the CLI. */
  ui?: boolean;
  /** Answers may name files by their path (stdio); false: by name only, as over HTTP. */
  localPaths?: boolean;
  /** How long one runBulk call goes on before it answers with the plan's progress. */
  bulkCallMs?: number;
}

export async function startMcp(o: StartOptions = {}): Promise<McpWorld> {
  const dbFile = o.dbFile ?? seedStore(o.fresh ? {} : (o.fixture ?? mcpFixture()));
  const dir = folderOf(dbFile);
  const store = openStore(dbFile);
  const kind = o.backend ?? TEST_BACKEND;
  const apiKey = o.apiKey ?? (o.fresh ? bootstrap(store) : undefined);
  const service = testService(store, { rateLimit: o.rateLimit, now: o.now });
  let http: Server | undefined;
  let inner: Backend;
  let baseUrl = '';
  if (kind === 'remote') {
    if (o.serveUrl) baseUrl = o.serveUrl;
    else {
      const served = await listen(service, '127.0.0.1', 0);
      http = served.server;
      baseUrl = served.baseUrl;
    }
    // Owner 1 of the fixtures is Alice. 429s pass through as they do locally (no waiting),
    // and no pacing: the service under test has its own limit.
    inner = new RemoteBackend({ baseUrl, apiKey: apiKey ?? 'alice-key', pacePerMinute: 0, max429Retries: 0, ...o.remote });
  } else {
    inner = new LocalBackend(service, apiKey ? { apiKey } : { ownerId: 1 });
  }
  const backend = o.wrap ? o.wrap(inner) : inner;
  const seen = new SeenIds();
  // The search and the directory as the CLI wires them for each backend.
  const search: SearchParts =
    kind === 'remote'
      ? remoteSearch(backend, dir, { baseUrl, seen, botId: o.defaultBotId }, o.sync)
      : localSearch(store, inner as LocalBackend);
  const state = McpStateStore.open(join(dir, 'mcp-state.sqlite'));
  const awaited = answeredAtOnce(state);
  // As the CLI does, the owner is learnt at start-up (local: the database's; remote: getMe's answer then).
  const ownerId = apiKey ? store.owners.byKey(apiKey)?.id : 1;
  // The audit trail as the CLI wires it: the database's (local), a JSON-lines file beside it (remote).
  const audit = kind === 'remote' ? new JsonlAuditTrail(join(dir, 'audit.jsonl')) : promised<AuditTrail>(store.audit);
  const context = new McpContext({
    backend,
    keys: awaited.keys(scopeOf(o)),
    dataDir: dir,
    ...search,
    defaultBotId: o.defaultBotId,
    seen,
    audit,
    ownerId,
    maxResultChars: o.maxResultChars,
    ui: o.ui,
    localPaths: o.localPaths,
    money: o.money && { policy: { maxAmount: {}, maxDaily: {}, noConfirm: false, ...o.money }, window: awaited.moves(scopeOf(o)) },
    plans: awaited.plans(scopeOf(o)),
    bulkCallMs: o.bulkCallMs,
  });
  const tools = [...selectTools(context, o.filter), ...(o.extraTools ?? [])];
  const factory = mcpServerFactory(context, tools);
  let closed = false;
  const client = await connectInMemory(TEST_ERA, factory, { ...o.client, budget: o.maxResultChars });
  return {
    dir,
    store,
    service,
    context,
    state,
    tools,
    factory,
    client,
    baseUrl,
    call: (name, args = {}) => client.callTool({ name, arguments: args }),
    async close() {
      if (closed) return;
      closed = true;
      await client.close();
      await search.contacts.close?.();
      if (kind === 'remote') await inner.close();
      if (http) {
        const h = http;
        await new Promise<void>((r) => {
          h.close(() => r());
          h.closeAllConnections();
        });
      }
      store.close();
      state.close();
      if (!o.dbFile) removeStore(dbFile);
    },
  };
}

/**
 * For suites that start a world per test: the returned `start` starts one (or more), and every
 * world it started is closed after each test.
 */
export function useMcp(): (o?: StartOptions) => Promise<McpWorld> {
  const open: McpWorld[] = [];
  afterEach(async () => {
    for (const w of open.splice(0)) await w.close();
  });
  return async (o) => {
    const w = await startMcp(o);
    open.push(w);
    return w;
  };
}

/** The first text content of a result, parsed. */
export function firstJson(r: CallToolResult): any {
  const c = r.content[0];
  if (c?.type !== 'text') throw new Error('first content is not text');
  return JSON.parse(c.text);
}
