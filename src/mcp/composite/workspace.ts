/**
 * getWorkspace, the composite tool, and the `workspace://workspace` resource: the owner, their
 * projects and bots and the default bot, so that a model starts from real ids instead of
 * guessing. What the backend can tell comes from a WorkspaceDirectory the CLI passes in (the
 * service's database, or for a remote API what getMe, the configuration and earlier answers
 * showed).
 */
import { ProtocolError, ProtocolErrorCode, type CallToolResult, type Resource } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ApiError } from '../../api/errors.js';
import type { McpContext } from '../context.js';
import { refusal, toolResult } from '../result/results.js';
import { IndexRefused } from '../contact-search.js';
import type { WorkspaceView } from '../state.js';
import type { ToolSpec } from '../tool-spec.js';
import { compositeTool } from './composite-tool.js';
import { WORKSPACE_TOOL_INFO } from './identities.js';

export const WORKSPACE_URI = 'workspace://workspace';

export const WORKSPACE_RESOURCE: Resource = {
  uri: WORKSPACE_URI,
  name: 'workspace',
  title: 'Your workspace',
  description: 'What getWorkspace answers: the owner, projects, bots with contact counts, the default bot.',
  mimeType: 'application/json',
};

const ViewSchema = z.object({
  owner: z.object({
    id: z.number().int(),
    name: z.string().nullable(),
    email: z.string().nullable(),
    plan: z.enum(['pro', 'free']).nullable(),
  }),
  projects: z.array(z.object({ uuid: z.string(), name: z.string().nullable(), role: z.enum(['owner', 'member']) })),
  bots: z.array(
    z.object({
      id: z.number().int(),
      name: z.string().nullable(),
      messenger: z.string().nullable(),
      project_uuid: z.string().nullable(),
      contacts: z.number().int().nullable().describe('Listed contacts (not preview, not deleted)'),
    }),
  ),
  default_bot_id: z.number().int().nullable().describe('The bot a tool uses when bot_id is left out'),
  notes: z.array(z.string()).optional(),
});

/** The view, or the error result of the call that failed. */
async function workspaceView(ctx: McpContext): Promise<WorkspaceView | CallToolResult> {
  const owner = await ctx.owner();
  if (typeof owner !== 'number') return owner;
  if (!ctx.directory) return refusal(new ApiError('not_available', 'This server has no workspace directory.'));
  try {
    const view = await ctx.directory.describe(owner);
    const default_bot_id = (await ctx.defaultBot()) ?? null;
    return {
      owner: view.owner,
      projects: view.projects,
      bots: view.bots,
      default_bot_id,
      ...(view.notes?.length ? { notes: view.notes } : {}),
    };
  } catch (e) {
    if (e instanceof IndexRefused) return toolResult({ status: e.status, headers: e.headers, body: e.body }, { method: 'getWorkspace' });
    throw e;
  }
}

export function workspaceTool(ctx: McpContext): ToolSpec {
  return compositeTool({
    info: WORKSPACE_TOOL_INFO,
    description:
      "The key's owner, their projects (uuid, role), bots (id, name, messenger, project, contacts) and the default bot: " +
      'the bot_id and project_uuid other tools need.',
    params: {},
    output: () => ViewSchema,
    async run() {
      const view = await workspaceView(ctx);
      return 'owner' in view
        ? toolResult({ status: 200, headers: {}, body: view }, { budget: ctx.maxResultChars, notes: ctx.startNotes('getWorkspace') })
        : view;
    },
  });
}

/** The resource's text: the same JSON getWorkspace answers. */
export async function readWorkspace(ctx: McpContext): Promise<string> {
  const view = await workspaceView(ctx);
  if ('owner' in view) return JSON.stringify(view);
  const first = view.content[0];
  throw new ProtocolError(ProtocolErrorCode.InternalError, first?.type === 'text' ? first.text : 'getWorkspace failed');
}
