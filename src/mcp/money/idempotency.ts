/**
 * A money call at most once per idempotency key: the first success is kept, as the API's
 * answer, and replayed (with `replayed: true`) to a repeat with the same arguments; other
 * arguments are a conflict. A definite refusal (4xx) moved nothing, so its key is given back;
 * a lost answer (a 5xx, `outcome_unknown`) keeps the reservation: whether money moved is unknown.
 */
import { createHash } from 'node:crypto';
import { isSuccess, type ApiResponse } from '../../api/backend.js';
import { readBackOf, type MoneyMethod } from '../../api/define.js';
import { fail } from '../../api/errors.js';
import type { IdempotencyKeys } from '../state.js';

/** An answer, maybe the kept answer of an earlier call. */
export interface Answer extends ApiResponse {
  replayed?: boolean;
}

/** sha256 of a call's canonical JSON (keys sorted), to compare two calls' arguments. */
function hashArguments(method: string, args: Record<string, unknown>): string {
  const canon = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canon)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, canon((v as Record<string, unknown>)[k])]),
          )
        : v;
  return createHash('sha256')
    .update(JSON.stringify([method, canon(args)]))
    .digest('hex');
}

/** Whether a failed answer leaves open whether the call was carried out. */
export function isOutcomeUnknown(res: ApiResponse): boolean {
  return res.status >= 500 || (res.body as { code?: unknown } | undefined)?.code === 'outcome_unknown';
}

function isResponse(r: object): r is ApiResponse {
  return typeof (r as { status?: unknown }).status === 'number';
}

function conflict(message: string): Answer {
  return fail.coded('idempotency_conflict', 'idempotency_key', message).response();
}

/**
 * Run `call` unless `key` already holds this call: then its kept answer, or a conflict. A call
 * that answers something else than the API's answer (a question to the person first) moved
 * nothing yet: the key is given back for the call that comes with the answer.
 */
export async function callOnce<Pending extends object = never>(
  keys: IdempotencyKeys,
  def: MoneyMethod,
  key: string,
  params: Record<string, unknown>,
  call: () => Promise<ApiResponse | Pending>,
  /**
   * `final`: a definite refusal is kept too (the answer to a question, which counts once).
   * `refused`: the API's refusal of the caller now (blocked, a key revoked), asked before a kept
   * answer is replayed, which the API would not have answered either.
   */
  o: { final?: boolean; refused?: () => Promise<ApiResponse | undefined> | undefined } = {},
): Promise<Answer | Pending> {
  const hash = hashArguments(def.name, params);
  const seen = await keys.reserve(key, def.name, hash);
  if (seen) {
    if (seen.method !== def.name || seen.paramsHash !== hash) {
      return conflict(
        `This idempotency key was already used for another operation (${seen.method} with other arguments). Use a new key for a new operation.`,
      );
    }
    if (!seen.answer) {
      return conflict(
        `An operation with this idempotency key is under way, or its outcome is unknown. Check with ${readBackOf(def)} before retrying with a new key.`,
      );
    }
    const refused = await o.refused?.();
    if (refused) return refused;
    return { status: seen.answer.status, headers: {}, body: seen.answer.body, replayed: true };
  }
  const res = await call();
  if (!isResponse(res)) {
    await keys.release(key);
    return res;
  }
  if (isSuccess(res.status) || (o.final && !isOutcomeUnknown(res))) await keys.complete(key, { status: res.status, body: res.body });
  else if (!isOutcomeUnknown(res)) await keys.release(key);
  return res;
}
