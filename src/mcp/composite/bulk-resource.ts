/** A runBulk plan's outcomes as the resource `workspace://bulk/{plan_id}`: the plan and its steps, a page at a time. */
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, type ReadResourceResult } from '@modelcontextprotocol/server';
import type { McpContext } from '../context.js';
import { longestPrefix, PROTOCOL_ROOM, resultSize } from '../result/budget.js';
import type { BulkStep } from '../state.js';

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

/** The URI of a plan's outcomes. */
export const bulkUri = (planId: string): string => `${BULK_URI}${planId}`;

/** Whether a URI names a bulk plan's outcomes. */
export const isBulkUri = (uri: string): boolean => uri.startsWith(BULK_URI);

/** `workspace://bulk/{plan_id}{?after,limit}`: the plan and a page of its steps by contact id, within the result budget. */
export async function readBulk(ctx: McpContext, uri: string): Promise<ReadResourceResult> {
  const url = new URL(uri);
  const id = decodeURIComponent(url.pathname.replace(/^\//, ''));
  const plan = await ctx.plans?.get(id);
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
  const [steps, counts] = await Promise.all([ctx.plans!.steps(id, { after, limit: limit + 1 }), ctx.plans!.counts(id)]);
  const pageUri = (from: number) => `${BULK_URI}${encodeURIComponent(id)}?after=${from}&limit=${limit}`;
  const render = (shown: BulkStep[], more: boolean): ReadResourceResult => {
    const body = {
      plan: { id: plan.id, ...plan.body, confirmation: plan.confirmation, created_at: plan.created_at, expires_at: plan.expires_at },
      counts,
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
