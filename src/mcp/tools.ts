/**
 * One MCP tool per API method, generated from the catalog: name, title, description, input and
 * output schemas, annotations. Argument NAMES are checked here, strictly (a misspelt `ammount`
 * is a 422, never dropped); argument VALUES are validated by the API itself (the pipeline of
 * the local backend, the server of the remote one), so a tool answers exactly what the API would.
 */
import { randomUUID } from 'node:crypto';
import { isInputRequiredResult, type CallToolResult, type InputRequiredResult, type ToolAnnotations } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { errorCodeOf, isSuccess, type ApiResponse, type AuditEntry, type CallOptions } from '../api/backend.js';
import { findMethod, METHODS } from '../api/catalog.js';
import { amountNote } from '../api/currency.js';
import type { MethodDef } from '../api/define.js';
import { ApiError, fail } from '../api/errors.js';
import { Rule, r, validate, type Shape } from '../api/rules.js';
import { log } from '../log.js';
import { logWithin } from './logging.js';
import type { McpContext } from './context.js';
import { fillDefaultBot, missesBot, withOptionalBot } from './default-bot.js';
import { redact } from './audit.js';
import type { AccountView } from './accounts.js';
import { capsFor, confirmQuestion, declined, hasCaps, overCap, unknownAccount } from './caps.js';
import type { Elicitor } from './elicit.js';
import type { Caps } from './state.js';
import { callOnce, outcomeUnknown, type Answer } from './idempotency.js';
import { argumentNotes, searchHint } from './hints.js';
import { toolResult } from './results.js';
import { shapeToZod, toJsonSchema, type JsonSchema } from './schemas.js';

/** What a tool handler gets besides its arguments. */
export interface ToolExtra {
  signal: AbortSignal;
  /** Report progress (sent only when the client asked for it with a progress token). */
  progress(progress: number, total: number | undefined, message: string): Promise<void>;
  /** Who is calling: the MCP client as it named itself, and its session (for the audit trail). */
  caller?: { client: { name: string; version: string } | null; session: string | null };
  /** Ask the user (elicitation), the same way in both protocol eras. */
  elicit: Elicitor;
  /**
   * The person already confirmed this exact call outside elicitation (an MCP Apps view's
   * button): a money call over a cap then moves without asking, recorded as confirmed so.
   * Set only by the server's own code (see `moneyCall`), never from a tool's arguments.
   */
  confirmed?: Confirmation;
}

/** How a money call over a cap was confirmed, or why it was not, and by whom (the audit trail's). */
export type Confirmation = NonNullable<AuditEntry['confirmation']>;

/** A tool's answer: a result, or a question to the user first (see elicit.ts). */
export type ToolOutcome = CallToolResult | InputRequiredResult;

export interface ToolSpec {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations: ToolAnnotations;
  /** The tool's `_meta` in tools/list (an MCP Apps view's tool: `ui`). */
  _meta?: Record<string, unknown>;
  run(args: Record<string, unknown>, extra: ToolExtra): Promise<ToolOutcome>;
}

const IDEMPOTENCY_KEY = 'idempotency_key';
const idempotencyRule = r
  .string()
  .between(1, 255)
  .describe('A new key (e.g. a UUID) per move, the same on a retry: the money moves once (the retry answers "replayed": true)');

/** The tool's parameter shape: the method's, its parameter aliases, and the server's own extras. */
export function toolShape(def: MethodDef): Shape {
  const shape: Shape = { ...def.params };
  for (const [alias, canonical] of Object.entries(def.paramAliases ?? {})) {
    const rule = def.params[canonical];
    if (rule) shape[alias] = new Rule({ ...rule.state, required: false, description: `Alias of ${canonical}.` });
  }
  if (def.money) shape[IDEMPOTENCY_KEY] = idempotencyRule;
  return shape;
}

/** Whether the method answers a page of items (`data` is an array). */
export function isListMethod(def: MethodDef): boolean {
  const hasDataArray = (t: unknown): boolean =>
    (t instanceof z.ZodObject && t.shape.data instanceof z.ZodArray) ||
    (t instanceof z.ZodUnion && (t.options as unknown[]).some(hasDataArray));
  return hasDataArray(def.result);
}

/**
 * The result schema, `type: object` at the top as MCP requires. The server's own keys beside
 * the body's (`warnings`, `truncated`, `replayed`) are not listed: every tool may carry them,
 * the instructions say so once, and the schema's objects stay open to them. None for a 204:
 * `{}` says nothing a schema would add.
 */
function outputSchemaOf(def: MethodDef): JsonSchema | undefined {
  return def.result === null ? undefined : toJsonSchema(def.result, { output: true });
}

/**
 * The method's description, and what its paging policy adds: the tool that reads the whole set.
 * The conventions every tool shares (minor units, idempotency keys, paging, the result budget)
 * are said once, in the server's instructions.
 */
function descriptionOf(def: MethodDef): string {
  return def.paging?.whole ? `${def.description} Every one at once: ${def.paging.whole}.` : def.description;
}

/** Levenshtein distance, for "did you mean" on a misspelt argument. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}

/** Where a misspelt or misplaced argument belongs: a near name (by edit distance, a third of its length), or `elsewhere`. */
function unknownKeyMessage(key: string, known: string[], elsewhere?: (key: string) => string | undefined): string {
  const name = key.includes('.') ? key : key.replace(/_/g, ' ');
  const leaf = key.split('.').pop()!;
  const most = Math.max(1, Math.floor(leaf.length / 3));
  const near = known.filter((k) => distance(k, leaf) <= most).sort((a, b) => distance(a, leaf) - distance(b, leaf))[0];
  const other = key.includes('.') ? undefined : elsewhere?.(leaf);
  const hint = other ? ` ${other}` : near ? ` Did you mean ${near}?` : '';
  return `The ${name} field is not a parameter of this tool.${hint} Known parameters: ${known.join(', ') || 'none'}.`;
}

/**
 * Names the schema does not know, at any depth, as Laravel-style errors (`fields.0.colour`).
 * Only unknown names are reported here; wrong values are the API's to judge.
 */
export function unknownArguments(shape: Shape, args: Record<string, unknown>, elsewhere?: (key: string) => string | undefined): Map<string, string[]> {
  const errors = new Map<string, string[]>();
  // A walk over the rule shape, not a zod parse: this runs on every tool call.
  const walk = (sh: Shape, value: unknown, prefix: string) => {
    if (!value || typeof value !== 'object' || Array.isArray(value)) return;
    const known = Object.keys(sh);
    for (const [key, v] of Object.entries(value)) {
      const path = prefix + key;
      const rule = Object.hasOwn(sh, key) ? sh[key] : undefined;
      if (!rule) {
        errors.set(path, [unknownKeyMessage(path, known, elsewhere)]);
        continue;
      }
      const st = rule.state;
      if (st.kind === 'object' && st.shape) walk(st.shape, v, `${path}.`);
      else if (st.kind === 'array' && st.items?.state.kind === 'object' && st.items.state.shape && Array.isArray(v))
        v.forEach((item, i) => walk(st.items!.state.shape!, item, `${path}.${i}.`));
    }
  };
  walk(shape, args, '');
  return errors;
}

/**
 * Beside an insufficient_funds answer: the balance now and the largest debit that would
 * succeed, so the model can ask the person instead of retrying blindly.
 */
async function fundsNote(ctx: McpContext, params: Record<string, unknown>, signal: AbortSignal): Promise<string> {
  const id = params.account_id;
  const account = typeof id === 'number' ? await ctx.account(id, signal) : undefined;
  if (!account) return `Nothing was debited. Read the balance with getContactAccounts and ask the person before trying a smaller amount.`;
  return (
    `Nothing was debited. The balance of account ${account.id} is ${amountNote(account.amount, account.currency)} ` +
    `(${account.amount} in minor units): the largest debit that would succeed now is amount=${account.amount}. ` +
    'Ask the person before trying again.'
  );
}

/** The tool of one API method. */
export function methodTool(def: MethodDef, ctx: McpContext): ToolSpec {
  const shape = withOptionalBot(def, toolShape(def));
  const schemas: { input?: JsonSchema; output?: JsonSchema } = {};

  return {
    name: def.name,
    title: def.title,
    description: descriptionOf(def),
    // JSON Schemas are built on the first tools/list, not at start-up (a good part of cold start).
    get inputSchema() {
      return (schemas.input ??= toJsonSchema(shapeToZod(shape)));
    },
    get outputSchema() {
      if (!('output' in schemas)) schemas.output = outputSchemaOf(def);
      return schemas.output;
    },
    annotations: { ...def.annotations },
    async run(args, extra) {
      try {
        return await runMethod(def, ctx, shape, args, extra);
      } catch (e) {
        if (!def.money) throw e;
        // A bug of ours on the money path, maybe after the move: the model must not retry blind.
        logWithin(extra.signal, () => log.error({ err: e, tool: def.name }, 'money tool failed'));
        return toolResult(
          new ApiError(
            'outcome_unknown',
            `The outcome is unknown: the money may or may not have moved. Check with ${def.checkWith ?? 'getContactAccounts'} before retrying with a new idempotency key.`,
          ).response(),
          { method: def.name, budget: ctx.maxResultChars },
        );
      }
    },
  };
}

/**
 * Append to the audit trail; a line that cannot be written (remote mode: a full disk, a file
 * made unwritable) does not hide the call's real outcome: it is logged, and the warning is returned.
 */
function record(ctx: McpContext, entry: AuditEntry, signal: AbortSignal): string | undefined {
  try {
    ctx.audit?.append(entry);
    return undefined;
  } catch (e) {
    logWithin(signal, () => log.error({ err: e, tool: entry.tool }, 'audit line not written'));
    return `The audit trail could not be written for this call (${e instanceof Error ? e.message : String(e)}); its outcome above is real. Tell the server operator.`;
  }
}

/** A method tool's call: the answer, recorded in the audit trail when it changes data. */
async function runMethod(def: MethodDef, ctx: McpContext, shape: Shape, args: Record<string, unknown>, extra: ToolExtra): Promise<ToolOutcome> {
  // Every call of a tool that changes data is recorded, refusals and replays included.
  const audit = def.annotations.readOnlyHint ? undefined : auditEntry(ctx, def, args, extra);
  // A move the person confirmed elsewhere is recorded so, over a cap or not.
  if (audit && def.money && extra.confirmed) audit.confirmation = extra.confirmed;
  const outcome = await answerOf(def, ctx, shape, args, extra, audit);
  if (isInputRequiredResult(outcome)) {
    // The question is on its way to the person: recorded, so one never answered is seen too.
    if (audit) record(ctx, { ...audit, status: 422, code: 'confirmation_required' }, extra.signal);
    return outcome;
  }
  let answer = outcome;
  const unrecorded = audit && !answer.audited ? record(ctx, { ...audit, status: answer.status, code: errorCodeOf(answer), replayed: answer.replayed === true }, extra.signal) : undefined;
  if (unrecorded) answer = { ...answer, warnings: [...(answer.warnings ?? []), unrecorded] };
  if (isSuccess(answer.status) && !answer.replayed) {
    if (def.changesLists) ctx.listsChanged();
    ctx.accounts.learn(def.name, answer.params ?? {}, answer.body);
    const noted = ctx.noteAnswer(answer.body);
    if (noted) await noted;
  }
  if (def.money && errorCodeOf(answer) === 'insufficient_funds')
    answer = { ...answer, warnings: [...(answer.warnings ?? []), await fundsNote(ctx, answer.params ?? {}, extra.signal)] };
  return toolResult(answer, {
    method: def.name,
    replayed: answer.replayed,
    budget: ctx.maxResultChars,
    continuation: { tool: def.name, args: answer.params ?? args, paging: def.paging },
    notes: [...argumentNotes(shape, answer.params ?? args, answer), ...ctx.startNotes(def.name)],
  });
}

/** The audit entry of a call, its outcome still to come. */
function auditEntry(ctx: McpContext, def: MethodDef, args: Record<string, unknown>, extra: ToolExtra): AuditEntry {
  const { [IDEMPOTENCY_KEY]: key, ...rest } = args;
  // Ids sent as text ("500") are read as the API reads them, so the row still names the contact.
  const id = (v: unknown) => (typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d{1,15}\s*$/.test(v) ? Number(v) : undefined);
  const accountId = id(args.account_id);
  const contact = id(args.contact_id) ?? (accountId !== undefined ? ctx.accounts.holder(accountId) : undefined);
  return {
    at: new Date().toISOString(),
    owner_id: ctx.knownOwner ?? null,
    client: extra.caller?.client ?? null,
    session: extra.caller?.session ?? null,
    tool: def.name,
    arguments: redact(rest) as Record<string, unknown>,
    contact_id: contact ?? null,
    status: 0,
    code: null,
    idempotency_key: typeof key === 'string' ? key : null,
    replayed: false,
    confirmation: null,
  };
}

/** The question a money call over a cap asks, among the tool's questions. */
const QUESTION_ID = 'confirm';

/** What a money call's gate decided: go ahead (with a reservation in the window), refuse, or ask the person. */
type Gate = { reservation?: number } | { refusal: ApiError } | { ask: InputRequiredResult };

/** The client (and session) a call came by, in words. */
export function clientOf(extra: ToolExtra): string {
  const c = extra.caller?.client;
  const session = extra.caller?.session;
  return `${c ? `${c.name} ${c.version}` : 'an unnamed client'}${session ? ` (session ${session})` : ''}`;
}

/** Who answers a question: the person, in the client the call came by. */
const answeredBy = (extra: ToolExtra) => `the person, in ${clientOf(extra)}`;

/**
 * The caps of a money call (fails closed): nothing to check; a reservation in the 24 h window
 * (under the caps, or over them and confirmed: by the person's "yes" to the question, by
 * `extra.confirmed`, or by --no-confirm); the question to the person, when the client can
 * ask it; else a refusal that moves nothing (over a cap and unconfirmed, declined, an account
 * whose currency is unknown). Records in `audit` how the call was confirmed.
 */
async function moneyGate(
  ctx: McpContext,
  def: MethodDef,
  params: Record<string, unknown>,
  extra: ToolExtra,
  audit: AuditEntry | undefined,
): Promise<Gate> {
  const money = ctx.money;
  if (!def.money || !money || !hasCaps(money.policy)) return {};
  const { account_id: id, amount } = params;
  // Fails closed: only the numbers moneyParams checked go on (anything else was refused there).
  if (typeof id !== 'number' || typeof amount !== 'number') return { refusal: fail.invalid('amount', 'The amount field must be an integer.') };
  const known = await ctx.account(id, extra.signal);
  if (!known) return { refusal: unknownAccount(id) };
  const caps = capsFor(money.policy, known.currency);
  // What the person is told names the contact: looked up only when they are to be told something.
  const named = async (): Promise<AccountView> => ({ ...known, contactName: await ctx.contactName(known.contactId, extra.signal) });
  const confirm = (how: Confirmation): Gate => {
    if (audit) audit.confirmation = how;
    const forced = money.window.reserve(id, amount, caps, true);
    return { reservation: forced.ok ? forced.id : undefined };
  };
  if (extra.confirmed) return confirm(extra.confirmed);
  // The retry that carries the person's answer: the answer decides, whatever the window holds now.
  const reply = extra.elicit.reply(QUESTION_ID);
  if (reply) {
    const by = answeredBy(extra);
    if (reply.action === 'accept' && reply.content[QUESTION_ID] === true) return confirm({ how: 'elicitation accepted', by });
    const how = reply.action === 'cancel' ? 'elicitation cancelled' : 'elicitation declined';
    if (audit) audit.confirmation = { how, by };
    return { refusal: declined(def.name, await named(), amount, reply.action === 'cancel') };
  }
  const first = money.window.reserve(id, amount, caps, false);
  if (first.ok) return { reservation: first.id };
  if (money.policy.noConfirm) return confirm({ how: 'not asked (--no-confirm)', by: 'the server operator' });
  // A debit the balance cannot cover is not worth the person's "yes": the API's refusal now.
  if (def.name === 'withdrawFundsFromContactAccount' && amount > known.amount)
    return { refusal: fail.coded('insufficient_funds', 'account_id', 'Insufficient funds: the balance is less than the amount.') };
  if (extra.elicit.canAsk) {
    if (audit) audit.confirmation = { how: 'elicitation asked, no answer yet', by: answeredBy(extra) };
    return { ask: await askToConfirm(def, await named(), amount, caps, first, extra.elicit) };
  }
  if (audit) audit.confirmation = { how: 'not possible: the client cannot ask the person (no elicitation)', by: clientOf(extra) };
  return { refusal: overCap(def.name, known, amount, caps, first.over, first.used) };
}

/** The form question of a money call over a cap; sealed with it, a nonce that names this confirmation. */
function askToConfirm(
  def: MethodDef,
  account: AccountView,
  amount: number,
  caps: Caps,
  over: { over: 'amount' | 'daily'; used: number },
  elicit: Elicitor,
): Promise<InputRequiredResult> {
  return elicit.ask(
    {
      id: QUESTION_ID,
      message: confirmQuestion(def.name, account, amount, caps, over.over, over.used),
      requestedSchema: {
        type: 'object',
        properties: { [QUESTION_ID]: { type: 'boolean', title: 'Yes, move the money', default: false } },
        required: [QUESTION_ID],
      },
    },
    { nonce: randomUUID() },
  );
}

/**
 * The answer of a method tool's call (a refusal of the MCP server's own in the API's shape), and
 * the parameters sent; or the question to the person that must be answered first.
 */
async function answerOf(
  def: MethodDef,
  ctx: McpContext,
  shape: Shape,
  args: Record<string, unknown>,
  extra: ToolExtra,
  audit: AuditEntry | undefined,
): Promise<(Answer & { params?: Record<string, unknown> }) | InputRequiredResult> {
  // A read given a person's name or phone was meant as a search: findContacts does that.
  const unknown = unknownArguments(shape, args, def.annotations.readOnlyHint && ctx.contacts ? searchHint : undefined);
  if (unknown.size > 0) return fail.validation(unknown).response();
  const opts: CallOptions = { signal: extra.signal, onProgress: (m) => void extra.progress(0, undefined, m), audit };
  const params = missesBot(def, args) ? await fillDefaultBot(def, ctx, { ...args }) : { ...args };
  delete params[IDEMPOTENCY_KEY];
  const invalid = moneyParams(def, ctx, params, extra);
  if (invalid) return invalid.response();
  // Only a money call passes a gate first: any other is the backend's call itself.
  const call = !def.money ? () => ctx.call(def.name, params, opts) : async (): Promise<ApiResponse | InputRequiredResult> => {
    const gate = await moneyGate(ctx, def, params, extra, audit);
    if ('refusal' in gate) return gate.refusal.response();
    if ('ask' in gate) return gate.ask;
    const res = await ctx.call(def.name, params, opts);
    // A definite refusal moved nothing: its reservation no longer counts toward the daily cap.
    if (gate.reservation !== undefined && !isSuccess(res.status) && !outcomeUnknown(res)) ctx.money!.window.release(gate.reservation);
    return res;
  };
  // An answered question is spent by its first answer, whatever it was: that answer is kept
  // under the question's nonce and replayed, so the same answer sent twice (a retried
  // 2026-07-28 request) moves the money once, and a "no" cannot be sent again as a "yes".
  const nonce = extra.elicit.state<{ nonce?: unknown }>()?.nonce;
  const answered = def.money && typeof nonce === 'string' ? () => callOnce(ctx.keys, def, `confirmation ${nonce}`, params, call, { final: true }) : call;
  const key = def.money ? args[IDEMPOTENCY_KEY] : undefined;
  const withParams = <T extends object>(r: T) => (isInputRequiredResult(r) ? r : { ...r, params });
  if (key === undefined || key === null) return withParams(await answered());
  // No NUL: a key is kept in the database, and PostgreSQL's text cannot hold one.
  if (typeof key !== 'string' || key.length < 1 || key.length > 255 || key.includes('\0'))
    return fail.invalid(IDEMPOTENCY_KEY, 'The idempotency key field must be a string of 1 to 255 characters, with no NUL character.').response();
  return withParams(await callOnce(ctx.keys, def, key, params, answered));
}

/**
 * With caps on (or a move confirmed elsewhere, which skips them), a money call's account_id and
 * amount as the API reads them (strings trimmed, "20000" is 20000): the gate checks and the API
 * gets the same numbers. An account_id or amount the API would refuse is refused here, in its
 * words, so no value the gate cannot read ever gets past it.
 */
function moneyParams(def: MethodDef, ctx: McpContext, params: Record<string, unknown>, extra: ToolExtra): ApiError | undefined {
  if (!def.money || !(extra.confirmed || (ctx.money && hasCaps(ctx.money.policy)))) return undefined;
  const shape = def.params as Shape;
  // As Laravel's middleware leaves them: a string trimmed, an empty one null.
  const asSent = (v: unknown) => (typeof v === 'string' ? v.trim() || null : v);
  const checked = validate({ account_id: shape.account_id!, amount: shape.amount! }, { account_id: asSent(params.account_id), amount: asSent(params.amount) });
  if (!checked.ok) return fail.validation(checked.errors);
  params.account_id = checked.params.account_id;
  params.amount = checked.params.amount;
  return undefined;
}

/**
 * A money tool's call as tools/call makes it, for the server's own tools: the caps' decision
 * (under them: moves; over them: needs confirmation, asked with `extra.elicit` or refused with
 * `confirmation_required`) and, with `confirmed`, the confirmed move, exactly once per
 * idempotency_key, with the window's reservation and the audit row (its `confirmation` is
 * `confirmed`). An MCP Apps view's commit tool calls it with `{ how: 'app view', by: ... }`.
 */
export function moneyCall(
  ctx: McpContext,
  tool: 'addFundsToContactAccount' | 'withdrawFundsFromContactAccount',
  args: Record<string, unknown>,
  extra: ToolExtra,
  confirmed?: Confirmation,
): Promise<ToolOutcome> {
  return methodTool(findMethod(tool)!, ctx).run(args, { ...extra, confirmed });
}

/** Every API method's tool, in catalog order. */
export function methodTools(ctx: McpContext): ToolSpec[] {
  return (METHODS as readonly MethodDef[]).map((def) => methodTool(def, ctx));
}
