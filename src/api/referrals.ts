/**
 * Referrals (shape from the service's public docs): getReferrers (who referred a contact, as
 * a nested tree to `depth` or a flat list), getReferrals (paged direct referrals),
 * getCountReferrals. Tag filters take names or tag ids (a tag's position in getBotTags, from 1).
 */
import { z } from 'zod';
import { defineMethod, READ } from './define.js';
import { contactId, page } from './params.js';
import { r } from './rules.js';
import { paginated, Timestamp } from './shapes.js';

export const REFERRER_DEPTH = { min: 1, max: 10, default: 1 } as const;
/** Referrals per page of getReferrals (ours). */
export const REFERRALS_PER_PAGE = 20;

const ReferralSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  messenger: z.enum(['telegram', 'max', 'viber', 'vk', 'web']),
  created_at: Timestamp,
});
export type Referral = z.infer<typeof ReferralSchema>;

/** A contact with the one who referred it: null when nobody did, absent past `depth`. */
export type ReferrerNode = Referral & { referrer?: ReferrerNode | null };
const ReferrerNodeSchema: z.ZodType<ReferrerNode> = z.lazy(() =>
  ReferralSchema.extend({
    referrer: ReferrerNodeSchema.nullable().optional().describe('Who referred this contact; null if nobody; absent below depth'),
  }),
);

const filters = r
  .object({
    // The advertised types say "one or a list" (a tag id: getBotTags); no description repeats it.
    tag_name: r.any().advertise('string or array of strings'),
    tag_id: r.any().advertise('integer or array of integers'),
  })
  .describe('Only referrals with any of these tags');

export const getReferrers = defineMethod({
  name: 'getReferrers',
  title: 'Who referred a contact',
  description:
    'Who referred a contact, up the chain depth levels: the contact with a nested referrer (null: nobody), or with is_flat a list, nearest first.',
  params: {
    contact_id: contactId,
    depth: r.integer().between(REFERRER_DEPTH.min, REFERRER_DEPTH.max).describe('Default 1'),
    is_flat: r.boolean().describe('Default false'),
  },
  result: z.object({ data: z.union([ReferrerNodeSchema, z.array(ReferralSchema)]) }),
  annotations: READ,
});

export const getReferrals = defineMethod({
  name: 'getReferrals',
  title: "A contact's referrals",
  description: 'The contacts a contact referred directly, by ascending id, 20 a page. Only the number: getCountReferrals.',
  params: {
    contact_id: contactId,
    page,
    filters,
  },
  result: paginated(ReferralSchema),
  annotations: READ,
});

export const getCountReferrals = defineMethod({
  name: 'getCountReferrals',
  title: "Count a contact's referrals",
  description: "Counts the contacts a contact referred directly, with getReferrals' filters.",
  params: { contact_id: contactId, filters },
  result: z.object({ count: z.number().int() }),
  annotations: READ,
});

export const referralMethods = [getReferrers, getReferrals, getCountReferrals] as const;
