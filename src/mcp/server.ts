/**
 * The MCP server over an McpContext: tools (every API method plus the composite exportContacts,
 * findContacts and getWorkspace, filtered by --read-only / --tools / --exclude-tools), list-schema
 * resources with a completing template, workspace://workspace, prompts and completions. Built on
 * the SDK's low-level `Server` so that tool arguments reach our own checks
 * and every error comes back as a tool result in the API's JSON shape.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { log } from '../log.js';
import { METHODS } from '../api/catalog.js';
import { ApiError } from '../api/errors.js';
import type { MethodDef } from '../api/define.js';
import { complete } from './completions.js';
import { WORKSPACE_TOOL_INFO, workspaceTool } from './directory.js';
import { EXPORT_TOOL_INFO, exportTool } from './export.js';
import { FIND_TOOL_INFO, findContactsTool } from './find-contacts.js';
import { instructionsFor } from './instructions.js';
import { getPrompt, listPrompts } from './prompts.js';
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

/** All tools, then the filter (see `pick`). */
export function selectTools(ctx: McpContext, filter: ToolFilter = {}): ToolSpec[] {
  const composite = [exportTool(ctx), ...(ctx.contacts ? [findContactsTool(ctx)] : []), ...(ctx.directory ? [workspaceTool(ctx)] : [])];
  return pick([...methodTools(ctx), ...composite], filter);
}

/** One MCP server (one per session over HTTP) over a shared context and tool set. */
export function createMcpServer(ctx: McpContext, tools: ToolSpec[]): Server {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const server = new Server(
    { name: SERVER_NAME, version: SERVER_VERSION, title: 'Workspace API' },
    {
      capabilities: {
        tools: {},
        resources: { listChanged: true },
        prompts: {},
        completions: {},
      },
      instructions: instructionsFor(tools.map((t) => t.name), ctx.maxResultChars),
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema,
      ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}),
      annotations: t.annotations,
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const tool = byName.get(req.params.name);
    if (!tool) {
      return refusal(new ApiError('route_not_found', `Unknown tool ${req.params.name}. Call tools/list for the tools of this server.`));
    }
    const token = req.params._meta?.progressToken;
    const progress = async (value: number, total: number | undefined, message: string) => {
      if (token === undefined) return;
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken: token, progress: value, ...(total !== undefined ? { total } : {}), message },
      });
    };
    const args = (req.params.arguments ?? {}) as Record<string, unknown>;
    try {
      const client = server.getClientVersion();
      const caller = { client: client ? { name: client.name, version: client.version } : null, session: extra.sessionId ?? null };
      return await tool.run(args, { signal: extra.signal, progress, caller });
    } catch (e) {
      // A bug of ours: a 500 in the usual shape that leaks nothing; the details go to the log (stderr).
      log.error({ err: e, tool: tool.name }, 'tool failed');
      return refusal(new ApiError('server_error', 'Server Error'));
    }
  });

  server.setRequestHandler(ListResourcesRequestSchema, (req) => listResources(ctx, req.params?.cursor));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: TEMPLATES }));
  server.setRequestHandler(ReadResourceRequestSchema, (req) => readResource(ctx, req.params.uri));

  server.setRequestHandler(CompleteRequestSchema, async (req) => ({
    completion: await complete(ctx, req.params.ref, req.params.argument, req.params.context?.arguments),
  }));

  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: listPrompts() }));
  server.setRequestHandler(GetPromptRequestSchema, (req) => getPrompt(req.params.name, req.params.arguments ?? {}));

  const unsubscribe = ctx.onListsChanged(() => {
    server.sendResourceListChanged().catch(() => undefined);
  });
  const previous = server.onclose;
  server.onclose = () => {
    unsubscribe();
    previous?.();
  };
  return server;
}
