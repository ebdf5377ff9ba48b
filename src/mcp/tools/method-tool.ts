/**
 * One MCP tool per API method, generated from the catalog: name, title, description, input and
 * output schemas, annotations; its call: names checked (arguments.ts), a money call through its
 * gate (money-gate.ts), the backend called, the audit trail written. Argument VALUES are
 * validated by the API itself (the pipeline of the local backend, the server of the remote
 * one), so a tool answers exactly what the API would.
 */
import { scopeOf } from '../../api/scopes.js';
import { isInputRequiredResult, type InputRequiredResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { errorCodeOf, isSuccess, type ApiResponse, type AuditEntry, type CallOptions } from '../../api/backend.js';
import { findMethod, METHODS, type CatalogMethod } from '../../api/catalog.js';
import { isMoney, type MethodDef } from '../../api/define.js';
import { ApiError, fail, outcomeUnknown } from '../../api/errors.js';
import { Rule, r, type Shape } from '../../api/rules.js';
import { log } from '../../common/log.js';
import { countMoney } from '../../common/telemetry.js';
import { logWithin } from '../logging.js';
import type { McpContext } from '../context.js';
import { fillDefaultBot, missesBot, withOptionalBot } from './default-bot.js';
import { appendAudit, auditEntryOf } from '../money/audit.js';
import { unknownArguments } from './arguments.js';
import { fundsNote, moneyGate, moneyParams } from './money-gate.js';
import type { Confirmation, ToolOutcome, ToolSpec, ToolExtra } from '../tool-spec.js';
import { callOnce, isOutcomeUnknown, type Answer } from '../money/idempotency.js';
import { argumentNotes, searchHint } from '../result/hints.js';
import { toolResult } from '../result/results.js';
import { inputSchemaOf, outputSchemaOf, shapeToZod, toJsonSchema, type JsonSchema } from './schemas.js';

const IDEMPOTENCY_KEY = 'idempotency_key';
// What to give it is said once, in the server's instructions.
const idempotencyRule = r.string().between(1, 255);

/** The tool's parameter shape: the method's, its parameter aliases, and the server's own extras. */
function toolShape(def: MethodDef): Shape {
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
function resultSchemaOf(def: MethodDef): JsonSchema | undefined {
  const result = def.result;
  return result === null ? undefined : outputSchemaOf(def.name, () => result);
}

/**
 * The method's description, and what its paging policy adds: the tool that reads the whole set.
 * The conventions every tool shares (minor units, idempotency keys, paging, the result budget)
 * are said once, in the server's instructions.
 */
function descriptionOf(def: MethodDef): string {
  return def.paging?.whole ? `${def.description} Every one at once: ${def.paging.whole}.` : def.description;
}

/** The tool of one API method. */
function methodTool(def: CatalogMethod, ctx: McpContext): ToolSpec {
  const shape = withOptionalBot(def, toolShape(def));
  const schemas: { input?: JsonSchema; output?: JsonSchema } = {};

  return {
    name: def.name,
    title: def.title,
    description: descriptionOf(def),
    // JSON Schemas are built on the first tools/list, not at start-up (a good part of cold start).
    get inputSchema() {
      return (schemas.input ??= inputSchemaOf(def.name, () => toJsonSchema(shapeToZod(shape))));
    },
    get outputSchema() {
      if (!('output' in schemas)) schemas.output = resultSchemaOf(def);
      return schemas.output;
    },
    annotations: { ...def.annotations },
    scopes: [scopeOf(def)],
    run: (args, extra) =>
      guarded(
        def,
        extra,
        async () => {
          const answer = await methodAnswer(def, ctx, shape, args, extra);
          return isInputRequiredResult(answer) ? answer : resultOf(def, ctx, shape, args, answer);
        },
        (unknown) => toolResult(unknown, { method: def.name, budget: ctx.maxResultChars }),
      ),
  };
}

/** `call`, and on the money path a failure of ours as its unknown outcome (maybe after the move: never retried blind). */
async function guarded<T>(def: MethodDef, extra: ToolExtra, call: () => Promise<T>, unknown: (res: ApiResponse) => T): Promise<T> {
  try {
    return await call();
  } catch (e) {
    if (!def.money) throw e;
    logWithin(extra.signal, () => log.error({ err: e, tool: def.name }, 'money tool failed'));
    return unknown(outcomeUnknown(def.name, def, 'the MCP server failed on the money path').response());
  }
}

/** A method's answer as its tool gets it (the parameters sent beside it), or the question to the person. */
export type MethodAnswer = (Answer & { params?: Record<string, unknown> }) | InputRequiredResult;

/** A method tool's call up to the API's answer, recorded in the audit trail when it changes data. */
async function methodAnswer(
  def: CatalogMethod,
  ctx: McpContext,
  shape: Shape,
  args: Record<string, unknown>,
  extra: ToolExtra,
): Promise<MethodAnswer> {
  // Every call of a tool that changes data is recorded, refusals and replays included.
  const audit = def.annotations.readOnlyHint ? undefined : await auditEntry(ctx, def, args, extra);
  // A move the person confirmed elsewhere is recorded so, over a cap or not.
  if (audit && def.money && extra.confirmed) audit.confirmation = extra.confirmed;
  const outcome = await answerOf(def, ctx, shape, args, extra, audit);
  if (isInputRequiredResult(outcome)) {
    // The question is on its way to the person: recorded, so one never answered is seen too.
    if (audit) await appendAudit(ctx.audit, { ...audit, status: 422, code: 'confirmation_required' }, extra.signal);
    return outcome;
  }
  let answer = outcome;
  const unrecorded =
    audit && !answer.audited
      ? await appendAudit(
          ctx.audit,
          { ...audit, status: answer.status, code: errorCodeOf(answer), replayed: answer.replayed === true },
          extra.signal,
        )
      : undefined;
  if (unrecorded) answer = { ...answer, warnings: [...(answer.warnings ?? []), unrecorded] };
  if (isSuccess(answer.status) && !answer.replayed) {
    if (def.changesLists) ctx.listsChanged();
    await ctx.accounts.learn(def.name, answer.params ?? {}, answer.body);
    const noted = ctx.noteAnswer(answer.body);
    if (noted) await noted;
  }
  if (def.money && errorCodeOf(answer) === 'insufficient_funds')
    answer = { ...answer, warnings: [...(answer.warnings ?? []), await fundsNote(ctx, answer.params ?? {}, extra.signal)] };
  return answer;
}

/** The tool result of a method's answer. */
function resultOf(
  def: MethodDef,
  ctx: McpContext,
  shape: Shape,
  args: Record<string, unknown>,
  answer: Answer & { params?: Record<string, unknown> },
): ToolOutcome {
  return toolResult(answer, {
    method: def.name,
    replayed: answer.replayed,
    budget: ctx.maxResultChars,
    continuation: { tool: def.name, args: answer.params ?? args, paging: def.paging },
    notes: [...argumentNotes(shape, answer.params ?? args, answer), ...ctx.startNotes(def.name)],
  });
}

/** The audit entry of a call, its outcome still to come. */
async function auditEntry(ctx: McpContext, def: MethodDef, args: Record<string, unknown>, extra: ToolExtra): Promise<AuditEntry> {
  const { [IDEMPOTENCY_KEY]: key, ...rest } = args;
  // Ids sent as text ("500") are read as the API reads them, so the row still names the contact.
  const id = (v: unknown) => (typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d{1,15}\s*$/.test(v) ? Number(v) : undefined);
  const accountId = id(args.account_id);
  const contact = id(args.contact_id) ?? (accountId !== undefined ? await ctx.accounts.holder(accountId) : undefined);
  return auditEntryOf({ owner: ctx.knownOwner, caller: extra.caller }, def.name, rest, {
    contact,
    key: typeof key === 'string' ? key : undefined,
  });
}

/**
 * The answer of a method tool's call (a refusal of the MCP server's own in the API's shape), and
 * the parameters sent; or the question to the person that must be answered first.
 */
async function answerOf(
  def: CatalogMethod,
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
  const call = !def.money
    ? () => ctx.call(def.name, params, opts)
    : async (): Promise<ApiResponse | InputRequiredResult> => {
        const gate = await moneyGate(ctx, def, params, extra, audit);
        if ('refusal' in gate) return gate.refusal.response();
        if ('ask' in gate) return gate.ask;
        const res = await ctx.call(def.name, params, opts);
        // Counted by currency and direction (the answer's account names its currency), never by whom.
        if (isSuccess(res.status))
          countMoney(def.money!, (res.body as { data?: { currency?: unknown } } | undefined)?.data?.currency, params.amount);
        // A definite refusal moved nothing: its reservation no longer counts toward the daily cap.
        if (gate.reservation !== undefined && !isSuccess(res.status) && !isOutcomeUnknown(res))
          await ctx.money!.window.release(gate.reservation);
        return res;
      };
  const withParams = <T extends object>(r: T) => (isInputRequiredResult(r) ? r : { ...r, params });
  if (!isMoney(def)) return withParams(await call());
  // An answered question is spent by its first answer, whatever it was: that answer is kept
  // under the question's nonce and replayed, so the same answer sent twice (a retried
  // 2026-07-28 request) moves the money once, and a "no" cannot be sent again as a "yes".
  const nonce = extra.elicit.state<{ nonce?: unknown }>()?.nonce;
  // A replay answers nothing the API would refuse now (the owner blocked since): checked where the
  // backend can without a request, counting none.
  const refused = () => ctx.backend.admit?.({ counted: false });
  const answered =
    typeof nonce === 'string' ? () => callOnce(ctx.keys, def, `confirmation ${nonce}`, params, call, { final: true, refused }) : call;
  const key = args[IDEMPOTENCY_KEY];
  if (key === undefined || key === null) return withParams(await answered());
  // No NUL: a key is kept in the database, and PostgreSQL's text cannot hold one.
  if (typeof key !== 'string' || key.length < 1 || key.length > 255 || key.includes('\0'))
    return fail
      .invalid(IDEMPOTENCY_KEY, 'The idempotency key field must be a string of 1 to 255 characters, with no NUL character.')
      .response();
  return withParams(await callOnce(ctx.keys, def, key, params, answered, { refused }));
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
  method: string,
  args: Record<string, unknown>,
  extra: ToolExtra,
  confirmed?: Confirmation,
): Promise<ToolOutcome> {
  const def = findMethod(method);
  // Only a method whose definition says it moves money takes this path (a bug of ours otherwise).
  if (!def || !isMoney(def)) throw new Error(`moneyCall: ${method} moves no money`);
  return methodTool(def, ctx).run(args, { ...extra, confirmed });
}

/**
 * Any method's call as tools/call makes it (its checks, a money call's gate and idempotency key,
 * the audit trail), for the server's own tools acting per contact (runBulk's steps): the API's
 * answer itself, not rendered to a tool result (or the question to the person); `confirmed` as
 * moneyCall's.
 */
export function methodCall(
  ctx: McpContext,
  def: MethodDef,
  args: Record<string, unknown>,
  extra: ToolExtra,
  confirmed?: Confirmation,
): Promise<MethodAnswer> {
  const method = findMethod(def.name);
  // The catalog's own definition, so its name is one the backend takes (a bug of ours otherwise).
  if (method !== def) throw new Error(`methodCall: ${def.name} is not a method of the catalog`);
  const shape = withOptionalBot(def, toolShape(def));
  const withConfirmed = { ...extra, confirmed };
  return guarded(
    method,
    withConfirmed,
    () => methodAnswer(method, ctx, shape, args, withConfirmed),
    (unknown) => unknown,
  );
}

/** Every API method's tool, in catalog order. */
export function methodTools(ctx: McpContext): ToolSpec[] {
  return (METHODS as readonly CatalogMethod[]).map((def) => methodTool(def, ctx));
}
