/**
 * The SDK's real clients of both protocol eras behind one small face, so a suite runs
 * unchanged with either: the v1 SDK's `Client` (2025-11-25: initialize, a session), which
 * many hosts still embed, and the v2 `Client` pinned to 2026-07-28 (server/discover, a
 * `_meta` envelope on every request, no fallback: a server that does not offer 2026-07-28
 * fails its connect). Over in-memory pipes, stdio and Streamable HTTP. Every tool result and
 * resource read of either is checked against the result budget (test/helpers/budget.ts).
 */
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1Stdio } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as V1Http } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport as V1InMemory } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceListChangedNotificationSchema,
  type CallToolResult,
  type CompleteRequest,
  type CompleteResult,
  type ElicitResult,
  type GetPromptResult,
  type ListPromptsResult,
  type ListResourcesResult,
  type ListResourceTemplatesResult,
  type ListToolsResult,
  type LoggingLevel,
  type ReadResourceResult,
} from '@modelcontextprotocol/sdk/types.js';
import {
  Client as V2Client,
  InMemoryTransport as V2InMemory,
  LOG_LEVEL_META_KEY,
  StreamableHTTPClientTransport as V2Http,
} from '@modelcontextprotocol/client';
import { StdioClientTransport as V2Stdio } from '@modelcontextprotocol/client/stdio';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { McpServerFactory } from '../../src/mcp/serve/server.js';
import { withinBudget } from '../helpers/budget.js';

/** The protocol revision a client speaks. */
export type Era = '2025-11-25' | '2026-07-28';
export const ERAS: readonly Era[] = ['2025-11-25', '2026-07-28'];

/**
 * What a client is told: speak this era, or 'auto': the v2 client probes with server/discover
 * and falls back to initialize unless the answer is modern (Claude Code's and claude.ai's way).
 */
export type Negotiation = Era | 'auto';

/** The era the in-memory behaviour suites run with in this test project ($WORKSPACE_TEST_ERA). */
export const TEST_ERA: Era = process.env.WORKSPACE_TEST_ERA === '2026-07-28' ? '2026-07-28' : '2025-11-25';

interface CallOptions {
  onprogress?: (p: { progress: number; total?: number; message?: string }) => void;
  signal?: AbortSignal;
  timeout?: number;
}

/** What a form question gets back from the client's user. */
export type ElicitAnswer = (params: { message: string; requestedSchema?: unknown }) => ElicitResult;

export interface McpClient {
  /** The era spoken (for 'auto': the one negotiated). */
  era: Era;
  serverName(): string | undefined;
  /** The server's instructions (initialize's, or server/discover's). */
  getInstructions(): string | undefined;
  listTools(): Promise<ListToolsResult>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }, o?: CallOptions): Promise<CallToolResult>;
  /** One page, also on 2026-07-28 (whose client walks every page unless given a cursor). */
  listResources(params?: { cursor?: string }): Promise<ListResourcesResult>;
  listResourceTemplates(): Promise<ListResourceTemplatesResult>;
  readResource(params: { uri: string }): Promise<ReadResourceResult>;
  complete(params: CompleteRequest['params']): Promise<CompleteResult>;
  listPrompts(): Promise<ListPromptsResult>;
  getPrompt(params: { name: string; arguments?: Record<string, string> }): Promise<GetPromptResult>;
  /** Hear notifications/resources/list_changed: unsolicited on 2025, on a subscriptions/listen stream on 2026. */
  onResourcesChanged(fn: () => void): Promise<void>;
  /** Hear notifications/message. */
  onLog(fn: (p: { level: LoggingLevel; logger?: string; data: unknown }) => void): void;
  /** The least severe level to hear: logging/setLevel on 2025, the level in each request's _meta on 2026. */
  setLogLevel(level: LoggingLevel): Promise<void>;
  /** How form questions (elicitation) are answered; unset, they are declined. */
  answer(fn: ElicitAnswer): void;
  close(): Promise<void>;
}

/** What a client declares beside elicitation (an MCP Apps host: `extensions`). */
type ExtraCapabilities = { extensions?: Record<string, { mimeTypes: string[] }> };

/**
 * How a client is made: `budget` is the server's --max-result-chars (RESULT_BUDGET by default);
 * by default it declares form elicitation (it can ask its user).
 */
export interface ConnectOptions {
  budget?: number;
  /** false: the client declares no elicitation (a host that cannot ask its user anything). */
  elicitation?: boolean;
  /** What else it declares (an MCP Apps host: `extensions`). */
  capabilities?: ExtraCapabilities;
}

const INFO = { name: 'test', version: '1.0.0' };

const capabilities = (o: ConnectOptions) => ({ ...(o.elicitation === false ? {} : { elicitation: { form: {} } }), ...o.capabilities });

const decline: ElicitAnswer = () => ({ action: 'decline' });

/** A client answers questions only when made declaring elicitation (the SDKs refuse the handler otherwise). */
const asks = (o: ConnectOptions) => o.elicitation !== false;

function v1(client: V1Client, o: ConnectOptions = {}): McpClient {
  let answer = decline;
  if (asks(o)) client.setRequestHandler(ElicitRequestSchema, (req) => answer(req.params as { message: string; requestedSchema?: unknown }));
  return withinBudget(
    {
      era: '2025-11-25',
      serverName: () => client.getServerVersion()?.name,
      getInstructions: () => client.getInstructions(),
      listTools: () => client.listTools(),
      callTool: (params, o = {}) => client.callTool(params, CallToolResultSchema, o) as Promise<CallToolResult>,
      listResources: (params) => client.listResources(params),
      listResourceTemplates: () => client.listResourceTemplates(),
      readResource: (params) => client.readResource(params),
      complete: (params) => client.complete(params),
      listPrompts: () => client.listPrompts(),
      getPrompt: (params) => client.getPrompt(params),
      async onResourcesChanged(fn) {
        client.setNotificationHandler(ResourceListChangedNotificationSchema, () => fn());
      },
      onLog: (fn) => client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => fn(n.params)),
      setLogLevel: async (level) => void (await client.setLoggingLevel(level)),
      answer: (fn) => void (answer = fn),
      close: () => client.close(),
    },
    o.budget,
  );
}

function v2(client: V2Client, o: ConnectOptions = {}): McpClient {
  let answer = decline;
  let logLevel: LoggingLevel | undefined;
  const meta = () => (logLevel ? { _meta: { [LOG_LEVEL_META_KEY]: logLevel } } : {});
  if (asks(o))
    client.setRequestHandler('elicitation/create', (req) => answer(req.params as { message: string; requestedSchema?: unknown }) as never);
  const cast = <T>(p: Promise<unknown>) => p as Promise<T>;
  return withinBudget(
    {
      era: client.getNegotiatedProtocolVersion() === '2026-07-28' ? '2026-07-28' : '2025-11-25',
      serverName: () => client.getServerVersion()?.name,
      getInstructions: () => client.getInstructions(),
      listTools: () => cast(client.listTools(meta())),
      callTool: (params, o = {}) => cast(client.callTool({ ...params, ...meta() }, o)),
      listResources: (params = {}) =>
        cast(params.cursor !== undefined ? client.listResources(params) : client.request({ method: 'resources/list', params: meta() })),
      listResourceTemplates: () => cast(client.listResourceTemplates(meta())),
      readResource: (params) => cast(client.readResource({ ...params, ...meta() })),
      complete: (params) => cast(client.complete({ ...params, ...meta() })),
      listPrompts: () => cast(client.listPrompts(meta())),
      getPrompt: (params) => cast(client.getPrompt({ ...params, ...meta() })),
      async onResourcesChanged(fn) {
        client.setNotificationHandler('notifications/resources/list_changed', () => fn());
        await client.listen({ resourcesListChanged: true });
      },
      onLog: (fn) =>
        client.setNotificationHandler('notifications/message', (n) =>
          fn(n.params as { level: LoggingLevel; logger?: string; data: unknown }),
        ),
      setLogLevel: async (level) => void (logLevel = level),
      answer: (fn) => void (answer = fn),
      close: () => client.close(),
    },
    o.budget,
  );
}

function newV1(o: ConnectOptions = {}): V1Client {
  return new V1Client(INFO, { capabilities: capabilities(o) });
}

/**
 * Pinned to 2026-07-28, or 'auto' whose probe has `probeMs` to be answered (some hosts allow
 * about 600 ms).
 */
function newV2(o: ConnectOptions = {}, mode: '2026-07-28' | 'auto' = '2026-07-28', probeMs?: number): V2Client {
  const versionNegotiation = mode === 'auto' ? { mode, probe: { timeoutMs: probeMs } } : { mode: { pin: mode } };
  return new V2Client(INFO, { capabilities: capabilities(o), versionNegotiation });
}

/** A client of `era` joined to the server factory's instances by an in-memory pipe (served as over stdio). */
export async function connectInMemory(era: Era, factory: McpServerFactory, o: ConnectOptions = {}): Promise<McpClient> {
  type ServerTransport = NonNullable<Parameters<typeof serveStdio>[1]>['transport'];
  if (era === '2025-11-25') {
    const [clientSide, serverSide] = V1InMemory.createLinkedPair();
    const served = serveStdio((rc) => factory(rc), { transport: serverSide as unknown as ServerTransport });
    const client = newV1(o);
    await client.connect(clientSide);
    const c = v1(client, o);
    return { ...c, close: () => c.close().then(() => served.close()) };
  }
  const [clientSide, serverSide] = V2InMemory.createLinkedPair();
  const served = serveStdio((rc) => factory(rc), { transport: serverSide });
  const client = newV2(o);
  await client.connect(clientSide);
  const c = v2(client, o);
  return { ...c, close: () => c.close().then(() => served.close()) };
}

export interface StdioServer {
  command: string;
  args: string[];
  env?: Record<string, string>;
  /** The server's stderr: 'pipe' keeps it readable (transport.stderr). */
  stderr?: 'pipe' | 'ignore' | 'inherit';
}

/**
 * A client of `era` that starts the server as a child over stdio. The pinned 2026-07-28
 * client probes with server/discover on a throw-away sibling process first (the SDK's way on
 * stdio), so the server is started twice.
 */
export async function connectStdio(era: Negotiation, server: StdioServer, o: ConnectOptions = {}): Promise<McpClient> {
  if (era === '2025-11-25') {
    const client = newV1(o);
    await client.connect(new V1Stdio(server));
    return v1(client, o);
  }
  // No short probe limit here: on stdio it would time the probe's own process start too.
  const client = newV2(o, era);
  await client.connect(new V2Stdio(server));
  return v2(client, o);
}

/** A client of `era` over Streamable HTTP, sending `headers` with every request. */
export async function connectHttp(
  era: Negotiation,
  url: string,
  headers: Record<string, string> = {},
  o: ConnectOptions = {},
): Promise<McpClient> {
  if (era === '2025-11-25') {
    const client = newV1(o);
    await client.connect(new V1Http(new URL(url), { requestInit: { headers } }));
    return v1(client, o);
  }
  const client = newV2(o, era, 600);
  await client.connect(new V2Http(new URL(url), { requestInit: { headers } }));
  return v2(client, o);
}
