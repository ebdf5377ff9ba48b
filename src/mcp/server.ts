/**
 * The MCP server over an McpContext: tools (every API method plus the composite exportContacts,
 * findContacts and getWorkspace, filtered by --read-only / --tools / --exclude-tools), list-schema
 * resources with a completing template, workspace://workspace, prompts and completions, and the
 * `logging` capability (our log lines of a request). Built on the SDK's low-level `Server` so
 * that tool arguments reach our own checks and every error comes back as
 * a tool result in the API's JSON shape. One factory serves both protocol eras: the serving
 * entries (serveStdio, the HTTP handler) call it per connection, per 2025 session, or per
 * 2026-07-28 request, so what does not change between instances is built once, beforehand.
 */
import { CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, isInputRequiredResult, Server, type CallToolResult, type ClientCapabilities, type InputRequiredResult, type McpRequestContext, type ServerContext, type Tool } from '@modelcontextprotocol/server';
import { log } from '../log.js';
import { METHODS } from '../api/catalog.js';
import { ApiError } from '../api/errors.js';
import type { MethodDef } from '../api/define.js';
import { commitTool, isAppOnly, supportsApps, uiMetaOf } from './apps.js';
import { complete } from './completions.js';
import { WORKSPACE_TOOL_INFO, workspaceTool } from './directory.js';
import { EXPORT_TOOL_INFO, exportTool } from './export.js';
import { FIND_TOOL_INFO, findContactsTool } from './find-contacts.js';
import { instructionsFor } from './instructions.js';
import { getPrompt, listPrompts } from './prompts.js';
import { withRequestLog } from './logging.js';
import { listResources, readResource, TEMPLATES } from './resources.js';
import { refusal } from './results.js';
import { methodTools, type ToolSpec } from './tools.js';
import type { McpContext } from './context.js';

export const SERVER_NAME = 'workspace-mcp';
export const SERVER_VERSION = '0.1.0';

export interface ToolFilter {
  /** Only tools that change nothing (readOnlyHint). */
  readOnly?: boolean;
  /** Only these tools, by name. */
  tools?: string[];
  /** Not these tools, by name. */
  excludeTools?: string[];
}

interface Described {
  name: string;
  annotations: { readOnlyHint?: boolean };
}

/**
 * The filter over `all`: a name in --tools or --exclude-tools that no tool has is an error, and
 * so are flags that leave no tool at all (a server with nothing to call).
 */
function pick<T extends Described>(all: readonly T[], filter: ToolFilter): T[] {
  const names = new Set(all.map((t) => t.name));
  for (const n of [...(filter.tools ?? []), ...(filter.excludeTools ?? [])]) {
    if (!names.has(n)) throw new Error(`unknown tool: ${n} (tools: ${[...names].join(', ')})`);
  }
  const left = all.filter(
    (t) =>
      (!filter.readOnly || t.annotations.readOnlyHint === true) &&
      (!filter.tools || filter.tools.includes(t.name)) &&
      !(filter.excludeTools ?? []).includes(t.name),
  );
  if (left.length === 0) {
    const flags = [
      ...(filter.readOnly ? ['--read-only'] : []),
      ...(filter.tools ? [`--tools ${filter.tools.join(',')}`] : []),
      ...(filter.excludeTools ? [`--exclude-tools ${filter.excludeTools.join(',')}`] : []),
    ];
    const readOnly = all.filter((t) => t.annotations.readOnlyHint === true).map((t) => t.name);
    throw new Error(
      `the flags ${flags.join(' ')} leave no tool to serve: ` +
        (filter.readOnly ? `with --read-only name tools that change nothing (${readOnly.join(', ')}), or drop --read-only` : 'name at least one tool the other flags allow'),
    );
  }
  return left;
}

/** Check the tool flags against the catalog alone, before any backend or file is opened. */
export function checkToolFilter(filter: ToolFilter): void {
  pick([...(METHODS as readonly MethodDef[]), EXPORT_TOOL_INFO, FIND_TOOL_INFO, WORKSPACE_TOOL_INFO], filter);
}

/**
 * All tools, then the filter (see `pick`); with the MCP Apps views on, a tool's view in its
 * `_meta`, and the Account view's commit tool when a money tool is served.
 */
export function selectTools(ctx: McpContext, filter: ToolFilter = {}): ToolSpec[] {
  const composite = [exportTool(ctx), ...(ctx.contacts ? [findContactsTool(ctx)] : []), ...(ctx.directory ? [workspaceTool(ctx)] : [])];
  const picked = pick([...methodTools(ctx), ...composite], filter);
  if (!ctx.ui) return picked;
  // Set on the tool itself: a spread would read its lazy schemas now.
  for (const t of picked) {
    const meta = uiMetaOf(t.name);
    if (meta) t._meta = meta;
  }
  const served = new Set(picked.map((t) => t.name));
  const money = (METHODS as readonly MethodDef[]).some((m) => m.money && served.has(m.name));
  return money ? [...picked, commitTool(ctx, served)] : picked;
}

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

/** The factory of MCP servers over a shared context and tool set. */
export function mcpServerFactory(ctx: McpContext, tools: ToolSpec[]): McpServerFactory {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const instructions = instructionsFor(tools.map((t) => t.name), ctx.maxResultChars);
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
      ...(t._meta ? { _meta: t._meta } : {}),
    }));
    return apps ? listed.all : (listed.model ??= listed.all.filter((_, i) => !isAppOnly(tools[i]!)));
  };

  return (_rc, o = { pushListChanged: true }) => {
    const server = new Server(
      { name: SERVER_NAME, version: SERVER_VERSION, title: 'Workspace API' },
      {
        capabilities: {
          tools: {},
          resources: { listChanged: true },
          prompts: {},
          completions: {},
          // Also installs logging/setLevel (2025); a 2026-07-28 request names its level itself.
          logging: {},
        },
        instructions,
        requestState: { verify: ctx.questions.verify },
      },
    );

    // What the client declared: on this request (2026-07-28), or at initialize (2025).
    const capsOf = (rctx: ServerContext): ClientCapabilities | undefined => {
      const envelope = rctx.mcpReq.envelope as { [CLIENT_CAPABILITIES_META_KEY]?: ClientCapabilities } | undefined;
      return envelope ? envelope[CLIENT_CAPABILITIES_META_KEY] : server.getClientCapabilities();
    };
    const apps = (rctx: ServerContext): boolean => supportsApps(capsOf(rctx));

    server.setRequestHandler('tools/list', (_req, rctx) => ({ tools: list(apps(rctx)) }));

    server.setRequestHandler('tools/call', (req, rctx): Promise<CallToolResult | InputRequiredResult> => {
      const tool = byName.get(req.params.name);
      if (!tool || (isAppOnly(tool) && !apps(rctx))) {
        return Promise.resolve(refusal(new ApiError('route_not_found', `Unknown tool ${req.params.name}. Call tools/list for the tools of this server.`)));
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
      const elicit = ctx.questions.elicitor(rctx, tool.name, args, { caps: capsOf(rctx), who: String(ctx.knownOwner ?? '') });
      // Who is calling: as it named itself at initialize (2025) or in this request's _meta (2026-07-28).
      const client =
        server.getClientVersion() ?? (rctx.mcpReq.envelope as { [CLIENT_INFO_META_KEY]?: { name: string; version: string } } | undefined)?.[CLIENT_INFO_META_KEY];
      const caller = { client: client ? { name: client.name, version: client.version } : null, session: rctx.sessionId ?? null };
      return withRequestLog(rctx, async () => {
        try {
          const result = await tool.run(args, { signal: rctx.mcpReq.signal, progress, elicit, caller });
          // The era's own shape of a result (the SDK's McpServer does this for its tools).
          return isInputRequiredResult(result) ? result : server.projectCallToolResult(result, tool.outputSchema);
        } catch (e) {
          // A bug of ours: a 500 in the usual shape that leaks nothing; the details go to the log.
          log.error({ err: e, tool: tool.name }, 'tool failed');
          return refusal(new ApiError('server_error', 'Server Error'));
        }
      });
    });

    server.setRequestHandler('resources/list', (req, rctx) => listResources(ctx, req.params?.cursor, ctx.ui && apps(rctx)));
    server.setRequestHandler('resources/templates/list', () => ({ resourceTemplates: TEMPLATES }));
    server.setRequestHandler('resources/read', (req, rctx) => withRequestLog(rctx, () => readResource(ctx, req.params.uri)));

    server.setRequestHandler('completion/complete', async (req) => ({
      completion: { ...(await complete(ctx, req.params.ref, req.params.argument, req.params.context?.arguments)) },
    }));

    server.setRequestHandler('prompts/list', () => ({ prompts: listPrompts() }));
    server.setRequestHandler('prompts/get', (req) => getPrompt(req.params.name, req.params.arguments ?? {}));

    if (o.pushListChanged) {
      const unsubscribe = ctx.onListsChanged(() => {
        server.sendResourceListChanged().catch(() => undefined);
      });
      const previous = server.onclose;
      server.onclose = () => {
        unsubscribe();
        previous?.();
      };
    }
    return server;
  };
}

/** One MCP server instance over a context and tool set (tests; the entries use the factory). */
export function createMcpServer(ctx: McpContext, tools: ToolSpec[], o?: InstanceOptions): Server {
  return mcpServerFactory(ctx, tools)(undefined, o);
}
