/**
 * runBulk, the composite tool that carries out a previewBulk plan (bulk-plan.ts): the person
 * confirms the whole plan once (elicitation, either protocol era; money in major units, its
 * total, how many people), then each contact's step runs through the API method's own tool
 * path (its checks, the money gate, the audit trail), recorded before and after it runs, so a
 * second call goes on where a crash, a kill, a lost connection or a cancel stopped it and never
 * repeats a step. A money step carries its own idempotency key (plan and contact): a step whose
 * outcome is unknown is read back (the balance against the one recorded before it) before it is
 * tried again. Also the plan's outcomes as the resource `workspace://bulk/{plan_id}`.
 */
import { randomUUID } from 'node:crypto';
import {
  isInputRequiredResult,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  type CallToolResult,
  type InputRequiredResult,
  type ReadResourceResult,
} from '@modelcontextprotocol/server';
import type { AuditEntry } from '../../api/backend.js';
import { addContactAccount } from '../../api/contact-accounts.js';
import { fail, type ApiError } from '../../api/errors.js';
import { r } from '../../api/rules.js';
import { log } from '../../shared/log.js';
import type { McpContext } from '../context.js';
import { logWithin, uncancellable } from '../logging.js';
import { majorUnits } from '../money/accounts.js';
import { capsFor, hasCaps } from '../money/caps.js';
import type { Elicitor } from '../money/elicit.js';
import { longestPrefix, PROTOCOL_ROOM, resultSize } from '../result/budget.js';
import { refusal, toolResult } from '../result/results.js';
import type { BulkPlan, BulkPlans, BulkStep, BulkStepStatus } from '../state.js';
import type { Confirmation, ToolExtra, ToolOutcome, ToolSpec } from '../tool-spec.js';
import { checkArguments } from '../tools/arguments.js';
import { clientOf } from '../tools/money-gate.js';
import { methodCall } from '../tools/method-tool.js';
import { inputSchemaOf, shapeToZod, toJsonSchema, type JsonSchema } from '../tools/schemas.js';
import { accountsOf, ACTIONS, DATA_OUTPUT, isMoneyAction, totalNote, type PlanBody } from './bulk-plan.js';
import { RUN_BULK_TOOL_INFO } from './identities.js';

/** How long a run holds its plan without a step (another call may take over a run that died then). */
const HOLD_MS = 15_000;
/** Steps read from the state at a time. */
const BATCH = 100;
/** The one question runBulk asks. */
const QUESTION_ID = 'confirm';
/** The steps a run still has to do: `running` and `unknown` ones are read back first. */
const LEFT: readonly BulkStepStatus[] = ['pending', 'running', 'unknown'];

const RUN_PARAMS = { plan_id: r.string().required() };

const BULK_URI = 'workspace://bulk/';
export const BULK_TEMPLATE = {
  uriTemplate: `${BULK_URI}{plan_id}{?after,limit}`,
  name: 'bulk-plan',
  title: 'Bulk plan outcomes',
  description:
    "A previewBulk plan and each contact's step: pending, done, skipped (why), failed (the API's error), unknown; " +
    '100 a page by contact id; "next" continues.',
  mimeType: 'application/json',
};

/** A step's tool answer, as the API's status and body. */
function answerOf(outcome: ToolOutcome): { status: number; body: Record<string, unknown> } {
  if (isInputRequiredResult(outcome)) return { status: 422, body: { code: 'confirmation_required' } };
  const text = (outcome.content?.[0] as { text?: string } | undefined)?.text ?? '{}';
  if (!outcome.isError) return { status: 200, body: (outcome.structuredContent ?? JSON.parse(text)) as Record<string, unknown> };
  const { status, ...body } = JSON.parse(text) as { status: number } & Record<string, unknown>;
  return { status, body };
}

/** A step never asks the person anything: the plan was confirmed (or needed no confirmation) as a whole. */
const NO_QUESTIONS: Elicitor = {
  canAsk: false,
  reply: () => undefined,
  state: () => undefined,
  ask: () => Promise.reject(new Error('a bulk step asks nothing')),
};

/** What the plan does, in the person's words: the question's first line. */
function planWords(body: PlanBody): string {
  const a = body.action;
  const people = `${body.count} ${body.count === 1 ? 'contact' : 'contacts'}`;
  switch (a.type) {
    case 'deposit':
    case 'withdraw':
      return (
        `${a.type === 'deposit' ? 'Top up' : 'Debit'} the ${a.currency} accounts of ${people} by ${majorUnits(a.amount!, a.currency!)} ` +
        `${a.currency} each: ${totalNote(body)} in all ("${a.description}").`
      );
    case 'sendMessage':
      return `Send a message to ${body.count} ${body.count === 1 ? 'person' : 'people'}${a.text ? `: "${a.text.slice(0, 200)}"` : ''}${a.image ? ' (with an image)' : ''}${a.file ? ' (with a file)' : ''}. It cannot be taken back.`;
    case 'attachTag':
      return `Tag ${people} "${a.name}".`;
    case 'detachTag':
      return `Remove the tag "${a.name}" from ${people}.`;
    case 'setVariable':
      return `Set the variable "${a.name}" of ${people} to "${a.value!.slice(0, 200)}".`;
  }
}

/** Where the person can confirm a plan this client cannot ask about. */
const orElsewhere = (extra: ToolExtra): string =>
  extra.views
    ? "Tell the person: the plan's card (shown with previewBulk's answer) has a Confirm button that carries it out."
    : 'Tell the person: they can run it from an MCP client that supports elicitation or MCP Apps views.';

/** Whether a money plan's total passes a cap (the plan is held to them as one move). */
function overCaps(ctx: McpContext, body: PlanBody): boolean {
  const policy = ctx.money?.policy;
  if (!policy || !hasCaps(policy) || body.total === undefined) return false;
  const caps = capsFor(policy, body.currency!);
  return (caps.perCall !== undefined && body.total > caps.perCall) || (caps.daily !== undefined && body.total > caps.daily);
}

/** The audit entry of a plan's confirmation (or refusal): the plan, how it was confirmed and by whom. */
function recordPlan(
  ctx: McpContext,
  plan: BulkPlan,
  extra: ToolExtra,
  status: number,
  code: string | null,
  how: Confirmation | null,
): void {
  const body = plan.body as unknown as PlanBody;
  const entry: AuditEntry = {
    at: new Date().toISOString(),
    owner_id: ctx.knownOwner ?? null,
    client: extra.caller?.client ?? null,
    session: extra.caller?.session ?? null,
    tool: RUN_BULK_TOOL_INFO.name,
    arguments: { plan_id: plan.id, action: body.action, selection: body.selection, count: body.count, total: body.total ?? null },
    contact_id: null,
    status,
    code,
    idempotency_key: null,
    replayed: false,
    confirmation: how,
  };
  try {
    ctx.audit?.append(entry);
  } catch (e) {
    logWithin(extra.signal, () => log.error({ err: e, tool: entry.tool }, 'audit line not written'));
  }
}

/**
 * The refusal of a plan that expired before any of its steps ran; undefined when it may go on. A
 * plan once started is carried out to its end, however long that takes: a new plan in its place
 * would act again on the contacts it already did.
 */
export function expiredUnstarted(plans: BulkPlans, plan: BulkPlan): ApiError | undefined {
  if (Date.parse(plan.expires_at) >= Date.now()) return undefined;
  const n = plans.counts(plan.id);
  // previewBulk records the contacts it skips as skipped steps: only more than those is a start.
  const acted = (n.done ?? 0) + (n.failed ?? 0) + (n.running ?? 0) + (n.unknown ?? 0) + (n.skipped ?? 0);
  if (acted > ((plan.body as unknown as PlanBody).skipped ?? 0)) return undefined;
  return fail.invalid('plan_id', `This plan expired at ${plan.expires_at} before it was started: make a new one with previewBulk.`);
}

/** The plan may go on (confirmed, or needing no confirmation), or the refusal, or the question to the person. */
async function confirmation(
  ctx: McpContext,
  plans: BulkPlans,
  plan: BulkPlan,
  extra: ToolExtra,
): Promise<{ confirmed?: Confirmation } | { refusal: ApiError } | { ask: InputRequiredResult }> {
  const body = plan.body as unknown as PlanBody;
  const refuse = (e: ApiError, how: Confirmation | null) => {
    recordPlan(ctx, plan, extra, 422, e.name, how);
    return { refusal: e };
  };
  const decided = (c: NonNullable<BulkPlan['confirmation']>) =>
    c.accepted
      ? { confirmed: { how: `${c.how} (bulk plan ${plan.id})`, by: c.by } }
      : {
          refusal: fail.coded(
            'confirmation_declined',
            'plan_id',
            `The person declined this plan (${c.how}). Nothing was done. This is their decision: do not call again unless they ask you to.`,
          ),
        };
  if (plan.confirmation) return decided(plan.confirmation);
  const expired = expiredUnstarted(plans, plan);
  if (expired) return refuse(expired, null);
  const reply = extra.elicit.reply(QUESTION_ID);
  if (reply) {
    const accepted = reply.action === 'accept' && reply.content[QUESTION_ID] === true;
    const how = accepted ? 'elicitation accepted' : reply.action === 'cancel' ? 'elicitation cancelled' : 'elicitation declined';
    // The person's first answer stands: an answer sent again, or another one, changes nothing.
    plans.confirm(plan.id, { accepted, how, by: `the person, in ${clientOf(extra)}` });
    const final = plans.get(plan.id)!.confirmation!;
    // An accepted plan is recorded as its run starts (runBulk's call).
    if (!final.accepted) recordPlan(ctx, plan, extra, 422, 'confirmation_declined', { how: final.how, by: final.by });
    return decided(final);
  }
  if (extra.elicit.canAsk) {
    recordPlan(ctx, plan, extra, 422, 'confirmation_required', {
      how: 'elicitation asked, no answer yet',
      by: `the person, in ${clientOf(extra)}`,
    });
    const question = `${planWords(body)}\nAn AI assistant asks to do it; nothing happens unless you confirm.`;
    return {
      ask: await extra.elicit.ask({
        id: QUESTION_ID,
        message: question,
        requestedSchema: {
          type: 'object',
          properties: { [QUESTION_ID]: { type: 'boolean', title: 'Yes, carry out the plan', default: false } },
          required: [QUESTION_ID],
        },
      }),
    };
  }
  const cannot = { how: 'not possible: the client cannot ask the person (no elicitation)', by: clientOf(extra) };
  if (body.action.type === 'sendMessage')
    return refuse(
      fail.coded(
        'confirmation_required',
        'plan_id',
        `${planWords(body)} A message plan needs the person's confirmation, and this client cannot ask them (no elicitation). Nothing was sent. ` +
          orElsewhere(extra),
      ),
      cannot,
    );
  if (overCaps(ctx, body)) {
    if (ctx.money!.policy.noConfirm) return { confirmed: { how: 'not asked (--no-confirm)', by: 'the server operator' } };
    return refuse(
      fail.coded(
        'confirmation_required',
        'plan_id',
        `${planWords(body)} That is over this server's money caps, and this client cannot ask the person to confirm (no elicitation). ` +
          `Nothing was moved. ${orElsewhere(extra)} Or the operator raises the caps (--max-amount, --max-daily). Do not retry the same call.`,
      ),
      cannot,
    );
  }
  return {};
}

/** A step's outcome: its new record, or a pause of the whole run (rate limited: the step is left to the next call). */
type StepOutcome = BulkStep | { pause: string };

/** The record of a step that ended with the API's error `body`. */
const failed = (contactId: number, note: Record<string, unknown>, status: number, body: Record<string, unknown>): BulkStep => ({
  contact_id: contactId,
  status: 'failed',
  note: { ...note, error: { status, ...body } },
});

/**
 * One money step: the account read (so the gate knows its holder, and the balance before is
 * recorded), the move under the step's own idempotency key, and, when an earlier run's move has
 * no known outcome, the balance read back first: moved (done), not moved (the key given back,
 * moved now), or neither (failed, left to a person).
 */
async function moneyStep(
  ctx: McpContext,
  plans: BulkPlans,
  plan: BulkPlan,
  step: BulkStep,
  extra: ToolExtra,
  confirmed?: Confirmation,
): Promise<StepOutcome> {
  const body = plan.body as unknown as PlanBody;
  const a = body.action;
  const id = step.contact_id;
  const key = `bulk ${plan.id} ${id}`;
  const read = async () => {
    const accounts = await accountsOf(ctx, id, extra.signal);
    return Array.isArray(accounts) ? { account: accounts.find((x) => x.currency === a.currency) } : accounts;
  };
  let now = await read();
  if ('error' in now) {
    const err = now.error as { status: number } & Record<string, unknown>;
    if (err.status === 429) return { pause: 'getContactAccounts was rate limited' };
    return failed(id, step.note, err.status, err);
  }
  let account = now.account;
  if (!account && a.type === 'deposit' && step.note.open === true) {
    const opened = answerOf(await methodCall(ctx, addContactAccount, { contact_id: id, currency: a.currency }, extra));
    if (opened.status === 429) return { pause: 'addContactAccount was rate limited' };
    // Opened meanwhile by someone else (currency_exists): read again.
    now = await read();
    account = 'account' in now ? now.account : undefined;
    if (!account) return failed(id, step.note, opened.status, opened.body);
  }
  if (!account) return { contact_id: id, status: 'skipped', note: { reason: `no ${a.currency} account` } };
  // The balance before this step's move, as first recorded: a resumed step keeps the first one.
  const before = typeof step.note.before === 'number' && step.status !== 'pending' ? step.note.before : account.amount;
  const note = { account_id: account.id, before };
  plans.mark(plan.id, { contact_id: id, status: 'running', note });
  const move = () =>
    methodCall(
      ctx,
      ACTIONS[a.type].method,
      { account_id: account.id, amount: a.amount, description: a.description, idempotency_key: key },
      extra,
      confirmed,
    ).then(answerOf);
  let res = await move();
  if (res.body.code === 'idempotency_conflict') {
    // An earlier run's move under this key has no known outcome: read the balance back.
    const back = await read();
    const amount = 'account' in back && back.account?.id === account.id ? back.account.amount : undefined;
    const moved = a.type === 'deposit' ? before + a.amount! : before - a.amount!;
    if (amount === moved) {
      ctx.keys.complete(key, { status: 200, body: { data: (back as { account: unknown }).account } });
      return { contact_id: id, status: 'done', note: { ...note, after: amount, verified: true } };
    }
    if (amount !== before)
      return failed(id, note, 409, {
        code: 'outcome_unknown',
        message: `An earlier move's outcome is unknown and the balance (${amount ?? 'unread'}) is neither before (${before}) nor after (${moved}) it: check the account's journal.`,
      });
    ctx.keys.release(key);
    res = await move();
  }
  if (res.status === 200)
    return { contact_id: id, status: 'done', note: { ...note, after: (res.body.data as { amount?: number })?.amount } };
  if (res.status === 429) return { pause: `${ACTIONS[a.type].method.name} was rate limited` };
  if (res.status >= 500 || res.body.code === 'outcome_unknown')
    return { contact_id: id, status: 'unknown', note: { ...note, error: { status: res.status, ...res.body } } };
  return failed(id, note, res.status, res.body);
}

/**
 * One step of tags, a variable or a message. A message whose step was under way when a run
 * stopped may have been sent: it is never sent again (failed, outcome unknown); the others
 * change to the same end however often they run, so they run again.
 */
async function plainStep(ctx: McpContext, plans: BulkPlans, plan: BulkPlan, step: BulkStep, extra: ToolExtra): Promise<StepOutcome> {
  const a = (plan.body as unknown as PlanBody).action;
  const id = step.contact_id;
  if (a.type === 'sendMessage' && step.status !== 'pending')
    return failed(id, step.note, 409, {
      code: 'outcome_unknown',
      message: 'The run stopped while this message was being sent: it may have reached the person, so it is not sent again.',
    });
  plans.mark(plan.id, { ...step, status: 'running' });
  const fields = Object.fromEntries(
    ACTIONS[a.type].fields.filter((f) => a[f as keyof typeof a] !== undefined).map((f) => [f, a[f as keyof typeof a]]),
  );
  const res = answerOf(await methodCall(ctx, ACTIONS[a.type].method, { contact_id: id, ...fields }, extra));
  if (res.status === 200) return { contact_id: id, status: 'done', note: step.note };
  if (res.status === 429) {
    plans.mark(plan.id, step); // not carried out: as it was
    return { pause: `${ACTIONS[a.type].method.name} was rate limited` };
  }
  if (res.status >= 500 || res.body.code === 'outcome_unknown')
    return { contact_id: id, status: 'unknown', note: { error: { status: res.status, ...res.body } } };
  return failed(id, step.note, res.status, res.body);
}

/** What runBulk answers: the plan's counts now. */
function progressOf(plans: BulkPlans, planId: string, warnings: string[]): CallToolResult {
  const n = plans.counts(planId);
  const data = {
    plan_id: planId,
    done: n.done ?? 0,
    failed: n.failed ?? 0,
    skipped: n.skipped ?? 0,
    remaining: (n.pending ?? 0) + (n.running ?? 0) + (n.unknown ?? 0),
    report: `${BULK_URI}${planId}`,
  };
  return toolResult({ status: 200, headers: {}, body: { data, ...(warnings.length ? { warnings } : {}) } });
}

export function runBulkTool(ctx: McpContext, plans: BulkPlans): ToolSpec {
  let input: JsonSchema | undefined;
  const left = (plan: BulkPlan) => LEFT.reduce((n, s) => n + (plans.counts(plan.id)[s] ?? 0), 0);

  /** The plan to carry out and how it was confirmed, or the call's answer now (a refusal, a question, or the plan's end). */
  async function open(
    args: Record<string, unknown>,
    extra: ToolExtra,
  ): Promise<{ plan: BulkPlan; confirmed?: Confirmation } | { answer: ToolOutcome }> {
    const checked = checkArguments(RUN_PARAMS, args);
    if ('error' in checked) return { answer: checked.error };
    const plan = plans.get(checked.params.plan_id);
    if (!plan) return { answer: refusal(fail.invalid('plan_id', 'No such plan of yours: previewBulk makes one.')) };
    if (left(plan) === 0) return { answer: progressOf(plans, plan.id, []) };
    const gate = await confirmation(ctx, plans, plan, extra);
    if ('refusal' in gate) return { answer: refusal(gate.refusal) };
    if ('ask' in gate) return { answer: gate.ask };
    return { plan, confirmed: gate.confirmed };
  }

  /** Carries the plan's steps out until they are all done, the call is cancelled, or `ctx.bulkCallMs` passed; the progress then. */
  async function carry(plan: BulkPlan, confirmed: Confirmation | undefined, extra: ToolExtra): Promise<CallToolResult> {
    const runner = randomUUID();
    if (!plans.hold(plan.id, runner, Date.now() + HOLD_MS, Date.now()))
      return progressOf(plans, plan.id, ['Another runBulk call is carrying out this plan now: call again later to see its progress.']);
    // The plan and how it was confirmed (or that it needed no confirmation), as the run starts.
    recordPlan(ctx, plan, extra, 200, null, confirmed ?? null);
    const warnings: string[] = [];
    // A step under way finishes (a write cut short would leave its outcome unknown): a cancel stops the run between steps.
    const stepExtra: ToolExtra = { ...extra, elicit: NO_QUESTIONS, signal: uncancellable(extra.signal) };
    const money = isMoneyAction((plan.body as unknown as PlanBody).action);
    const total = left(plan);
    const until = Date.now() + ctx.bulkCallMs;
    let finished = 0;
    // The hold is renewed every third of it while this run lives (a step may outlast it: a remote
    // API's pace, a rate limit's wait), so no other call takes over a step still under way, reads
    // its balance as not moved yet and moves the money again; a run that died stops renewing it.
    // A step checks the hold itself only when the last renewal is that old: one state write per
    // 5 s, not one per step. Once lost, the hold stays lost for this run.
    let heldAt = Date.now();
    let lost = false;
    const renew = (): boolean => {
      const now = Date.now();
      if (!lost && plans.hold(plan.id, runner, now + HOLD_MS, now)) {
        heldAt = now;
        return true;
      }
      lost = true;
      return false;
    };
    const beat = setInterval(() => {
      try {
        renew();
      } catch (e) {
        logWithin(extra.signal, () => log.error({ err: e, tool: RUN_BULK_TOOL_INFO.name }, 'bulk plan hold not renewed'));
      }
    }, HOLD_MS / 3);
    beat.unref();
    try {
      let after = 0;
      run: for (;;) {
        const batch = plans.steps(plan.id, { after, limit: BATCH, status: LEFT });
        if (batch.length === 0) break;
        for (const step of batch) {
          after = step.contact_id;
          if (extra.signal.aborted) {
            warnings.push('Cancelled: the steps left are not done. Call runBulk again to go on.');
            break run;
          }
          if (Date.now() > until) {
            warnings.push('Still going: call runBulk again with this plan_id to go on (no step is repeated).');
            break run;
          }
          if (lost || (Date.now() - heldAt >= HOLD_MS / 3 && !renew())) {
            warnings.push('Another runBulk call took this plan over (this one stalled): it goes on from here.');
            break run;
          }
          const out = money
            ? await moneyStep(ctx, plans, plan, step, stepExtra, confirmed)
            : await plainStep(ctx, plans, plan, step, stepExtra);
          if ('pause' in out) {
            warnings.push(`Paused: ${out.pause}. Call runBulk again in a minute to go on.`);
            break run;
          }
          plans.mark(plan.id, out);
          finished++;
          // Not awaited: a notification to a client that cancelled the call may never be taken (2026-07-28);
          // a turn of the event loop instead, so a cancellation that came in meanwhile is read.
          extra.progress(finished, total, `${finished} of ${total} steps`).catch(() => undefined);
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    } finally {
      clearInterval(beat);
      plans.letGo(plan.id, runner);
    }
    return progressOf(plans, plan.id, warnings);
  }

  return {
    name: RUN_BULK_TOOL_INFO.name,
    title: RUN_BULK_TOOL_INFO.title,
    description: "Carries out a previewBulk plan once the person confirms; each contact's step at most once. Stopped? Call again to go on.",
    get inputSchema() {
      return (input ??= inputSchemaOf(RUN_BULK_TOOL_INFO.name, () => toJsonSchema(shapeToZod(RUN_PARAMS))));
    },
    outputSchema: DATA_OUTPUT,
    annotations: { ...RUN_BULK_TOOL_INFO.annotations },
    async run(args, extra) {
      const o = await open(args, extra);
      return 'answer' in o ? o.answer : carry(o.plan, o.confirmed, extra);
    },
    task: {
      gate: async (args, extra) => {
        const o = await open(args, extra);
        return 'answer' in o ? o.answer : undefined;
      },
      // The whole plan, call after call, however long it takes (a remote API's pace): the person confirmed it in the gate.
      async work(args, extra) {
        let last = -1;
        let stalls = 0;
        for (;;) {
          const o = await open(args, { ...extra, elicit: NO_QUESTIONS });
          if ('answer' in o) return o.answer as CallToolResult;
          const r = await carry(o.plan, o.confirmed, extra);
          const d = (r.structuredContent as { data: { done: number; failed: number; skipped: number; remaining: number } }).data;
          if (d.remaining === 0 || extra.signal.aborted) return r;
          const moved = d.done + d.failed + d.skipped;
          // Paused (rate limited) or held by another call: wait, and give up after about ten minutes of no step.
          if (moved === last) {
            // Steps left that will not be done now: a failed task (its result says how far it got; runBulk goes on).
            if (++stalls > TASK_STALLS) return { ...r, isError: true };
            await sleep(TASK_PAUSE_MS, extra.signal);
          } else stalls = 0;
          last = moved;
        }
      },
    },
  };
}

/** A task's wait before it tries a paused plan again, and how many such waits in a row end it. */
const TASK_PAUSE_MS = 20_000;
const TASK_STALLS = 30;

/** `ms` of waiting, cut short by `signal`. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Whether a URI names a bulk plan's outcomes. */
export const isBulkUri = (uri: string): boolean => uri.startsWith(BULK_URI);

/** `workspace://bulk/{plan_id}{?after,limit}`: the plan and a page of its steps by contact id, within the result budget. */
export function readBulk(ctx: McpContext, uri: string): ReadResourceResult {
  const url = new URL(uri);
  const id = decodeURIComponent(url.pathname.replace(/^\//, ''));
  const plan = ctx.plans?.get(id);
  if (!plan) throw new ResourceNotFoundError(uri);
  const int = (name: string, min: number, max: number, dflt: number) => {
    const v = url.searchParams.get(name);
    if (v === null) return dflt;
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${name} must be a whole number from ${min} to ${max}: ${uri}`);
    return Number(v);
  };
  const after = int('after', 0, Number.MAX_SAFE_INTEGER, 0);
  const limit = int('limit', 1, 1000, 100);
  const steps = ctx.plans!.steps(id, { after, limit: limit + 1 });
  const pageUri = (from: number) => `${BULK_URI}${encodeURIComponent(id)}?after=${from}&limit=${limit}`;
  const render = (shown: BulkStep[], more: boolean): ReadResourceResult => {
    const body = {
      plan: { id: plan.id, ...plan.body, confirmation: plan.confirmation, created_at: plan.created_at, expires_at: plan.expires_at },
      counts: ctx.plans!.counts(id),
      data: shown.map((s) => ({ contact_id: s.contact_id, status: s.status, ...s.note })),
      next: more && shown.length > 0 ? pageUri(shown[shown.length - 1]!.contact_id) : null,
    };
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(body) }] };
  };
  const page = steps.slice(0, limit);
  const more = steps.length > limit;
  const room = ctx.maxResultChars - PROTOCOL_ROOM;
  const kept = longestPrefix(page, (shown) => resultSize(render(shown, true)) <= room);
  return render(page.slice(0, Math.max(kept, 1)), more || kept < page.length);
}
