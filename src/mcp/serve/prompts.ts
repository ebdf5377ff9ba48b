/**
 * Prompts for the jobs people bring: set up a loyalty balance for a contact, export a bot's
 * contacts, design a list for orders, reward every contact of a segment. Each is a user message
 * that names the tools to use, in order.
 * Arguments are checked as a tool's are: a name where an id belongs is refused with where to
 * find the id, before any text is built.
 */
import { ProtocolError, ProtocolErrorCode, type GetPromptResult, type Prompt } from '@modelcontextprotocol/server';
import { isCurrency } from '../../api/currency.js';

interface PromptDef extends Prompt {
  /** The tools it has the model call: offered only where every one is served (a grant, a door, --scopes may leave one out). */
  needs: readonly string[];
  build(args: Record<string, string>): string;
}

const PROMPTS: PromptDef[] = [
  {
    name: 'setupLoyaltyBalance',
    needs: ['getContactAccounts', 'addContactAccount', 'addFundsToContactAccount'],
    title: 'Set up a loyalty balance for a contact',
    description: "Open (or find) a contact's account in a currency and credit a starting balance, safely.",
    arguments: [
      { name: 'contact_id', description: 'The contact id (findContacts finds it by name, phone or username)', required: true },
      { name: 'currency', description: 'ISO 4217 code, e.g. USD (default USD)', required: false },
      { name: 'amount', description: 'Starting balance in MAJOR units, e.g. 5.00 (default: none)', required: false },
    ],
    build: (a) => {
      const currency = (a.currency || 'USD').toUpperCase();
      const amount = a.amount ? `a starting balance of ${a.amount} ${currency}` : 'no starting balance';
      return [
        `Set up a loyalty balance in ${currency} for contact ${a.contact_id}, with ${amount}.`,
        `1. Call getContactAccounts with contact_id=${a.contact_id} and look for an account in ${currency}.`,
        `2. If there is none, call addContactAccount with contact_id=${a.contact_id} and currency="${currency}".`,
        a.amount
          ? `3. Call addFundsToContactAccount with that account_id, amount = ${a.amount} converted to MINOR units ` +
            `(cents for USD: multiply by 100; whole units for currencies without a fraction such as JPY), a short description ` +
            `such as "Loyalty welcome bonus", and a fresh idempotency_key (a UUID) so that a retry cannot credit twice.`
          : '3. Do not move any money.',
        '4. Report the account id and its amount_note.',
      ].join('\n');
    },
  },
  {
    name: 'exportBotContacts',
    needs: ['getNumberOfContacts', 'exportContacts'],
    title: "Export a bot's contacts",
    description: "Count a bot's contacts and write all of them to a file.",
    arguments: [
      { name: 'bot_id', description: 'The bot whose contacts to export (getWorkspace lists your bots)', required: true },
      { name: 'format', description: 'jsonl (default) or csv', required: false },
      { name: 'since', description: 'Only contacts created since this date (ISO 8601), optional', required: false },
    ],
    build: (a) => {
      const since = a.since ? ` created since ${a.since} (pass date_from as Unix seconds)` : '';
      return [
        `Export the contacts of bot ${a.bot_id}${since}.`,
        `1. Call getNumberOfContacts with bot_id=${a.bot_id} to say how many there are.`,
        `2. Call exportContacts with bot_id=${a.bot_id}, format="${a.format || 'jsonl'}". Do not page through getContacts yourself.`,
        '3. Report the count, the file path, and offer the resource link.',
      ].join('\n');
    },
  },
  {
    name: 'designOrdersList',
    needs: ['createListSchema'],
    title: 'Design a list for orders',
    description: 'Design and create a list schema to keep orders in.',
    arguments: [
      { name: 'where', description: 'A bot_id or a project_uuid to create the list in', required: true },
      { name: 'currency', description: 'Currency of order totals (default USD)', required: false },
      { name: 'notes', description: 'What else the orders need to hold', required: false },
    ],
    build: (a) => {
      const where = /^\d+$/.test(a.where ?? '') ? `bot_id=${a.where}` : `project_uuid="${a.where}"`;
      return [
        `Design a list for orders and create it with createListSchema (${where}).`,
        'Suggested fields (slug: type): order_number: string; customer: contact; total: money' +
          ` (currency ${(a.currency || 'USD').toUpperCase()}); status: string; placed_at: datetime; ` +
          'comment: string (is_required false).',
        a.notes ? `Also cover: ${a.notes}.` : '',
        'Rules: 1 to 30 fields; slugs use letters, digits, - and _, unique in the list, up to 255 characters; types are ' +
          'string, number, bool, date, datetime, money, file, image, contact, bot; money needs a currency; fields are ' +
          'required unless is_required is false.',
        'Show the design first, then call createListSchema, then report the new list id (readable later as ' + 'workspace://lists/{id}).',
      ]
        .filter(Boolean)
        .join('\n');
    },
  },
  // Reward every contact of a segment at once: one plan, one confirmation (previewBulk, runBulk).
  {
    name: 'rewardSegment',
    needs: ['previewBulk', 'runBulk', 'addFundsToContactAccount', 'addContactAccount'],
    title: 'Reward a segment',
    description: 'Credit the same amount to every contact with a tag, confirmed once, each contact exactly once.',
    arguments: [
      { name: 'tag', description: 'The tag every rewarded contact has, e.g. vip', required: true },
      { name: 'amount', description: 'Per contact, in MAJOR units, e.g. 5.00', required: true },
      { name: 'currency', description: 'ISO 4217 code, e.g. USD (default USD)', required: false },
      { name: 'bot_id', description: 'The bot (default: the default bot)', required: false },
    ],
    build: (a) => {
      const currency = (a.currency || 'USD').toUpperCase();
      const bot = a.bot_id ? `, bot_id: ${a.bot_id}` : '';
      return [
        `Give every contact tagged "${a.tag}" ${a.amount} ${currency}.`,
        `1. Call previewBulk with selection {tags: ["${a.tag}"]${bot}} and action {type: "deposit", currency: "${currency}", ` +
          `amount: ${a.amount} in MINOR units (cents for USD: multiply by 100), description: "Reward: ${a.tag}"}, ` +
          'open_missing_accounts: true. Do not call addFundsToContactAccount per contact.',
        '2. Tell the person how many contacts, the total (total_note) and who is skipped and why; ask whether to go ahead.',
        '3. If they agree, call runBulk with the plan_id (they confirm once more in their client). If it stops midway, call runBulk ' +
          'again with the same plan_id: no contact is paid twice.',
        '4. Report done, failed and skipped, and the report resource for the details.',
      ].join('\n');
    },
  },
];

const WHOLE = /^\d{1,15}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Each argument's check: undefined when the value is good, else what is wrong and what to do. */
const CHECKS: Record<string, (v: string) => string | undefined> = {
  contact_id: (v) =>
    WHOLE.test(v)
      ? undefined
      : `contact_id must be a contact id (a whole number), not ${JSON.stringify(v)}. To find a contact by name, phone, email or username, call findContacts and use the id it answers.`,
  bot_id: (v) =>
    WHOLE.test(v) ? undefined : `bot_id must be a bot id (a whole number), not ${JSON.stringify(v)}. getWorkspace lists your bots.`,
  currency: (v) => (isCurrency(v.toUpperCase()) ? undefined : `currency must be an ISO 4217 code such as USD, not ${JSON.stringify(v)}.`),
  amount: (v) =>
    /^\d{1,14}(\.\d{1,4})?$/.test(v) ? undefined : `amount must be a number in major units such as 5.00, not ${JSON.stringify(v)}.`,
  tag: (v) => (v.length <= 255 ? undefined : 'tag must be a tag name of at most 255 characters.'),
  format: (v) => (v === 'jsonl' || v === 'csv' ? undefined : `format must be jsonl or csv, not ${JSON.stringify(v)}.`),
  since: (v) => (Number.isNaN(Date.parse(v)) ? `since must be an ISO 8601 date such as 2026-01-31, not ${JSON.stringify(v)}.` : undefined),
  where: (v) =>
    WHOLE.test(v) || UUID.test(v)
      ? undefined
      : `where must be a bot id (a whole number) or a project uuid, not ${JSON.stringify(v)}. getWorkspace lists both.`,
};

/** Refuse unknown, missing and ill-formed arguments with one message naming each. */
function checkArguments(p: PromptDef, args: Record<string, string>): void {
  const known = new Map((p.arguments ?? []).map((a) => [a.name, a]));
  const problems: string[] = [];
  for (const name of Object.keys(args)) {
    if (!known.has(name)) problems.push(`${name} is not an argument of ${p.name} (arguments: ${[...known.keys()].join(', ')}).`);
  }
  for (const a of known.values()) {
    const v = args[a.name];
    if (v === undefined || v === '') {
      if (a.required) problems.push(`Prompt ${p.name} needs the argument ${a.name}.`);
      continue;
    }
    const why = CHECKS[a.name]?.(v.trim());
    if (why) problems.push(why);
  }
  if (problems.length) throw new ProtocolError(ProtocolErrorCode.InvalidParams, problems.join(' '));
}

/** The prompts whose tools are all served (`served`: whether a tool is; default every tool). */
export function listPrompts(served: (tool: string) => boolean = () => true): Prompt[] {
  return PROMPTS.filter((p) => p.needs.every(served)).map(({ build: _build, needs: _needs, ...p }) => p);
}

export function getPrompt(
  name: string,
  args: Record<string, string> = {},
  served: (tool: string) => boolean = () => true,
): GetPromptResult {
  const p = PROMPTS.find((x) => x.name === name && x.needs.every(served));
  if (!p) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${name}`);
  checkArguments(p, args);
  return {
    description: p.description,
    messages: [{ role: 'user', content: { type: 'text', text: p.build(args) } }],
  };
}
