/**
 * The default bot (`--bot`, $WORKSPACE_BOT_ID, or the owner's only bot) fills `bot_id` where a
 * method requires one and the caller left it out. Such a tool advertises bot_id as optional and
 * says so; with no default bot the API itself answers that bot_id is required.
 */
import type { MethodDef } from '../api/define.js';
import { Rule, type Shape } from '../api/rules.js';
import type { McpContext } from './context.js';

const NOTE = 'Left out: the default bot (see getWorkspace).';

/** Whether the method requires a bot_id. */
export function takesDefaultBot(def: MethodDef): boolean {
  return def.params.bot_id?.state.required === true;
}

/** The tool's shape with bot_id optional, for a method that requires one. */
export function withOptionalBot(def: MethodDef, shape: Shape): Shape {
  const rule = shape.bot_id;
  if (!takesDefaultBot(def) || !rule) return shape;
  return { ...shape, bot_id: new Rule({ ...rule.state, required: false, description: `${rule.state.description ?? ''}. ${NOTE}` }) };
}

/** The arguments with bot_id filled from the default bot, when the method requires it and it is missing. */
export async function fillDefaultBot(def: MethodDef, ctx: McpContext, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  if (!takesDefaultBot(def) || (args.bot_id !== undefined && args.bot_id !== null)) return args;
  const bot = await ctx.defaultBot();
  return bot === undefined ? args : { ...args, bot_id: bot };
}
