/**
 * findContacts, the composite tool: the owner's contacts found by name (any word, a prefix,
 * case and accents folded in every script), phone (any format, or its last 7+ digits), email,
 * username (with or without @), messenger id or contact id; exact identifiers first. Each
 * contact is compact and carries its accounts, so "what is Anna's balance?" is one call and the
 * top-up the next. Searches the index the CLI passed in (ContactIndex); an index that does not
 * hold accounts (a remote one) gets the first few read live with getContactAccounts.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { isSuccess } from '../../api/backend.js';
import { r } from '../../api/rules.js';
import type { McpContext } from '../context.js';
import { logWithin } from '../logging.js';
import { toolResult } from '../result/results.js';
import {
  compactContact,
  IndexRefused,
  refusesOwner,
  type CompactAccount,
  type CompactContact,
  type ContactHit,
  type FindResult,
} from '../contact-search.js';
import type { ToolSpec } from '../tool-spec.js';
import { compositeTool } from './composite-tool.js';
import { FIND_TOOL_INFO } from './identities.js';

/** A findContacts result stays under this many characters, text and structuredContent alike. */
const FIND_BUDGET = 20_000;
/** Hits whose accounts are read live when the index has none (a remote index). */
const LIVE_ACCOUNTS = 3;

const FIND_PARAMS = {
  query: r.string().required().between(1, 200).describe('A name (or part), phone, email, @username or id'),
  bot_id: r.integer().describe('Default: the default bot, else all your bots'),
  limit: r.integer().between(1, 50).describe('Default 10'),
  refresh: r.boolean().describe('Remote only: resync the index first'),
};

const AccountSchema = z.object({
  id: z.number().int().describe('The account_id for addFundsToContactAccount / withdrawFundsFromContactAccount'),
  currency: z.string(),
  amount: z.number().int().describe('Balance in MINOR units (cents)'),
  blocked: z.boolean(),
});

const ResultSchema = z.object({
  data: z.array(
    z.object({
      id: z.number().int().describe('contact_id'),
      bot_id: z.number().int(),
      name: z.string(),
      messenger: z.string(),
      usernames: z.array(z.string()),
      phone: z.string().nullable(),
      email: z.string().nullable(),
      tags: z.array(z.string()),
      matched: z.string().describe('What matched: id, messenger_id, phone, email, username or name'),
      accounts: z.array(AccountSchema).optional().describe('Absent when not read (a remote index reads the first 3 live)'),
    }),
  ),
  meta: z.object({
    total: z.number().int().describe('Contacts that match in all (counted up to 1000)'),
    total_capped: z.boolean().optional().describe('true: the count stopped at total; there are more'),
    limit: z.number().int(),
    index: z
      .object({
        source: z.enum(['database', 'remote']),
        contacts: z.number().int(),
        as_of: z.string().nullable(),
        syncing: z.boolean(),
        complete: z.boolean(),
      })
      .describe('How fresh and complete the search index is'),
  }),
});

/** A contact the API answers 403 for: no longer the owner's, or the owner refused as a whole (blocked). */
const FORBIDDEN = Symbol('forbidden');

/** The contact's accounts read live; undefined when it is gone (404), FORBIDDEN (403), or the error result. */
async function liveAccounts(
  ctx: McpContext,
  contactId: number,
  signal: AbortSignal,
): Promise<CompactAccount[] | undefined | typeof FORBIDDEN | CallToolResult> {
  const res = await logWithin(signal, () => ctx.backend.call('getContactAccounts', { contact_id: contactId }, { signal }));
  if (res.status === 404) return undefined;
  if (res.status === 403) return FORBIDDEN;
  if (!isSuccess(res.status)) return toolResult(res, { method: 'getContactAccounts' });
  ctx.seen.record(res.body);
  const data = (res.body as { data?: Array<{ id: number; currency: string; amount: number; blocked_at: string | null }> }).data ?? [];
  return data.map((a) => ({ id: a.id, currency: a.currency, amount: a.amount, blocked: a.blocked_at !== null }));
}

/** Cut `data` from the end until the whole body fits the budget; returns the body. */
function fit<B extends { data: CompactContact[]; meta: object; warnings?: string[] }>(body: B): B {
  let text = JSON.stringify(body);
  if (text.length <= FIND_BUDGET) return body;
  const of = body.data.length;
  while (body.data.length > 0 && text.length > FIND_BUDGET - 300) {
    body.data.pop();
    text = JSON.stringify({ ...body, warnings: [] });
  }
  body.warnings = [
    ...(body.warnings ?? []),
    `Only the first ${body.data.length} of ${of} contacts fit in ${FIND_BUDGET} characters; ask with a narrower query or a smaller limit.`,
  ];
  return body;
}

export function findContactsTool(ctx: McpContext): ToolSpec {
  const index = ctx.contacts!;
  return compositeTool({
    info: FIND_TOOL_INFO,
    description:
      'Finds contacts by name (any word or its start, any case or accents), phone (any format, or its last 7+ digits), ' +
      'email, @username, messenger id or contact id; exact identifiers first. Each has its accounts (id: the account_id).',
    params: FIND_PARAMS,
    output: () => ResultSchema,
    async run(p, extra) {
      const owner = await ctx.owner();
      if (typeof owner !== 'number') return owner;
      const bot = p.bot_id ?? (await ctx.defaultBot());
      const limit = p.limit ?? 10;
      let found: FindResult;
      try {
        found = await index.find(owner, p.query, {
          botIds: bot === undefined ? undefined : [bot],
          limit,
          refresh: p.refresh === true,
          signal: extra.signal,
          progress: (done, total, message) => void extra.progress(done, total, message),
        });
      } catch (e) {
        if (e instanceof IndexRefused)
          return toolResult({ status: e.status, headers: e.headers, body: e.body }, { method: 'findContacts' });
        throw e;
      }
      const hits: ContactHit[] = [];
      /** The hits' account holders being kept in the state: done before the answer goes. */
      const kept: Array<Promise<void>> = [];
      let total = found.total;
      let ownerChecked = false;
      for (const [i, hit] of found.hits.entries()) {
        if (hit.accounts === undefined && i < LIVE_ACCOUNTS) {
          const accounts = await liveAccounts(ctx, hit.id, extra.signal);
          if (accounts === FORBIDDEN && !ownerChecked) {
            // Which 403 is it? A blocked owner's getMe is refused too (401, 402, 403): then nothing
            // of the copy is shown. Any other answer (a 429, getMe switched off) says nothing of the owner.
            ownerChecked = true;
            const me = await logWithin(extra.signal, () => ctx.backend.call('getMe', {}, { signal: extra.signal }));
            if (refusesOwner(me.status)) return toolResult(me, { method: 'getMe' });
          }
          if (accounts === undefined || accounts === FORBIDDEN) {
            total--; // gone since the index saw it (deleted, or no longer the owner's)
            continue;
          }
          if (!Array.isArray(accounts)) return accounts;
          hit.accounts = accounts;
        }
        kept.push(
          ctx.accounts.learnContact(
            hit.id,
            hit.name ?? null,
            (hit.accounts ?? []).map((a) => a.id),
          ),
        );
        hits.push(hit);
      }
      await Promise.all(kept);
      const warnings: string[] = [];
      if (found.index.syncing)
        warnings.push(
          `The search index is still syncing (${found.index.progress ?? `${found.index.contacts} contacts so far`}); contacts it has not reached yet are missing. Ask again shortly.`,
        );
      if (found.index.error) warnings.push(`The last index sync stopped: ${found.index.error}`);
      const body = {
        data: hits.map(compactContact),
        meta: { total: Math.max(total, hits.length), ...(found.capped ? { total_capped: true } : {}), limit, index: found.index },
        ...(warnings.length ? { warnings } : {}),
      };
      return toolResult({ status: 200, headers: {}, body: fit(body) }, { budget: ctx.maxResultChars });
    },
  });
}
