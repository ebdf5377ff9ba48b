/**
 * Referrals (shape from the service's public docs): getReferrers (who referred a contact, as
 * a nested tree to `depth` or a flat list), getReferrals (paged direct referrals),
 * getCountReferrals. Tag filters take names or tag ids (a tag's position in getBotTags, from 1).
 */
import { z } from 'zod';
import { defineMethod, READ } from './define.js';
import { r } from './rules.js';
import { paginated, Timestamp } from './shapes.js';

export const REFERRER_DEPTH = { min: 1, max: 10, default: 1 } as const;
/** Referrals per page of getReferrals (ours). */
export const REFERRALS_PER_PAGE = 20;

export const ReferralSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  messenger: z.enum(['telegram', 'max', 'viber', 'vk', 'web']),
  created_at: Timestamp,
});
export type Referral = z.infer<typeof ReferralSchema>;

/** A contact with the one who referred it: null when nobody did, absent past `depth`. */
export type ReferrerNode = Referral & { referrer?: ReferrerNode | null };
export const ReferrerNodeSchema: z.ZodType<ReferrerNode> = z.lazy(() =>
  ReferralSchema.extend({
    referrer: ReferrerNodeSchema.nullable().optional().describe('Who referred this contact; null if nobody; absent below depth'),
  }),
);

const contactId = r.integer().required().describe("The key holder's contact (id from getContacts)");
const filters = r
  .object({
    tag_name: r.any().describe('A tag name, or a list of names: only referrals with at least one of them'),
    tag_id: r.any().describe('A tag id (its position in getBotTags, from 1), or a list of ids: only referrals with at least one of them'),
  })
  .describe('Tag filters; with both keys, a referral with any of the named or numbered tags qualifies. Form style: filters[tag_name]=vip');

export const getReferrers = defineMethod({
  name: 'getReferrers',
  verbs: ['GET', 'POST'],
  status: 200,
  title: 'Who referred a contact',
  description:
    'Follows the referral chain up from a contact: who referred it, who referred that one, up to depth levels (1-10, default 1). ' +
    'By default the answer is the contact itself with a nested referrer object (null when nobody referred it); ' +
    'with is_flat=1 it is a flat list of the referrers, nearest first (empty when none). Changes nothing.',
  params: {
    contact_id: contactId,
    depth: r.integer().between(REFERRER_DEPTH.min, REFERRER_DEPTH.max).describe('Levels up the chain, 1-10, default 1'),
    is_flat: r.boolean().describe('0 (default): a nested tree; 1: a flat list, nearest referrer first'),
  },
  result: z.object({ data: z.union([ReferrerNodeSchema, z.array(ReferralSchema)]) }),
  annotations: READ,
});

export const getReferrals = defineMethod({
  name: 'getReferrals',
  verbs: ['GET', 'POST'],
  status: 200,
  title: "A contact's referrals",
  description:
    'Lists the contacts a contact referred directly (not their referrals in turn), by ascending id, 20 per page (page from 1), ' +
    'optionally only those with one of some tags (filters[tag_name], filters[tag_id]). Answers data, links and meta (total, last_page). ' +
    'Use getCountReferrals for the number only. Changes nothing.',
  params: {
    contact_id: contactId,
    page: r.any().advertise('integer').describe('Page number from 1 (default 1); anything but a positive integer reads page 1'),
    filters,
  },
  result: paginated(ReferralSchema),
  annotations: READ,
});

export const getCountReferrals = defineMethod({
  name: 'getCountReferrals',
  verbs: ['GET', 'POST'],
  status: 200,
  title: "Count a contact's referrals",
  description:
    'Counts the contacts a contact referred directly, with the same tag filters as getReferrals. Answers {count} with no data wrapper. Changes nothing.',
  params: { contact_id: contactId, filters },
  result: z.object({ count: z.number().int() }),
  annotations: READ,
});

export const referralMethods = [getReferrers, getReferrals, getCountReferrals] as const;
