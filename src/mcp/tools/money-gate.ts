/**
 * The gate of a money tool's call (fails closed): its account_id and amount read as the API
 * reads them, the caps' decision (under them: moves; over them: the person is asked, or the
 * call is refused), and the note beside an insufficient_funds answer.
 */
import { randomUUID } from 'node:crypto';
import type { InputRequiredResult } from '@modelcontextprotocol/server';
import type { AuditEntry } from '../../api/backend.js';
import { amountNote } from '../../api/currency.js';
import type { MethodDef, MoneyMethod } from '../../api/define.js';
import { ApiError, fail } from '../../api/errors.js';
import { validate, type Shape } from '../../api/rules.js';
import type { McpContext } from '../context.js';
import type { AccountView } from '../money/accounts.js';
import { capsFor, confirmQuestion, declined, hasCaps, overCapRefusal, unknownAccount } from '../money/caps.js';
import type { Elicitor } from '../money/elicit.js';
import type { Caps } from '../state.js';
import type { Confirmation, ToolExtra } from '../tool-spec.js';
import { countRefusal } from '../../common/telemetry.js';

/**
 * Beside an insufficient_funds answer: the balance now and the largest debit that would
 * succeed, so the model can ask the person instead of retrying blindly.
 */
export async function fundsNote(ctx: McpContext, params: Record<string, unknown>, signal: AbortSignal): Promise<string> {
  const id = params.account_id;
  const account = typeof id === 'number' ? await ctx.account(id, signal) : undefined;
  if (!account) return `Nothing was debited. Read the balance with getContactAccounts and ask the person before trying a smaller amount.`;
  return (
    `Nothing was debited. The balance of account ${account.id} is ${amountNote(account.amount, account.currency)} ` +
    `(${account.amount} in minor units): the largest debit that would succeed now is amount=${account.amount}. ` +
    'Ask the person before trying again.'
  );
}

/** The question a money call over a cap asks, among the tool's questions. */
const QUESTION_ID = 'confirm';

/** What a money call's gate decided: go ahead (with a reservation in the window), refuse, or ask the person. */
export type Gate = { reservation?: number } | { refusal: ApiError } | { ask: InputRequiredResult };

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
export async function moneyGate(
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
  if (typeof id !== 'number' || typeof amount !== 'number')
    return { refusal: fail.invalid('amount', 'The amount field must be an integer.') };
  const known = await ctx.account(id, extra.signal);
  if (!known) return { refusal: unknownAccount(id) };
  const caps = capsFor(money.policy, known.currency);
  // What the person is told names the contact: looked up only when they are to be told something.
  const named = async (): Promise<AccountView> => ({ ...known, contactName: await ctx.contactName(known.contactId, extra.signal) });
  const confirm = async (how: Confirmation): Promise<Gate> => {
    if (audit) audit.confirmation = how;
    const forced = await money.window.reserve(id, amount, caps, true);
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
    return { refusal: declined(def.money, await named(), amount, reply.action === 'cancel') };
  }
  const first = await money.window.reserve(id, amount, caps, false);
  if (first.ok) return { reservation: first.id };
  if (money.policy.noConfirm) return confirm({ how: 'not asked (--no-confirm)', by: 'the server operator' });
  // A debit the balance cannot cover is not worth the person's "yes": the API's refusal now.
  if (def.money === 'debit' && amount > known.amount)
    return { refusal: fail.coded('insufficient_funds', 'account_id', 'Insufficient funds: the balance is less than the amount.') };
  if (extra.elicit.canAsk) {
    if (audit) audit.confirmation = { how: 'elicitation asked, no answer yet', by: answeredBy(extra) };
    return { ask: await askToConfirm(def, await named(), amount, caps, first, extra.elicit) };
  }
  if (audit) audit.confirmation = { how: 'not possible: the client cannot ask the person (no elicitation)', by: clientOf(extra) };
  countRefusal('cap');
  return { refusal: overCapRefusal(def.money, known, amount, caps, first.over, first.used) };
}

/** The form question of a money call over a cap; sealed with it, a nonce that names this confirmation. */
function askToConfirm(
  def: MoneyMethod,
  account: AccountView,
  amount: number,
  caps: Caps,
  over: { over: 'amount' | 'daily'; used: number },
  elicit: Elicitor,
): Promise<InputRequiredResult> {
  return elicit.ask(
    {
      id: QUESTION_ID,
      message: confirmQuestion(def.money, account, amount, caps, over.over, over.used),
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
 * With caps on (or a move confirmed elsewhere, which skips them), a money call's account_id and
 * amount as the API reads them (strings trimmed, "20000" is 20000): the gate checks and the API
 * gets the same numbers. An account_id or amount the API would refuse is refused here, in its
 * words, so no value the gate cannot read ever gets past it.
 */
export function moneyParams(def: MethodDef, ctx: McpContext, params: Record<string, unknown>, extra: ToolExtra): ApiError | undefined {
  if (!def.money || !(extra.confirmed || (ctx.money && hasCaps(ctx.money.policy)))) return undefined;
  const shape = def.params as Shape;
  // As Laravel's middleware leaves them: a string trimmed, an empty one null.
  const asSent = (v: unknown) => (typeof v === 'string' ? v.trim() || null : v);
  const checked = validate(
    { account_id: shape.account_id!, amount: shape.amount! },
    { account_id: asSent(params.account_id), amount: asSent(params.amount) },
  );
  if (!checked.ok) return fail.validation(checked.errors);
  params.account_id = checked.params.account_id;
  params.amount = checked.params.amount;
  return undefined;
}
