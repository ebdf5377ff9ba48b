/**
 * runBulk, the composite tool that carries out a previewBulk plan (bulk-plan.ts): the person
 * confirms the whole plan once (bulk-confirm.ts), then each contact's step (bulk-steps.ts) runs
 * through the API method's own tool path, recorded before and after it runs, so a second call
 * goes on where a crash, a kill, a lost connection or a cancel stopped it and never repeats a
 * step. Here the run: its hold on the plan, its steps in batches until done, cancelled, out of
 * the call's time or paused, and the task that goes on call after call. The plan's outcomes are
 * the resource of bulk-resource.ts.
 */
import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { fail } from '../../api/errors.js';
import { r } from '../../api/rules.js';
import { log } from '../../common/log.js';
import { countBulkStep } from '../../common/telemetry.js';
import { sleep } from '../../common/retry.js';
import type { McpContext } from '../context.js';
import { logWithin, uncancellable } from '../logging.js';
import type { Elicitor } from '../money/elicit.js';
import { refusal, toolResult } from '../result/results.js';
import type { BulkPlan, BulkPlans, BulkStepStatus } from '../state.js';
import type { Confirmation, ToolExtra, ToolOutcome, ToolSpec } from '../tool-spec.js';
import { checkArguments } from '../tools/arguments.js';
import { compositeTool } from './composite-tool.js';
import { confirmation, recordPlan } from './bulk-confirm.js';
import { DATA_OUTPUT, isMoneyAction, outOfReach, type PlanBody } from './bulk-plan.js';
import { bulkUri } from './bulk-resource.js';
import { moneyStep, plainStep } from './bulk-steps.js';
import { RUN_BULK_TOOL_INFO } from './identities.js';

export { expiredUnstarted } from './bulk-confirm.js';
export { BULK_TEMPLATE, isBulkUri, readBulk } from './bulk-resource.js';

/** How long a run holds its plan without a step (another call may take over a run that died then). */
const HOLD_MS = 15_000;
/** Steps read from the state at a time. */
const BATCH = 100;
/** The steps a run still has to do: `running` and `unknown` ones are read back first. */
const LEFT: readonly BulkStepStatus[] = ['pending', 'running', 'unknown'];

const RUN_PARAMS = { plan_id: r.string().required() };

/** A step never asks the person anything: the plan was confirmed (or needed no confirmation) as a whole. */
const NO_QUESTIONS: Elicitor = {
  canAsk: false,
  reply: () => undefined,
  state: () => undefined,
  ask: () => Promise.reject(new Error('a bulk step asks nothing')),
};

/** What runBulk answers: the plan's counts now. */
async function progressOf(plans: BulkPlans, planId: string, warnings: string[]): Promise<CallToolResult> {
  const n = await plans.counts(planId);
  const data = {
    plan_id: planId,
    done: n.done ?? 0,
    failed: n.failed ?? 0,
    skipped: n.skipped ?? 0,
    remaining: (n.pending ?? 0) + (n.running ?? 0) + (n.unknown ?? 0),
    report: bulkUri(planId),
  };
  return toolResult({ status: 200, headers: {}, body: { data, ...(warnings.length ? { warnings } : {}) } });
}

export function runBulkTool(ctx: McpContext, plans: BulkPlans): ToolSpec {
  const left = async (plan: BulkPlan) => {
    const counts = await plans.counts(plan.id);
    return LEFT.reduce((n, s) => n + (counts[s] ?? 0), 0);
  };

  /** The plan to carry out and how it was confirmed, or the call's answer now (a refusal, a question, or the plan's end). */
  async function open(
    args: Record<string, unknown>,
    extra: ToolExtra,
  ): Promise<{ plan: BulkPlan; confirmed?: Confirmation } | { answer: ToolOutcome }> {
    const checked = checkArguments(RUN_PARAMS, args);
    if ('error' in checked) return { answer: checked.error };
    const plan = await plans.get(checked.params.plan_id);
    if (!plan) return { answer: refusal(fail.invalid('plan_id', 'No such plan of yours: previewBulk makes one.')) };
    const body = plan.body as unknown as PlanBody;
    const refused = outOfReach(body.action, body.open_missing_accounts, extra, 'runBulk');
    if (refused) return { answer: refused };
    if ((await left(plan)) === 0) return { answer: await progressOf(plans, plan.id, []) };
    const gate = await confirmation(ctx, plans, plan, extra);
    if ('refusal' in gate) return { answer: refusal(gate.refusal) };
    if ('ask' in gate) return { answer: gate.ask };
    return { plan, confirmed: gate.confirmed };
  }

  /** Carries the plan's steps out until they are all done, the call is cancelled, or `ctx.bulkCallMs` passed; the progress then. */
  async function carry(plan: BulkPlan, confirmed: Confirmation | undefined, extra: ToolExtra): Promise<CallToolResult> {
    const runner = randomUUID();
    if (!(await plans.hold(plan.id, runner, Date.now() + HOLD_MS, Date.now())))
      return progressOf(plans, plan.id, ['Another runBulk call is carrying out this plan now: call again later to see its progress.']);
    // The plan and how it was confirmed (or that it needed no confirmation), as the run starts.
    await recordPlan(ctx, plan, extra, 200, null, confirmed ?? null);
    const warnings: string[] = [];
    // A step under way finishes (a write cut short would leave its outcome unknown): a cancel stops the run between steps.
    const stepExtra: ToolExtra = { ...extra, elicit: NO_QUESTIONS, signal: uncancellable(extra.signal) };
    const money = isMoneyAction((plan.body as unknown as PlanBody).action);
    const total = await left(plan);
    const until = Date.now() + ctx.bulkCallMs;
    let finished = 0;
    // The hold is renewed every third of it while this run lives (a step may outlast it: a remote
    // API's pace, a rate limit's wait), so no other call takes over a step still under way, reads
    // its balance as not moved yet and moves the money again; a run that died stops renewing it.
    // A step checks the hold itself only when the last renewal is that old: one state write per
    // 5 s, not one per step. Once lost, the hold stays lost for this run.
    let heldAt = Date.now();
    let lost = false;
    const renew = async (): Promise<boolean> => {
      const now = Date.now();
      if (!lost && (await plans.hold(plan.id, runner, now + HOLD_MS, now))) {
        heldAt = now;
        return true;
      }
      lost = true;
      return false;
    };
    // The last renewal the timer began: waited for before the hold is let go, so a renewal still
    // on its way (PostgreSQL: on another service thread) never takes the plan again after it.
    let beating: Promise<unknown> = Promise.resolve();
    const beat = setInterval(() => {
      beating = renew().catch((e: unknown) =>
        logWithin(extra.signal, () => log.error({ err: e, tool: RUN_BULK_TOOL_INFO.name }, 'bulk plan hold not renewed')),
      );
    }, HOLD_MS / 3);
    beat.unref();
    // The server's drain waits for this run until it is out of its step.
    const release = ctx.draining.hold();
    try {
      let after = 0;
      run: for (;;) {
        const batch = await plans.steps(plan.id, { after, limit: BATCH, status: LEFT });
        if (batch.length === 0) break;
        for (const step of batch) {
          after = step.contact_id;
          if (extra.signal.aborted) {
            warnings.push('Cancelled: the steps left are not done. Call runBulk again to go on.');
            break run;
          }
          if (ctx.draining.signal.aborted) {
            warnings.push(
              'The server is shutting down: call runBulk again with this plan_id to go on (on any instance; no step is repeated).',
            );
            break run;
          }
          if (Date.now() > until) {
            warnings.push('Still going: call runBulk again with this plan_id to go on (no step is repeated).');
            break run;
          }
          if (lost || (Date.now() - heldAt >= HOLD_MS / 3 && !(await renew()))) {
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
          await plans.mark(plan.id, out);
          countBulkStep(out.status);
          finished++;
          // Not awaited: a notification to a client that cancelled the call may never be taken (2026-07-28);
          // a turn of the event loop instead, so a cancellation that came in meanwhile is read.
          extra.progress(finished, total, `${finished} of ${total} steps`).catch(() => undefined);
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    } finally {
      clearInterval(beat);
      try {
        await beating;
        await plans.letGo(plan.id, runner);
      } finally {
        release();
      }
    }
    return progressOf(plans, plan.id, warnings);
  }

  return compositeTool({
    info: RUN_BULK_TOOL_INFO,
    description: "Carries out a previewBulk plan once the person confirms; each contact's step at most once. Stopped? Call again to go on.",
    params: RUN_PARAMS,
    // Those of the actions a plan may carry; each plan's own is checked when it runs.
    scopes: ['workspace:write', 'workspace:money', 'workspace:message'],
    outputSchema: DATA_OUTPUT,
    async run(_params, extra, args) {
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
          if (d.remaining === 0 || extra.signal.aborted || ctx.draining.signal.aborted) return r;
          const moved = d.done + d.failed + d.skipped;
          // Paused (rate limited) or held by another call: wait, and give up after about ten minutes of no step.
          if (moved === last) {
            // Steps left that will not be done now: a failed task (its result says how far it got; runBulk goes on).
            if (++stalls > TASK_STALLS) return { ...r, isError: true };
            // Cut short by a cancel: the next round answers the progress then.
            await sleep(TASK_PAUSE_MS, extra.signal).catch(() => undefined);
          } else stalls = 0;
          last = moved;
        }
      },
    },
  });
}

/** A task's wait before it tries a paused plan again, and how many such waits in a row end it. */
const TASK_PAUSE_MS = 20_000;
const TASK_STALLS = 30;
