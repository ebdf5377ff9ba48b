/**
 * previewBulk, the composite tool that plans one action on a whole segment: the selection
 * resolved now (getContacts pages filtered by every part given; `query` through the contact
 * search as findContacts), the contact ids fixed in a plan kept in the server's state, and each
 * contact checked as the API would (a blocked account or too little money for a withdraw, an
 * unsubscribed contact for a message, a missing account unless it may be opened). Nothing
 * changes. runBulk (bulk.ts) carries the plan out.
 */
import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { isSuccess } from '../../api/backend.js';
import { addContactAccount, addFundsToContactAccount, withdrawFundsFromContactAccount } from '../../api/contact-accounts.js';
import { CONTACTS_LIMIT } from '../../api/contacts.js';
import { amountNote } from '../../api/currency.js';
import type { MethodDef } from '../../api/define.js';
import { ApiError, fail } from '../../api/errors.js';
import { scopeOf } from '../../api/scopes.js';
import { sendMessage } from '../../api/messages.js';
import { r, validate, type Shape } from '../../api/rules.js';
import { attachTagToContact, detachTagFromContact } from '../../api/tags.js';
import { setContactVariable } from '../../api/variables.js';
import { IndexRefused, type IndexInfo } from '../contact-search.js';
import type { McpContext } from '../context.js';
import { refusal, toolResult } from '../result/results.js';
import type { BulkPlans, BulkStep } from '../state.js';
import type { ToolExtra, ToolSpec } from '../tool-spec.js';
import { checkArguments } from '../tools/arguments.js';
import { shapeToZod, toJsonSchema, type JsonSchema } from '../tools/schemas.js';
import { compositeTool } from './composite-tool.js';
import { ACTION_TYPES, type ActionType, type BulkAction } from '../../api/bulk-actions.js';
import { countRefusal } from '../../common/telemetry.js';
import { PREVIEW_BULK_TOOL_INFO } from './identities.js';

/** Most contacts a plan holds. */
const MAX_PLAN = 10_000;
/** How long a plan may be started after it was made. */
const PLAN_TTL_MS = 60 * 60 * 1000;
/** Contacts shown in the preview's sample, and skipped ones listed. */
const SAMPLE = 5;
const SKIPPED_SHOWN = 50;

const PREVIEW_PARAMS = {
  selection: r
    .object({
      bot_id: r.integer(),
      tags: r.array(r.string()),
      query: r.string(),
      contact_ids: r.array(r.integer()),
      date_from: r.unixSeconds(),
      date_to: r.unixSeconds(),
      subscribed_only: r.boolean(),
    })
    .required(),
  action: r
    .object({
      type: r.oneOf(ACTION_TYPES).required(),
      currency: r.string(),
      amount: r.integer(),
      description: r.string(),
      name: r.string(),
      value: r.string(),
      text: r.string(),
      image: r.string(),
      file: r.string(),
    })
    .required(),
  open_missing_accounts: r.boolean(),
};

/**
 * What previewBulk and runBulk answer, as a shape: `{data}` (what `data` holds is in their
 * descriptions and docs/mcp-server.md; the whole tools/list keeps to its budget).
 */
export const DATA_OUTPUT = {
  type: 'object',
  properties: { data: { type: 'object' } },
  required: ['data'],
} as const satisfies JsonSchema;

/** The input schema as listed: nested objects left open (checkArguments refuses unknown names at any depth all the same). */
function inputSchema(): JsonSchema {
  const schema = toJsonSchema(shapeToZod(PREVIEW_PARAMS));
  for (const part of Object.values(schema.properties as Record<string, Record<string, unknown>>)) delete part.additionalProperties;
  return schema;
}

/** The method each action calls per contact, and the action's fields (checked by that method's own rules). */
export const ACTIONS: Record<ActionType, { method: MethodDef; fields: readonly string[] }> = {
  deposit: { method: addFundsToContactAccount, fields: ['currency', 'amount', 'description'] },
  withdraw: { method: withdrawFundsFromContactAccount, fields: ['currency', 'amount', 'description'] },
  attachTag: { method: attachTagToContact, fields: ['name'] },
  detachTag: { method: detachTagFromContact, fields: ['name'] },
  setVariable: { method: setContactVariable, fields: ['name', 'value'] },
  sendMessage: { method: sendMessage, fields: ['text', 'image', 'file'] },
};

export const isMoneyAction = (a: BulkAction): boolean => a.type === 'deposit' || a.type === 'withdraw';

/**
 * The refusal of a plan outside what the request may reach, or undefined: the scope of the method
 * its action calls per contact (money, message or write), and write too for a plan that opens
 * missing accounts (addContactAccount). previewBulk says so before anyone confirms; runBulk and
 * the Bulk plan view's confirmation again before anything is recorded or a step runs.
 */
export function outOfReach(a: BulkAction, openAccounts: boolean, extra: ToolExtra, tool: string): CallToolResult | undefined {
  if (!extra.reach) return undefined;
  const needs = [scopeOf(ACTIONS[a.type].method), ...(openAccounts ? [scopeOf(addContactAccount)] : [])];
  const missing = needs.find((s) => !extra.reach!.scopes.has(s));
  if (missing === undefined) return undefined;
  const what = `a ${a.type} plan${openAccounts ? ' that opens missing accounts' : ''}`;
  countRefusal('scope');
  return refusal(new ApiError('insufficient_scope', `${tool} was not run: ${what}. ${extra.reach.why([missing])}`));
}

/** What previewBulk keeps in the plan's body. */
export interface PlanBody {
  selection: Record<string, unknown>;
  action: BulkAction;
  open_missing_accounts: boolean;
  count: number;
  skipped: number;
  total?: number;
  currency?: string;
}

/** The action's fields checked by the rules of the method it calls (currency by addContactAccount's); a 422 naming `action.*`. */
function checkAction(action: Record<string, unknown>): { action: BulkAction } | { error: CallToolResult } {
  const type = action.type as ActionType;
  const { method, fields } = ACTIONS[type];
  const errors = new Map<string, string[]>();
  for (const k of Object.keys(action))
    if (k !== 'type' && !fields.includes(k)) errors.set(`action.${k}`, [`A ${type} action takes ${fields.join(', ')}, not ${k}.`]);
  const shape: Shape = {};
  for (const f of fields) shape[f] = (f === 'currency' ? addContactAccount.params.currency : (method.params as Shape)[f])!;
  const checked = validate(shape, Object.fromEntries(fields.filter((f) => f in action).map((f) => [f, action[f]])));
  if (!checked.ok) for (const [k, v] of checked.errors) errors.set(`action.${k}`, v);
  if (type === 'sendMessage' && !fields.some((f) => action[f] !== undefined))
    errors.set('action.text', ['A sendMessage action needs text, image or file.']);
  if (errors.size > 0) return { error: refusal(fail.validation(errors)) };
  return { action: { type, ...(checked.ok ? checked.params : {}) } as BulkAction };
}

/** A contact as the segment holds it. */
interface SegmentContact {
  id: number;
  bot_id: number;
  name: string;
  messenger: string;
  tags: string[];
  unsubscribed_at: string | null;
}

type Selection = { [K in keyof (typeof PREVIEW_PARAMS)['selection']['_type']]?: (typeof PREVIEW_PARAMS)['selection']['_type'][K] };

/**
 * The contacts of the selection, every given part holding: getContacts pages (bot, dates) read
 * now, then tags (all of them), subscribed, the ids given, and the contact search's matches.
 */
async function segment(
  ctx: McpContext,
  sel: Selection,
  extra: ToolExtra,
): Promise<{ contacts: SegmentContact[]; index?: IndexInfo } | { error: CallToolResult }> {
  let matches: Set<number> | undefined;
  let index: IndexInfo | undefined;
  if (sel.query !== undefined) {
    if (!ctx.contacts)
      return { error: refusal(fail.invalid('selection.query', 'This server has no contact search: select by tags, ids or dates.')) };
    const owner = await ctx.owner();
    if (typeof owner !== 'number') return { error: owner };
    try {
      const found = await ctx.contacts.find(owner, sel.query, {
        botIds: sel.bot_id === undefined ? undefined : [sel.bot_id],
        limit: MAX_PLAN,
        signal: extra.signal,
      });
      matches = new Set(found.hits.map((h) => h.id));
      index = found.index;
    } catch (e) {
      if (e instanceof IndexRefused)
        return { error: toolResult({ status: e.status, headers: e.headers, body: e.body }, { method: 'findContacts' }) };
      throw e;
    }
  }
  const ids = sel.contact_ids && new Set(sel.contact_ids);
  const filters = Object.fromEntries(
    (['bot_id', 'date_from', 'date_to'] as const).filter((k) => sel[k] !== undefined).map((k) => [k, sel[k]]),
  );
  const contacts: SegmentContact[] = [];
  for (let offset = 0; ; offset += CONTACTS_LIMIT.max) {
    if (extra.signal.aborted) return { error: refusal(fail.invalid('selection', 'Cancelled.')) };
    const res = await ctx.call('getContacts', { ...filters, offset, limit: CONTACTS_LIMIT.max }, { signal: extra.signal });
    if (!isSuccess(res.status)) return { error: toolResult(res, { method: 'getContacts' }) };
    const page = (res.body as { data: SegmentContact[]; meta: { total: number } }).data;
    for (const c of page) {
      if (ids && !ids.has(c.id)) continue;
      if (matches && !matches.has(c.id)) continue;
      if (sel.subscribed_only && c.unsubscribed_at !== null) continue;
      if (sel.tags && !sel.tags.every((t) => c.tags.includes(t))) continue;
      contacts.push(c);
    }
    if (contacts.length > MAX_PLAN)
      return {
        error: refusal(fail.invalid('selection', `The selection holds more than ${MAX_PLAN} contacts: narrow it (a bot, tags, dates).`)),
      };
    void extra.progress(offset + page.length, (res.body as { meta: { total: number } }).meta.total, 'Reading the segment');
    if (page.length < CONTACTS_LIMIT.max) break;
  }
  return { contacts, ...(index ? { index } : {}) };
}

/** A contact's accounts, read now (and learnt: the money gate then knows who holds them); or why they could not be. */
export async function accountsOf(
  ctx: McpContext,
  contactId: number,
  signal: AbortSignal,
): Promise<Array<{ id: number; currency: string; amount: number; blocked_at: string | null }> | { error: unknown }> {
  const res = await ctx.call('getContactAccounts', { contact_id: contactId }, { signal });
  if (!isSuccess(res.status)) return { error: { status: res.status, ...(res.body as object) } };
  await ctx.accounts.learn('getContactAccounts', { contact_id: contactId }, res.body);
  return (res.body as { data: Array<{ id: number; currency: string; amount: number; blocked_at: string | null }> }).data;
}

/** One contact's step as the API would take it now: to do (with what it needs), or skipped and why. */
async function check(ctx: McpContext, action: BulkAction, open: boolean, c: SegmentContact, signal: AbortSignal): Promise<BulkStep> {
  const skip = (reason: string): BulkStep => ({ contact_id: c.id, status: 'skipped', note: { reason } });
  const todo = (note: Record<string, unknown> = {}): BulkStep => ({ contact_id: c.id, status: 'pending', note });
  switch (action.type) {
    case 'sendMessage':
      return c.unsubscribed_at !== null ? skip('unsubscribed') : todo();
    case 'attachTag':
      return c.tags.includes(action.name!) ? skip('already tagged') : todo();
    case 'detachTag':
      return c.tags.includes(action.name!) ? todo() : skip('not tagged');
    case 'setVariable':
      return todo();
    default: {
      const accounts = await accountsOf(ctx, c.id, signal);
      if (!Array.isArray(accounts)) return skip(`getContactAccounts failed: ${JSON.stringify(accounts.error)}`);
      const a = accounts.find((x) => x.currency === action.currency);
      if (!a) {
        if (action.type === 'deposit' && open) return todo({ open: true });
        return skip(`no ${action.currency} account${action.type === 'deposit' ? ' (open_missing_accounts opens one)' : ''}`);
      }
      if (action.type === 'withdraw' && a.blocked_at !== null) return skip('account blocked');
      if (action.type === 'withdraw' && a.amount < action.amount!)
        return skip(`insufficient funds: the balance is ${amountNote(a.amount, a.currency)}`);
      return todo({ account_id: a.id });
    }
  }
}

/** A plan's total in its currency's words: "600.00 USD". */
const totalNote = (body: PlanBody): string | undefined =>
  body.total !== undefined && body.currency ? amountNote(body.total, body.currency) : undefined;

export function previewBulkTool(ctx: McpContext, plans: BulkPlans): ToolSpec {
  return compositeTool({
    info: PREVIEW_BULK_TOOL_INFO,
    description:
      'Plans one action (amount: per contact) for all contacts matching every selection part (tags: all; query: as ' +
      'findContacts), checked as the API would. Changes nothing; then runBulk.',
    params: PREVIEW_PARAMS,
    input: inputSchema,
    outputSchema: DATA_OUTPUT,
    async run(p, extra, args) {
      const checkedAction = checkAction(args.action as Record<string, unknown>);
      if ('error' in checkedAction) return checkedAction.error;
      const action = checkedAction.action;
      const refused = outOfReach(action, p.open_missing_accounts === true, extra, 'previewBulk');
      if (refused) return refused;
      const selection: Selection = { ...p.selection };
      if (selection.bot_id === undefined) {
        const bot = await ctx.defaultBot();
        if (bot !== undefined) selection.bot_id = bot;
      }
      const open = p.open_missing_accounts === true;
      const found = await segment(ctx, selection, extra);
      if ('error' in found) return found.error;
      const steps: BulkStep[] = [];
      const money = isMoneyAction(action);
      // A money check reads the contact's accounts: at a remote API's pace, those not read within
      // a call's time are checked as their step runs instead (the plan says how many).
      const until = Date.now() + ctx.bulkCallMs;
      let unchecked = 0;
      for (const [i, c] of found.contacts.entries()) {
        if (extra.signal.aborted) return refusal(fail.invalid('selection', 'Cancelled: no plan was made.'));
        if (money && Date.now() > until) {
          steps.push({ contact_id: c.id, status: 'pending', note: { unchecked: true, ...(open ? { open: true } : {}) } });
          unchecked++;
          continue;
        }
        steps.push(await check(ctx, action, open, c, extra.signal));
        if (i % 100 === 99) void extra.progress(i + 1, found.contacts.length, 'Checking each contact');
      }
      const todo = steps.filter((s) => s.status === 'pending');
      const skipped = steps.filter((s) => s.status === 'skipped');
      const body: PlanBody = {
        selection,
        action,
        open_missing_accounts: open,
        count: todo.length,
        skipped: skipped.length,
        ...(money ? { total: todo.length * action.amount!, currency: action.currency! } : {}),
      };
      const now = Date.now();
      const plan = {
        id: randomUUID(),
        created_at: new Date(now).toISOString(),
        expires_at: new Date(now + PLAN_TTL_MS).toISOString(),
        body: { ...body },
      };
      await plans.create(plan, steps);
      const byId = new Map(found.contacts.map((c) => [c.id, c]));
      const data = {
        plan_id: plan.id,
        // What the plan does, as checked: what the Bulk plan card shows and asks the person to confirm.
        action,
        count: body.count,
        ...(money ? { total: body.total, total_note: totalNote(body), currency: body.currency } : {}),
        sample: todo.slice(0, SAMPLE).map((s) => {
          const c = byId.get(s.contact_id)!;
          return { id: c.id, bot_id: c.bot_id, name: c.name, messenger: c.messenger, ...s.note };
        }),
        skipped: skipped.slice(0, SKIPPED_SHOWN).map((s) => ({ contact_id: s.contact_id, reason: s.note.reason })),
        ...(skipped.length > SKIPPED_SHOWN ? { skipped_count: skipped.length } : {}),
        expires_at: plan.expires_at,
        ...(unchecked ? { unchecked } : {}),
        ...(found.index ? { index: found.index } : {}),
      };
      const warnings = unchecked
        ? [
            `The accounts of ${unchecked} of the ${body.count} contacts were not read in time (the API's pace): they are counted in ` +
              'count and total, and checked as their step runs (a missing account or too little money then skips or fails that step).',
          ]
        : [];
      return toolResult(
        { status: 200, headers: {}, body: { data, ...(warnings.length ? { warnings } : {}) } },
        { budget: ctx.maxResultChars },
      );
    },
  });
}
