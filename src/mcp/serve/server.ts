/**
 * The MCP server over an McpContext: tools (every API method plus the composite exportContacts,
 * findContacts and getWorkspace, filtered by --read-only / --tools / --exclude-tools), list-schema
 * resources with a completing template, workspace://workspace, prompts and completions, and the
 * `logging` capability (our log lines of a request). Built on the SDK's low-level `Server` so
 * that tool arguments reach our own checks and every error comes back as
 * a tool result in the API's JSON shape. One factory serves both protocol eras: the serving
 * entries (serveStdio, the HTTP handler) call it per connection, per 2025 session, or per
 * 2026-07-28 request, so what does not change between instances is built once, beforehand.
 * The instance itself (capabilities, instructions) is instance.ts's, the tool flags filter.ts's:
 * both load without this module, which the stdio server loads on the first request needing it.
 */
import {
  CLIENT_INFO_META_KEY,
  isInputRequiredResult,
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type InputRequiredResult,
  type Server,
  type ServerContext,
  type Tool,
} from '@modelcontextprotocol/server';
import { log } from '../../common/log.js';
import { countRefusal } from '../../common/telemetry.js';
import { METHODS } from '../../api/catalog.js';
import { ApiError } from '../../api/errors.js';
import type { MethodDef } from '../../api/define.js';
import { bulkCommitTool, commitTool, isAppOnly, supportsApps, uiMetaOf } from '../composite/apps.js';
import { complete } from './completions.js';
import { workspaceTool } from '../composite/workspace.js';
import { exportTool } from '../composite/export.js';
import { findContactsTool } from '../composite/find-contacts.js';
import { runBulkTool } from '../composite/bulk.js';
import { previewBulkTool } from '../composite/bulk-plan.js';
import { pick, type ToolFilter } from './tool-filter.js';
import {
  answerWithTask,
  clientCapabilitiesOf,
  instanceFactory,
  type InstanceOptions,
  type McpServerFactory,
  type Wiring,
} from './instance.js';
import { Tasks } from './tasks.js';
import { instructionsFor } from './instructions.js';
import { getPrompt, listPrompts } from './prompts.js';
import { logWithin, withRequestLog } from '../logging.js';
import { listResources, readResource, TEMPLATES } from '../composite/resources.js';
import { refusal } from '../result/results.js';
import { methodTools } from '../tools/method-tool.js';
import type { ToolExtra, ToolOutcome, ToolReach, ToolSpec } from '../tool-spec.js';
import type { McpContext } from '../context.js';

export { type InstanceOptions, type McpServerFactory } from './instance.js';
export { type ToolFilter } from './tool-filter.js';

/**
 * All tools, then the filter (see `pick`); with the MCP Apps views on, a tool's view in its
 * `_meta`, and the Account view's commit tool when a money tool is served.
 */
export function selectTools(ctx: McpContext, filter: ToolFilter = {}): ToolSpec[] {
  const composite = [
    exportTool(ctx),
    ...(ctx.contacts ? [findContactsTool(ctx)] : []),
    ...(ctx.directory ? [workspaceTool(ctx)] : []),
    ...(ctx.plans ? [previewBulkTool(ctx, ctx.plans), runBulkTool(ctx, ctx.plans)] : []),
  ];
  const picked = pick([...methodTools(ctx), ...composite], filter);
  if (!ctx.ui) return picked;
  // Set on the tool itself: a spread would read its lazy schemas now.
  for (const t of picked) {
    const meta = uiMetaOf(t.name);
    if (meta) t._meta = meta;
  }
  const served = new Set(picked.map((t) => t.name));
  const money = (METHODS as readonly MethodDef[]).some((m) => m.money && served.has(m.name));
  const run = picked.find((t) => t.name === 'runBulk');
  return [...picked, ...(money ? [commitTool(ctx, served)] : []), ...(run && ctx.plans ? [bulkCommitTool(ctx, ctx.plans, run)] : [])];
}

/**
 * Tools a server has but does not serve through one door (src/mcp/auth/scopes.ts): each by
 * name, with why it is refused (the scope it needs and how to get it) when a client calls it.
 */
export type Withheld = ReadonlyMap<string, string>;

/** How the instances over a shared context and tool set answer (see instance.ts). */
export function wiringOf(ctx: McpContext, tools: ToolSpec[], within?: { withheld: Withheld; reach: ToolReach }): Wiring {
  const withheld: Withheld = within?.withheld ?? new Map();
  const reach = within?.reach;
  const byName = new Map(tools.map((t) => [t.name, t]));
  const served = (name: string) => byName.has(name);
  const tasks = ctx.tasks ? new Tasks() : undefined;
  // Made on the first tools/list, not at start-up: the tools' JSON Schemas are made on first use.
  // Two lists: tools only MCP Apps views may call are offered only to clients that declare MCP Apps.
  const listed: { all?: Tool[]; model?: Tool[] } = {};
  const list = (apps: boolean): Tool[] => {
    listed.all ??= tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema as Tool['inputSchema'],
      ...(t.outputSchema ? { outputSchema: t.outputSchema as Tool['outputSchema'] } : {}),
      annotations: t.annotations,
      // 2025-11-25 only: the SDK leaves `execution` out of a 2026-07-28 list.
      ...(tasks && t.task ? { execution: { taskSupport: 'optional' as const } } : {}),
      ...(t._meta ? { _meta: t._meta } : {}),
    }));
    return apps ? listed.all : (listed.model ??= listed.all.filter((_, i) => !isAppOnly(tools[i]!)));
  };
  const apps = (server: Server, rctx: ServerContext): boolean => supportsApps(clientCapabilitiesOf(server, rctx));

  return {
    handlers: {
      'tools/list': (server, _req, rctx) => ({ tools: list(apps(server, rctx)) }),
      'tools/call': (server, req, rctx): Promise<CallToolResult | InputRequiredResult> => {
        const tool = byName.get(req.params.name);
        const why = withheld.get(req.params.name);
        if (!tool && why !== undefined) countRefusal('scope');
        if (!tool && why !== undefined) return Promise.resolve(refusal(new ApiError('insufficient_scope', why)));
        if (!tool || (isAppOnly(tool) && !apps(server, rctx))) {
          return Promise.resolve(
            refusal(new ApiError('route_not_found', `Unknown tool ${req.params.name}. Call tools/list for the tools of this server.`)),
          );
        }
        const token = rctx.mcpReq._meta?.progressToken;
        const progress = async (value: number, total: number | undefined, message: string) => {
          if (token !== undefined) {
            await rctx.mcpReq.notify({
              method: 'notifications/progress',
              params: { progressToken: token, progress: value, ...(total !== undefined ? { total } : {}), message },
            });
          }
          // A step done: let the event loop read what came in meanwhile (a cancellation over stdio
          // or a closed HTTP stream), which a tool whose steps never wait on I/O would not.
          await new Promise((resolve) => setImmediate(resolve));
        };
        const args = (req.params.arguments ?? {}) as Record<string, unknown>;
        const elicit = ctx.questions.elicitor(rctx, tool.name, args, {
          capabilities: clientCapabilitiesOf(server, rctx),
          who: String(ctx.knownOwner ?? ''),
        });
        // Who is calling: as it named itself at initialize (2025) or in this request's _meta (2026-07-28).
        const client =
          server.getClientVersion() ??
          (rctx.mcpReq.envelope as { [CLIENT_INFO_META_KEY]?: { name: string; version: string } } | undefined)?.[CLIENT_INFO_META_KEY];
        const signedIn = rctx.http?.authInfo?.extra as { client?: string } | undefined;
        const caller = {
          client: client ? { name: client.name, version: client.version } : null,
          session: rctx.sessionId ?? null,
          ...(signedIn?.client !== undefined
            ? { oauthClient: { id: rctx.http!.authInfo!.clientId, name: signedIn.client, scopes: rctx.http!.authInfo!.scopes } }
            : {}),
        };
        const views = ctx.ui && apps(server, rctx);
        const asked = (req.params as { task?: { ttl?: unknown } }).task;
        if (asked !== undefined && tasks && !tool.task)
          throw new ProtocolError(ProtocolErrorCode.MethodNotFound, `${tool.name} does not run as a task: call it without one`);
        if (asked !== undefined && tasks && tool.task) {
          const ttl = typeof asked.ttl === 'number' ? asked.ttl : undefined;
          const { task } = tool;
          return withRequestLog(rctx, () =>
            startTask(
              server,
              rctx.mcpReq.id,
              tasks,
              { ...tool, task },
              args,
              { signal: rctx.mcpReq.signal, progress, elicit, caller, views, reach },
              ttl,
            ),
          );
        }
        return withRequestLog(rctx, async () => {
          try {
            const result = await tool.run(args, { signal: rctx.mcpReq.signal, progress, elicit, caller, views, reach });
            // The era's own shape of a result (the SDK's McpServer does this for its tools).
            return isInputRequiredResult(result) ? result : server.projectCallToolResult(result, tool.outputSchema);
          } catch (e) {
            // A bug of ours: a 500 in the usual shape that leaks nothing; the details go to the log.
            logWithin(rctx.mcpReq.signal, () => log.error({ err: e, tool: tool.name }, 'tool failed'));
            return refusal(new ApiError('server_error', 'Server Error'));
          }
        });
      },
      'resources/list': (server, req, rctx) => listResources(ctx, req.params?.cursor, ctx.ui && apps(server, rctx)),
      'resources/templates/list': () => ({ resourceTemplates: TEMPLATES }),
      'resources/read': (_server, req, rctx) => withRequestLog(rctx, () => readResource(ctx, req.params.uri)),
      'completion/complete': async (_server, req) => ({
        completion: { ...(await complete(ctx, req.params.ref, req.params.argument, req.params.context?.arguments)) },
      }),
      'prompts/list': () => ({ prompts: listPrompts(served) }),
      'prompts/get': (_server, req) => getPrompt(req.params.name, req.params.arguments ?? {}, served),
    },
    ...(tasks
      ? {
          tasks: {
            get: (id) => tasks.get(id),
            result: (id) => tasks.result(id),
            list: (cursor) => tasks.list(cursor),
            cancel: (id) => tasks.cancel(id),
          },
        }
      : {}),
    verify: ctx.questions.verify,
    onListsChanged: (fn) => ctx.onListsChanged(fn),
  };
}

/**
 * A task-augmented call (2025-11-25): the tool's gate in the call (it may ask the person), then
 * the task, answered at once; its work goes on with the call's caller and views, its own signal
 * (tasks/cancel) and its status message for progress.
 */
async function startTask(
  server: Server,
  requestId: string | number,
  tasks: Tasks,
  tool: ToolSpec & { task: NonNullable<ToolSpec['task']> },
  args: Record<string, unknown>,
  extra: ToolExtra,
  ttl: number | undefined,
): Promise<CallToolResult | InputRequiredResult> {
  let gated: ToolOutcome | undefined;
  try {
    gated = await tool.task.gate(args, extra);
  } catch (e) {
    logWithin(extra.signal, () => log.error({ err: e, tool: tool.name }, 'tool failed'));
    return refusal(new ApiError('server_error', 'Server Error'));
  }
  if (gated && isInputRequiredResult(gated)) return gated;
  const task = tasks.start(
    ttl,
    gated
      ? { result: server.projectCallToolResult(gated, tool.outputSchema) as CallToolResult }
      : async (signal, say) => {
          const work = { ...extra, signal, progress: async (_v: number, _t: number | undefined, message: string) => say(message) };
          try {
            return server.projectCallToolResult(await tool.task.work(args, work), tool.outputSchema) as CallToolResult;
          } catch (e) {
            log.error({ err: e, tool: tool.name }, 'task failed');
            throw e;
          }
        },
  );
  return answerWithTask(server, requestId, task);
}

/** The factory of MCP servers over a shared context and tool set (`within` a reach: less the tools it withholds, refused by name). */
export function mcpServerFactory(ctx: McpContext, tools: ToolSpec[], within?: { withheld: Withheld; reach: ToolReach }): McpServerFactory {
  return instanceFactory(
    wiringOf(ctx, tools, within),
    instructionsFor(
      tools.map((t) => t.name),
      ctx.maxResultChars,
    ),
    { tasks: ctx.tasks },
  );
}

/** One MCP server instance over a context and tool set (tests; the entries use the factory). */
export function createMcpServer(ctx: McpContext, tools: ToolSpec[], o?: InstanceOptions): Server {
  return mcpServerFactory(ctx, tools)(undefined, o);
}
