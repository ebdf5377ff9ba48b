/**
 * Handlers: referrals. A chain follows `referrer_id` through live contacts of the same bot
 * (a deleted referrer, or one in another bot, ends it); a loop in loaded data ends it too.
 */
import { fail } from '../api/errors.js';
import type { getCountReferrals, getReferrals, getReferrers, Referral, ReferrerNode } from '../api/referrals.js';
import { REFERRALS_PER_PAGE, REFERRER_DEPTH } from '../api/referrals.js';
import type { Infer } from '../api/rules.js';
import type { ReferralRow } from '../store/referrals.js';
import { requireContact } from './access.js';
import type { Ctx } from './context.js';
import { pageNumber, paginate } from './paginate.js';

function view(c: ReferralRow): Referral {
  return { id: c.id, name: c.name, messenger: c.messenger, created_at: c.created_at };
}

/** The referrers of `start`, nearest first, at most `depth`. */
function chain(ctx: Ctx, start: ReferralRow, depth: number): ReferralRow[] {
  const out: ReferralRow[] = [];
  const seen = new Set([start.id]);
  let cur = start;
  while (out.length < depth && cur.referrer_id !== null && !seen.has(cur.referrer_id)) {
    const next = ctx.store.referrals.contact(cur.referrer_id);
    if (!next || next.deleted_at !== null || next.bot_id !== start.bot_id) break;
    out.push(next);
    seen.add(next.id);
    cur = next;
  }
  return out;
}

type Filters = { tag_name?: unknown; tag_id?: unknown } | undefined;

function listOf(v: unknown): unknown[] {
  return v === undefined || v === null ? [] : Array.isArray(v) ? v : [v];
}

/** Tag names the filters stand for, or null for no filter. Tag ids are positions in getBotTags. */
function tagFilter(ctx: Ctx, botId: number, f: Filters): string[] | null {
  if (!f || (f.tag_name == null && f.tag_id == null)) return null;
  const errors = new Map<string, string[]>();
  const names: string[] = [];
  for (const n of listOf(f.tag_name)) {
    if (typeof n === 'string') names.push(n);
    else errors.set('filters.tag_name', ['The filters.tag_name field must be a string or a list of strings.']);
  }
  const botTags = ctx.store.tags.botTags(botId);
  for (const raw of listOf(f.tag_id)) {
    const id = typeof raw === 'number' ? raw : typeof raw === 'string' && /^[1-9][0-9]{0,8}$/.test(raw) ? Number(raw) : NaN;
    const name = Number.isInteger(id) ? botTags[id - 1] : undefined;
    if (name === undefined) errors.set('filters.tag_id', ['The selected filters.tag_id is invalid.']);
    else names.push(name);
  }
  if (errors.size > 0) throw fail.validation(errors);
  return names;
}

/** The holder's live contact (404 / 403 otherwise) with its referrer_id. */
function loadContact(ctx: Ctx, contactId: number): ReferralRow {
  requireContact(ctx, contactId);
  return ctx.store.referrals.contact(contactId)!;
}

export const referralHandlers = {
  getReferrers(ctx: Ctx, p: Infer<(typeof getReferrers)['params']>) {
    const start = loadContact(ctx, p.contact_id);
    const up = chain(ctx, start, p.depth ?? REFERRER_DEPTH.default);
    if (p.is_flat) return { data: up.map(view) };
    // Built from the far end: the last node gets `referrer: null` only where the chain truly ends.
    const depth = p.depth ?? REFERRER_DEPTH.default;
    let node: ReferrerNode | null = null;
    for (let i = up.length - 1; i >= 0; i--) {
      const n: ReferrerNode = view(up[i]!);
      if (i === up.length - 1) {
        if (up.length < depth) n.referrer = null;
      } else n.referrer = node;
      node = n;
    }
    return { data: { ...view(start), referrer: node } };
  },

  getReferrals(ctx: Ctx, p: Infer<(typeof getReferrals)['params']>) {
    const c = loadContact(ctx, p.contact_id);
    const tags = tagFilter(ctx, c.bot_id, p.filters);
    const page = pageNumber(p.page);
    const total = ctx.store.referrals.count(c.id, tags);
    const offset = (page - 1) * REFERRALS_PER_PAGE;
    const items = offset < total ? ctx.store.referrals.page(c.id, tags, REFERRALS_PER_PAGE, offset).map(view) : [];
    return paginate({ items, total, page, perPage: REFERRALS_PER_PAGE, path: ctx.url, metaLinks: true });
  },

  getCountReferrals(ctx: Ctx, p: Infer<(typeof getCountReferrals)['params']>) {
    const c = loadContact(ctx, p.contact_id);
    return { count: ctx.store.referrals.count(c.id, tagFilter(ctx, c.bot_id, p.filters)) };
  },
};
