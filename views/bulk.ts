/**
 * The Bulk plan view: a previewBulk plan in the person's words (what it does, to how many, the
 * total in major units, a few of the people, who is skipped and why) with one Confirm. Confirm
 * calls confirmBulkPlan, the tool only this view may call: the click is the person's one
 * confirmation of the whole plan, and the plan runs as runBulk runs it, each contact's step at
 * most once, however often it is clicked. A run that stops at a call's time limit goes on by
 * itself while steps keep finishing.
 */
import { planWords, type BulkAction as Action } from '../src/api/bulk-actions.js';
import type { Bridge, ToolResult } from './bridge.js';
import { bodyOf, errorOf, h, money, show, startView } from './common.js';

interface Plan {
  plan_id: string;
  /** The plan's action as the server checked it (the call's arguments only as a fall-back). */
  action?: Action;
  count: number;
  total?: number;
  currency?: string;
  sample?: Array<{ id: number; name?: string }>;
  skipped?: Array<{ contact_id: number; reason: string }>;
  skipped_count?: number;
  expires_at?: string;
  unchecked?: number;
}
interface Progress {
  done: number;
  failed: number;
  skipped: number;
  remaining: number;
}

/** Calls of confirmBulkPlan one click makes at most (each up to the server's call limit) before it asks for another. */
const ROUNDS = 20;

let bridge: Bridge;
let action: Action | undefined;
let plan: Plan | undefined;

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** What the plan does, as the person reads it: the headline of runBulk's own words. */
function words(a: Action | undefined, count: number): string {
  return a ? planWords(a, count, { money, whole: false }) : `Act on ${plural(count, 'contact', 'contacts')}`;
}

function outcomeLine(p: Progress): string {
  return `Done ${p.done}, failed ${p.failed}, skipped ${p.skipped}, left ${p.remaining}.`;
}

async function commit(button: HTMLButtonElement, outcome: HTMLElement): Promise<void> {
  button.disabled = true;
  let last: Progress | undefined;
  for (let round = 0; round < ROUNDS; round++) {
    let result: ToolResult;
    try {
      result = await bridge.callTool('confirmBulkPlan', { plan_id: plan!.plan_id });
    } catch (e) {
      result = { isError: true, content: [{ type: 'text', text: JSON.stringify({ message: (e as Error).message }) }] };
    }
    const err = errorOf(result);
    if (err) {
      outcome.className = 'error';
      outcome.textContent = err;
      button.disabled = false;
      return;
    }
    const body = bodyOf(result);
    const now = body.data as Progress;
    outcome.className = now.remaining ? 'muted' : now.failed ? 'error' : 'ok';
    outcome.textContent = outcomeLine(now) + (now.remaining && body.warnings?.[0] ? ` ${body.warnings[0]}` : '');
    // Stop when it is all done, or a call moved nothing on (paused, or another call runs it).
    const stalled = last && now.done + now.failed + now.skipped === last.done + last.failed + last.skipped;
    last = now;
    if (!now.remaining || stalled) break;
  }
  if (last === undefined || last.remaining > 0) {
    // Left to do (paused, or another call runs it): clicking again goes on, and repeats no step.
    button.disabled = false;
    return;
  }
  button.textContent = 'Carried out';
}

function render(): void {
  if (!plan) return;
  const p = plan;
  show('title', 'Bulk plan');
  show(
    'status',
    `Plan ${p.plan_id}${p.expires_at ? ` · valid until ${p.expires_at.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC')}` : ''}`,
  );
  const skipped = p.skipped_count ?? p.skipped?.length ?? 0;
  const outcome = h('p', { id: 'outcome', class: 'muted' }, 'Nothing happens unless you confirm.');
  const confirm = h('button', { class: 'btn primary', id: 'confirm', type: 'button' }, 'Confirm');
  confirm.addEventListener('click', () => void commit(confirm, outcome));
  const names = (p.sample ?? []).map((c) => c.name || `contact ${c.id}`);
  show(
    'content',
    h(
      'div',
      { class: 'card confirm', id: 'plan-card', role: 'group', 'aria-label': 'The plan' },
      h('p', { style: 'margin:0 0 6px' }, h('strong', { id: 'what' }, words(action, p.count))),
      p.total !== undefined && p.currency ? h('div', { class: 'big', id: 'total' }, `Total: ${money(p.total, p.currency)}`) : null,
      action?.description ? h('div', { class: 'muted' }, `“${action.description}”`) : null,
      action?.type === 'sendMessage' && action.text ? h('blockquote', { id: 'message' }, action.text) : null,
      action?.type === 'sendMessage' ? h('div', { class: 'muted' }, 'A message cannot be taken back.') : null,
      names.length
        ? h('div', { class: 'muted', id: 'sample' }, `Among them: ${names.join(', ')}${p.count > names.length ? ', …' : ''}`)
        : null,
      skipped
        ? h(
            'div',
            { class: 'muted', id: 'skipped' },
            `Skipped: ${skipped}`,
            p.skipped?.length
              ? ` (${p.skipped.map((s) => `contact ${s.contact_id}: ${s.reason}`).join('; ')}${skipped > p.skipped.length ? '; …' : ''})`
              : '',
          )
        : null,
      p.unchecked ? h('div', { class: 'muted' }, `${p.unchecked} not checked yet: each is checked as its step runs.`) : null,
      !action
        ? h('p', { class: 'error' }, 'This host did not say what the plan does: confirm it where you are asked instead.')
        : p.count
          ? h('div', { class: 'bar' }, confirm)
          : h('p', { class: 'muted' }, 'Nobody to act on: nothing to confirm.'),
    ),
    p.count ? outcome : null,
  );
}

bridge = startView('workspace-bulk', (b) => {
  b.on('ui/notifications/tool-input', (p) => {
    const a = p.arguments?.action;
    if (a && typeof a === 'object') action = a as Action;
  });
  b.on('ui/notifications/tool-result', (result: ToolResult) => {
    const err = errorOf(result);
    if (err) {
      show('status', h('span', { class: 'error' }, err));
      return;
    }
    plan = bodyOf(result).data as Plan;
    action = plan.action ?? action;
    render();
  });
});
