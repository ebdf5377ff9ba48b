/** Result schemas shared by several resources: paging envelopes and timestamps. */
import { z } from 'zod';

export const Timestamp = z.string().describe('ISO 8601 time with offset, e.g. 2026-01-01T00:00:00+00:00');

/**
 * `brief`: an MCP output schema gives this part as its bare type (the paging links are
 * Laravel's, the same on every page of every list; the docs give them whole).
 */
export const PageLinksSchema = z
  .object({
    first: z.string().nullable(),
    last: z.string().nullable(),
    prev: z.string().nullable(),
    next: z.string().nullable(),
  })
  .meta({ brief: true });

export const PageMetaSchema = z.object({
  current_page: z.number().int(),
  from: z.number().int().nullable(),
  last_page: z.number().int(),
  links: z
    .array(z.object({ url: z.string().nullable(), label: z.string(), active: z.boolean() }))
    .meta({ brief: true })
    .optional(),
  path: z.string(),
  per_page: z.number().int(),
  to: z.number().int().nullable(),
  total: z.number().int(),
});

/** Laravel's paginated envelope around `item`. */
export function paginated<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), links: PageLinksSchema, meta: PageMetaSchema });
}
