/**
 * The default bot (`--bot`, $WORKSPACE_BOT_ID, or the owner's only bot) fills `bot_id` where a
 * method requires one (createListSchema: when project_uuid is left out too) and the caller left it out. Such a tool advertises bot_id as optional and
 * says so; with no default bot the API itself answers that bot_id is required.
 */
import type { MethodDef } from '../../api/define.js';
import { Rule, type Shape } from '../../api/rules.js';
import type { McpContext } from '../context.js';

const NOTE = 'Default: the default bot';

/** Whether the method requires a bot_id, always or when another argument is left out (createListSchema's project_uuid). */
function takesDefaultBot(def: MethodDef): boolean {
  const state = def.params.bot_id?.state;
  return state?.required === true || state?.requiredWithout !== undefined;
}

/** Whether these arguments leave a bot_id the method needs out. */
export function missesBot(def: MethodDef, args: Record<string, unknown>): boolean {
  const state = def.params.bot_id?.state;
  if (!state || (args.bot_id !== undefined && args.bot_id !== null)) return false;
  if (state.required === true) return true;
  const other = state.requiredWithout;
  return other !== undefined && (args[other] === undefined || args[other] === null || args[other] === '');
}

/** The tool's shape with bot_id optional, for a method that requires one. */
export function withOptionalBot(def: MethodDef, shape: Shape): Shape {
  const rule = shape.bot_id;
  if (!takesDefaultBot(def) || !rule) return shape;
  const description = rule.state.description ? `${rule.state.description}; ${NOTE.toLowerCase()}` : NOTE;
  return { ...shape, bot_id: new Rule({ ...rule.state, required: false, description }) };
}

/** The arguments with bot_id filled from the default bot, when the method requires it and it is missing. */
export async function fillDefaultBot(def: MethodDef, ctx: McpContext, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  if (!missesBot(def, args)) return args;
  const bot = await ctx.defaultBot();
  return bot === undefined ? args : { ...args, bot_id: bot };
}
