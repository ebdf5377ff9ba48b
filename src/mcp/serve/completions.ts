/**
 * completion/complete for prompt and resource-template arguments, with real values: `bot_id`
 * (the owner's bots, by id or name), `contact_id` (through the same search as findContacts),
 * `schema_id` (the owner's lists), `currency` (the owner's currencies first, then ISO 4217).
 */
import cc from 'currency-codes';
import { listPrompts } from './prompts.js';
import { completeSchemaId, LIST_TEMPLATE } from '../composite/resources.js';
import type { McpContext } from '../context.js';
import { IndexRefused } from '../contact-search.js';

export interface Completion {
  values: string[];
  total: number;
  hasMore: boolean;
}

/** MCP allows at most 100 values. */
const MAX_VALUES = 100;
const NONE: Completion = { values: [], total: 0, hasMore: false };

/** A refused owner (blocked, a key revoked, the database unreachable) is offered nothing: the tool call will say why. */
function noneIfRefused(e: unknown): never[] {
  if (e instanceof IndexRefused) return [];
  throw e;
}

/** Lower case without accents, for matching a bot's name. */
function loose(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
}

function cap(values: string[]): Completion {
  const unique = [...new Set(values)];
  return { values: unique.slice(0, MAX_VALUES), total: unique.length, hasMore: unique.length > MAX_VALUES };
}

async function bots(ctx: McpContext, value: string): Promise<Completion> {
  const owner = await ctx.owner();
  if (typeof owner !== 'number' || !ctx.directory) return NONE;
  const needle = loose(value.trim());
  const all = await ctx.directory.botChoices(owner).catch(noneIfRefused);
  return cap(
    all.filter((b) => String(b.id).startsWith(needle) || (b.name !== null && loose(b.name).includes(needle))).map((b) => String(b.id)),
  );
}

async function contacts(ctx: McpContext, value: string, context: Record<string, string>): Promise<Completion> {
  const owner = await ctx.owner();
  if (typeof owner !== 'number' || !ctx.contacts || value.trim() === '') return NONE;
  const bot = /^\d+$/.test(context.bot_id ?? '') ? Number(context.bot_id) : await ctx.defaultBot();
  try {
    const found = await ctx.contacts.find(owner, value.slice(0, 200), {
      botIds: bot === undefined ? undefined : [bot],
      limit: 20,
      wait: false,
    });
    return { values: found.hits.map((h) => String(h.id)), total: found.total, hasMore: found.total > found.hits.length };
  } catch {
    return NONE; // a refused search offers nothing; the tool call will say why
  }
}

async function currencies(ctx: McpContext, value: string): Promise<Completion> {
  const prefix = value.trim().toUpperCase();
  const owner = await ctx.owner();
  const own = typeof owner === 'number' && ctx.directory ? await ctx.directory.currencies(owner).catch(noneIfRefused) : [];
  return cap([...own, ...cc.codes()].filter((c) => c.startsWith(prefix)));
}

/** Values for one argument of a prompt or resource template. */
export async function complete(
  ctx: McpContext,
  ref: { type: string; uri?: string; name?: string },
  argument: { name: string; value: string },
  context: Record<string, string> = {},
): Promise<Completion> {
  if (ref.type === 'ref/resource' && ref.uri === LIST_TEMPLATE && argument.name === 'schema_id')
    return completeSchemaId(ctx, argument.value);
  const prompt = ref.type === 'ref/prompt' ? listPrompts().find((p) => p.name === ref.name) : undefined;
  if (!prompt?.arguments?.some((a) => a.name === argument.name)) return NONE;
  switch (argument.name) {
    case 'bot_id':
      return bots(ctx, argument.value);
    case 'contact_id':
      return contacts(ctx, argument.value, context);
    case 'schema_id':
      return completeSchemaId(ctx, argument.value);
    case 'currency':
      return currencies(ctx, argument.value);
    default:
      return NONE;
  }
}
