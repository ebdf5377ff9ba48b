/**
 * An MCP server instance: its name, capabilities and instructions (all that `initialize` and
 * `server/discover` answer) and the handlers of every other request, which may still be
 * loading. The stdio server starts answering with the instance while its tools and the
 * service under them load on the first request that needs them: the opening answer never
 * waits on them. Imports nothing of ours beyond types, so that it loads fast.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolResult,
  type ClientCapabilities,
  type JSONRPCRequest,
  type ListToolsResult,
  type Result,
  type HandlerResultTypeMap,
  type McpRequestContext,
  type RequestTypeMap,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { requestTelemetry } from '../../common/telemetry.js';
import { supportsApps } from '../composite/apps-support.js';

const SERVER_NAME = 'workspace-mcp';
const SERVER_VERSION = '0.1.0';

export interface InstanceOptions {
  /**
   * The instance sends notifications/resources/list_changed itself: over stdio (where the SDK
   * sends it on a 2026-07-28 client's subscriptions/listen stream) and in a 2025 HTTP session.
   * Off for the per-request 2026-07-28 HTTP instances: there the HTTP handler's bus tells the
   * open listen streams.
   */
  pushListChanged: boolean;
}

/** Builds server instances over one context and tool set; `(rc) => Server` is what the SDK's entries take. */
export type McpServerFactory = (rc?: McpRequestContext, o?: InstanceOptions) => Server;

/** The requests served beside the SDK's own (initialize, server/discover, ping, logging/setLevel). */
type Served =
  | 'tools/list'
  | 'tools/call'
  | 'resources/list'
  | 'resources/templates/list'
  | 'resources/read'
  | 'completion/complete'
  | 'prompts/list'
  | 'prompts/get';

/** How one request is answered, given the instance it came to. */
type RequestHandlers = {
  [M in Served]: (
    server: Server,
    req: RequestTypeMap[M],
    rctx: ServerContext,
  ) => HandlerResultTypeMap[M] | Promise<HandlerResultTypeMap[M]>;
};

/** MCP tasks (2025-11-25, see tasks.ts): each answer, or a ProtocolError thrown. */
interface TaskHandlers {
  get(id: unknown): Result;
  result(id: unknown): Promise<CallToolResult>;
  list(cursor: unknown): Result;
  cancel(id: unknown): Result;
}

/** What the instances of one server share: the handlers, and the hooks the instance needs. */
export interface Wiring {
  handlers: RequestHandlers;
  /** Present when the server runs tools as tasks. */
  tasks?: TaskHandlers;
  /** Checks the state a 2026-07-28 client echoes back (ServerOptions.requestState.verify). */
  verify(state: string, rctx: ServerContext): Promise<unknown>;
  /** Be told when the set of lists changed; returns the unsubscribe function. */
  onListsChanged(fn: () => void): () => void;
}

/** What the client declared: on this request (2026-07-28), or at initialize (2025). */
export function clientCapabilitiesOf(server: Server, rctx: ServerContext): ClientCapabilities | undefined {
  const envelope = rctx.mcpReq.envelope as { [CLIENT_CAPABILITIES_META_KEY]?: ClientCapabilities } | undefined;
  return envelope ? envelope[CLIENT_CAPABILITIES_META_KEY] : server.getClientCapabilities();
}

/**
 * The factory of server instances over `wiring`: the wiring itself, or its loader, called once
 * by the first request that needs it (a failure is retried by the next). `instructions` are
 * the server's (instructions.ts), for the tools the wiring will serve. `listedEarly`: the
 * tools/list answer the wiring would give (`apps`: to a client that declares MCP Apps), for a
 * tools/list that comes while the wiring is still loading; without it (or when it gives none),
 * the request waits for the wiring.
 */
export function instanceFactory(
  wiring: Wiring | (() => Promise<Wiring>),
  instructions: string,
  opts: { tasks?: boolean; listedEarly?: (apps: boolean) => ListToolsResult | undefined } = {},
): McpServerFactory & { load(): void } {
  let ready: Wiring | undefined = typeof wiring === 'function' ? undefined : wiring;
  let loading: Promise<Wiring> | undefined;
  /** Told of the wiring once it loaded (instances made before that subscribe then). */
  const waiting: Array<(w: Wiring) => void> = [];
  const load = wiring as () => Promise<Wiring>;
  const get = (): Wiring | Promise<Wiring> =>
    ready ??
    (loading ??= load().then(
      (w) => {
        ready = w;
        for (const fn of waiting.splice(0)) fn(w);
        return w;
      },
      (e: unknown) => {
        loading = undefined;
        throw e;
      },
    ));
  /** `fn` over the wiring: at once when it is there, else once it loaded. */
  const withWiring = <T>(fn: (w: Wiring) => T): T | Promise<Awaited<T>> => {
    const w = get();
    return w instanceof Promise ? (w.then(fn) as Promise<Awaited<T>>) : fn(w);
  };

  const factory = (_rc?: McpRequestContext, o: InstanceOptions = { pushListChanged: true }): Server => {
    const server = new Instance(
      { name: SERVER_NAME, version: SERVER_VERSION, title: 'Workspace API' },
      {
        capabilities: {
          tools: {},
          resources: { listChanged: true },
          prompts: {},
          completions: {},
          // Also installs logging/setLevel (2025); a 2026-07-28 request names its level itself.
          logging: {},
          // 2025-11-25 tasks (the SDK leaves them out of a 2026-07-28 answer).
          ...(opts.tasks ? { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } : {}),
        },
        instructions,
        requestState: { verify: (state, rctx) => withWiring((w) => w.verify(state, rctx)) },
      },
    );
    const h = (w: Wiring) => w.handlers;
    const { listedEarly } = opts;
    server.setRequestHandler(
      'tools/list',
      (req, rctx) =>
        (!ready && listedEarly?.(supportsApps(clientCapabilitiesOf(server, rctx)))) ||
        withWiring((w) => h(w)['tools/list'](server, req, rctx)),
    );
    server.setRequestHandler('tools/call', (req, rctx) => withWiring((w) => h(w)['tools/call'](server, req, rctx)));
    server.setRequestHandler('resources/list', (req, rctx) => withWiring((w) => h(w)['resources/list'](server, req, rctx)));
    server.setRequestHandler('resources/templates/list', (req, rctx) =>
      withWiring((w) => h(w)['resources/templates/list'](server, req, rctx)),
    );
    server.setRequestHandler('resources/read', (req, rctx) => withWiring((w) => h(w)['resources/read'](server, req, rctx)));
    server.setRequestHandler('completion/complete', (req, rctx) => withWiring((w) => h(w)['completion/complete'](server, req, rctx)));
    server.setRequestHandler('prompts/list', (req, rctx) => withWiring((w) => h(w)['prompts/list'](server, req, rctx)));
    server.setRequestHandler('prompts/get', (req, rctx) => withWiring((w) => h(w)['prompts/get'](server, req, rctx)));
    if (opts.tasks) {
      // Spec methods of 2025-11-25 the SDK's typed surface leaves out: the 2-argument form
      // validates them by that era's schemas, and a 2026-07-28 request for them finds no method.
      const on = server.setRequestHandler.bind(server) as unknown as (
        method: string,
        fn: (req: { params?: Record<string, unknown> }) => Promise<Result> | Result,
      ) => void;
      const t = (w: Wiring) => w.tasks ?? noTasks();
      on('tasks/get', (req) => withWiring((w) => t(w).get(req.params?.taskId)));
      on('tasks/result', (req) => withWiring((w) => t(w).result(req.params?.taskId)));
      on('tasks/list', (req) => withWiring((w) => t(w).list(req.params?.cursor)));
      on('tasks/cancel', (req) => withWiring((w) => t(w).cancel(req.params?.taskId)));
    }

    if (o.pushListChanged) {
      // Lists change only through tools, so an instance whose wiring is still loading has
      // nothing to miss: it subscribes once the wiring is there.
      let closed = false;
      let unsubscribe: (() => void) | undefined;
      const subscribe = (w: Wiring) => {
        if (!closed)
          unsubscribe = w.onListsChanged(() => {
            server.sendResourceListChanged().catch(() => undefined);
          });
      };
      if (ready) subscribe(ready);
      else waiting.push(subscribe);
      const previous = server.onclose;
      server.onclose = () => {
        closed = true;
        unsubscribe?.();
        previous?.();
      };
    }
    return server;
  };
  // Loads the wiring before a request needs it (a failure is retried by the next request).
  return Object.assign(factory, { load: () => void Promise.resolve(get()).catch(() => undefined) });
}

/** Wiring without tasks behind an instance that offers them: none of them exists. */
function noTasks(): never {
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
}

/** A task-augmented tools/call's answer, left by its handler for the instance to send instead of the tool result. */
const created = new WeakMap<Server, Map<string | number, { task: Result }>>();

/** Answer the tools/call `requestId` on `server` with `task` (the handler returns what the SDK's checks of a tool result see). */
export function answerWithTask(server: Server, requestId: string | number, task: Result): CallToolResult {
  let m = created.get(server);
  if (!m) created.set(server, (m = new Map()));
  m.set(requestId, { task });
  return { content: [] };
}

/**
 * The SDK's Server, answering a task-augmented tools/call with its task (CreateTaskResult); with
 * telemetry on (src/common/telemetry.ts), every request within its span.
 */
class Instance extends Server {
  protected override _wrapHandler(
    method: string,
    handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>,
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
    const wrapped = this.withTasks(method, super._wrapHandler(method, handler));
    const telemetry = requestTelemetry();
    if (!telemetry) return wrapped;
    return (request, ctx) =>
      telemetry.request(
        {
          method,
          params: request.params,
          id: request.id,
          sessionId: ctx.sessionId,
          headers: ctx.http?.req?.headers,
          // The revision this request was sent for (2026-07-28), else the one initialize negotiated.
          protocolVersion: () =>
            ((ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[PROTOCOL_VERSION_META_KEY] as string | undefined) ??
            this.getNegotiatedProtocolVersion(),
        },
        () => wrapped(request, ctx),
      );
  }

  private withTasks(
    method: string,
    wrapped: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>,
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
    if (method !== 'tools/call') return wrapped;
    return (request, ctx) => {
      const result = wrapped(request, ctx);
      // A call without `task` (nearly all) pays nothing more.
      if ((request.params as { task?: unknown } | undefined)?.task === undefined) return result;
      return result.then((r) => {
        const m = created.get(this);
        const task = m?.get(request.id);
        if (!task) return r;
        m!.delete(request.id);
        return task;
      });
    };
  }
}
