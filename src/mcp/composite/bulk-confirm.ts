/**
 * Asking the person about a runBulk plan: the whole plan confirmed once (elicitation, either
 * protocol era; money in major units, its total, how many people), or refused when it needs a
 * confirmation this client cannot ask for (a message plan, a money plan over the caps), or when
 * it expired before it was started; each decision in the audit trail.
 */
import type { InputRequiredResult } from '@modelcontextprotocol/server';
import { errorCodeOf } from '../../api/backend.js';
import { amountNote } from '../../api/currency.js';
import { fail, type ApiError } from '../../api/errors.js';
import type { McpContext } from '../context.js';
import { appendAudit, auditEntryOf } from '../money/audit.js';
import { capsFor, hasCaps } from '../money/caps.js';
import type { BulkPlan, BulkPlans } from '../state.js';
import type { Confirmation, ToolExtra } from '../tool-spec.js';
import { clientOf } from '../tools/money-gate.js';
import type { PlanBody } from './bulk-plan.js';
import { planWords } from '../../api/bulk-actions.js';
import { RUN_BULK_TOOL_INFO } from './identities.js';

/** The one question runBulk asks. */
const QUESTION_ID = 'confirm';

/** What the plan does, in the person's words: the question's first line. */
const wordsOf = (body: PlanBody): string => planWords(body.action, body.count, { money: amountNote, whole: true, total: body.total });

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
export async function recordPlan(
  ctx: McpContext,
  plan: BulkPlan,
  extra: ToolExtra,
  status: number,
  code: string | null,
  how: Confirmation | null,
): Promise<void> {
  const body = plan.body as unknown as PlanBody;
  const args = { plan_id: plan.id, action: body.action, selection: body.selection, count: body.count, total: body.total ?? null };
  const entry = auditEntryOf({ owner: ctx.knownOwner, caller: extra.caller }, RUN_BULK_TOOL_INFO.name, args);
  await appendAudit(ctx.audit, { ...entry, status, code, confirmation: how }, extra.signal);
}

/**
 * The refusal of a plan that expired before any of its steps ran; undefined when it may go on. A
 * plan once started is carried out to its end, however long that takes: a new plan in its place
 * would act again on the contacts it already did.
 */
export async function expiredUnstarted(plans: BulkPlans, plan: BulkPlan): Promise<ApiError | undefined> {
  if (Date.parse(plan.expires_at) >= Date.now()) return undefined;
  const n = await plans.counts(plan.id);
  // previewBulk records the contacts it skips as skipped steps: only more than those is a start.
  const acted = (n.done ?? 0) + (n.failed ?? 0) + (n.running ?? 0) + (n.unknown ?? 0) + (n.skipped ?? 0);
  if (acted > ((plan.body as unknown as PlanBody).skipped ?? 0)) return undefined;
  return fail.invalid('plan_id', `This plan expired at ${plan.expires_at} before it was started: make a new one with previewBulk.`);
}

/** The plan may go on (confirmed, or needing no confirmation), or the refusal, or the question to the person. */
export async function confirmation(
  ctx: McpContext,
  plans: BulkPlans,
  plan: BulkPlan,
  extra: ToolExtra,
): Promise<{ confirmed?: Confirmation } | { refusal: ApiError } | { ask: InputRequiredResult }> {
  const body = plan.body as unknown as PlanBody;
  const refuse = async (e: ApiError, how: Confirmation | null) => {
    // The code as the API's answer carries it (an ApiError's `name` is Error's own).
    await recordPlan(ctx, plan, extra, 422, errorCodeOf(e.response()), how);
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
  const expired = await expiredUnstarted(plans, plan);
  if (expired) return refuse(expired, null);
  const reply = extra.elicit.reply(QUESTION_ID);
  if (reply) {
    const accepted = reply.action === 'accept' && reply.content[QUESTION_ID] === true;
    const how = accepted ? 'elicitation accepted' : reply.action === 'cancel' ? 'elicitation cancelled' : 'elicitation declined';
    // The person's first answer stands: an answer sent again, or another one, changes nothing.
    await plans.confirm(plan.id, { accepted, how, by: `the person, in ${clientOf(extra)}` });
    const final = (await plans.get(plan.id))!.confirmation!;
    // An accepted plan is recorded as its run starts (runBulk's call).
    if (!final.accepted) await recordPlan(ctx, plan, extra, 422, 'confirmation_declined', { how: final.how, by: final.by });
    return decided(final);
  }
  if (extra.elicit.canAsk) {
    await recordPlan(ctx, plan, extra, 422, 'confirmation_required', {
      how: 'elicitation asked, no answer yet',
      by: `the person, in ${clientOf(extra)}`,
    });
    const question = `${wordsOf(body)}\nAn AI assistant asks to do it; nothing happens unless you confirm.`;
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
        `${wordsOf(body)} A message plan needs the person's confirmation, and this client cannot ask them (no elicitation). Nothing was sent. ` +
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
        `${wordsOf(body)} That is over this server's money caps, and this client cannot ask the person to confirm (no elicitation). ` +
          `Nothing was moved. ${orElsewhere(extra)} Or the operator raises the caps (--max-amount, --max-daily). Do not retry the same call.`,
      ),
      cannot,
    );
  }
  return {};
}
