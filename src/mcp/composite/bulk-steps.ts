/**
 * One contact's step of a runBulk plan, through the API method's own tool path (its checks, the
 * money gate, the audit trail) and on the API's answers: a money step (its account read, its
 * move under the step's own idempotency key, a move whose outcome is unknown read back before
 * it is tried again), or a plain one (tags, a variable, a message).
 */
import { isInputRequiredResult } from '@modelcontextprotocol/server';
import { addContactAccount } from '../../api/contact-accounts.js';
import type { MethodDef } from '../../api/define.js';
import type { McpContext } from '../context.js';
import { isOutcomeUnknown, type Answer } from '../money/idempotency.js';
import type { BulkPlan, BulkPlans, BulkStep } from '../state.js';
import type { Confirmation, ToolExtra } from '../tool-spec.js';
import { methodCall } from '../tools/method-tool.js';
import { accountsOf, ACTIONS, type PlanBody } from './bulk-plan.js';

/** A step's outcome: its new record, or a pause of the whole run (rate limited: the step is left to the next call). */
export type StepOutcome = BulkStep | { pause: string };

/** The idempotency key of a money step: the plan's and the contact's, the same in every run and process. */
const stepKey = (planId: string, contactId: number): string => `bulk ${planId} ${contactId}`;

/** A method's answer to a step; a question to the person (a step asks none) as the refusal it stands for. */
async function call(ctx: McpContext, def: MethodDef, args: Record<string, unknown>, extra: ToolExtra, confirmed?: Confirmation) {
  const res = await methodCall(ctx, def, args, extra, confirmed);
  const answer: Answer = isInputRequiredResult(res) ? { status: 422, headers: {}, body: { code: 'confirmation_required' } } : res;
  return { ...answer, body: (answer.body ?? {}) as Record<string, unknown> };
}

/** An answer's error as a step's note keeps it: the API's status and body, and the server's warnings on it. */
const errorOf = (res: Answer): Record<string, unknown> => ({
  status: res.status,
  ...(res.body as Record<string, unknown>),
  ...(res.warnings?.length ? { warnings: res.warnings } : {}),
});

/** The record of a step that ended with the API's error. */
const failed = (contactId: number, note: Record<string, unknown>, error: Record<string, unknown>): BulkStep => ({
  contact_id: contactId,
  status: 'failed',
  note: { ...note, error },
});

/** A move whose outcome is unknown: the message of its failed step. */
const unknownMove = (message: string) => ({ status: 409, code: 'outcome_unknown', message });

/**
 * One money step: the account read (so the gate knows its holder, and the balance before is
 * recorded), the move under the step's own idempotency key, and, when an earlier run's move has
 * no known outcome, the balance read back first: moved (done), not moved (the key given back,
 * moved now), or neither (failed, left to a person).
 */
export async function moneyStep(
  ctx: McpContext,
  plans: BulkPlans,
  plan: BulkPlan,
  step: BulkStep,
  extra: ToolExtra,
  confirmed?: Confirmation,
): Promise<StepOutcome> {
  const a = (plan.body as unknown as PlanBody).action;
  const id = step.contact_id;
  const key = stepKey(plan.id, id);
  const read = async () => {
    const accounts = await accountsOf(ctx, id, extra.signal);
    return Array.isArray(accounts) ? { account: accounts.find((x) => x.currency === a.currency) } : accounts;
  };
  let now = await read();
  if ('error' in now) {
    const err = now.error as { status: number } & Record<string, unknown>;
    if (err.status === 429) return { pause: 'getContactAccounts was rate limited' };
    return failed(id, step.note, err);
  }
  let account = now.account;
  if (!account && a.type === 'deposit' && step.note.open === true) {
    const opened = await call(ctx, addContactAccount, { contact_id: id, currency: a.currency }, extra);
    if (opened.status === 429) return { pause: 'addContactAccount was rate limited' };
    // Opened meanwhile by someone else (currency_exists): read again.
    now = await read();
    account = 'account' in now ? now.account : undefined;
    if (!account) return failed(id, step.note, errorOf(opened));
  }
  if (!account) return { contact_id: id, status: 'skipped', note: { reason: `no ${a.currency} account` } };
  // The balance before this step's move, as first recorded: a resumed step keeps the first one.
  const before = typeof step.note.before === 'number' && step.status !== 'pending' ? step.note.before : account.amount;
  const note = { account_id: account.id, before };
  await plans.mark(plan.id, { contact_id: id, status: 'running', note });
  const { method } = ACTIONS[a.type];
  const move = () =>
    call(ctx, method, { account_id: account.id, amount: a.amount, description: a.description, idempotency_key: key }, extra, confirmed);
  let res = await move();
  if (res.body.code === 'idempotency_conflict') {
    // An earlier run's move under this key has no known outcome: read the balance back.
    const back = await read();
    const amount = 'account' in back && back.account?.id === account.id ? back.account.amount : undefined;
    const moved = a.type === 'deposit' ? before + a.amount! : before - a.amount!;
    if (amount === moved) {
      await ctx.keys.complete(key, { status: 200, body: { data: (back as { account: unknown }).account } });
      return { contact_id: id, status: 'done', note: { ...note, after: amount, verified: true } };
    }
    if (amount !== before)
      return failed(
        id,
        note,
        unknownMove(
          `An earlier move's outcome is unknown and the balance (${amount ?? 'unread'}) is neither before (${before}) nor after (${moved}) it: check the account's journal.`,
        ),
      );
    await ctx.keys.release(key);
    res = await move();
  }
  if (res.status === 200)
    return { contact_id: id, status: 'done', note: { ...note, after: (res.body.data as { amount?: number })?.amount } };
  if (res.status === 429) return { pause: `${method.name} was rate limited` };
  if (isOutcomeUnknown(res)) return { contact_id: id, status: 'unknown', note: { ...note, error: errorOf(res) } };
  return failed(id, note, errorOf(res));
}

/**
 * One step of tags, a variable or a message. A message whose step was under way when a run
 * stopped may have been sent: it is never sent again (failed, outcome unknown); the others
 * change to the same end however often they run, so they run again.
 */
export async function plainStep(ctx: McpContext, plans: BulkPlans, plan: BulkPlan, step: BulkStep, extra: ToolExtra): Promise<StepOutcome> {
  const a = (plan.body as unknown as PlanBody).action;
  const id = step.contact_id;
  if (a.type === 'sendMessage' && step.status !== 'pending')
    return failed(
      id,
      step.note,
      unknownMove('The run stopped while this message was being sent: it may have reached the person, so it is not sent again.'),
    );
  await plans.mark(plan.id, { ...step, status: 'running' });
  const { method, fields } = ACTIONS[a.type];
  const given = Object.fromEntries(fields.filter((f) => a[f as keyof typeof a] !== undefined).map((f) => [f, a[f as keyof typeof a]]));
  const res = await call(ctx, method, { contact_id: id, ...given }, extra);
  if (res.status === 200) return { contact_id: id, status: 'done', note: step.note };
  if (res.status === 429) {
    await plans.mark(plan.id, step); // not carried out: as it was
    return { pause: `${method.name} was rate limited` };
  }
  if (isOutcomeUnknown(res)) return { contact_id: id, status: 'unknown', note: { error: errorOf(res) } };
  return failed(id, step.note, errorOf(res));
}
