/**
 * MCP Apps (the `io.modelcontextprotocol/ui` extension): three views a host shows beside a
 * tool's answer, in a sandboxed frame that calls this server's tools through the host.
 * Contacts (getContacts, findContacts), Account (getContactAccounts), List (getListSchema) and
 * Bulk plan (previewBulk).
 * Each view is one self-contained HTML file built into dist/apps by tools/build-views.mjs and
 * served as a `ui://` resource (`text/html;profile=mcp-app`); a tool names its view in
 * `_meta.ui.resourceUri`, which hosts without MCP Apps ignore, so their results are unchanged.
 *
 * The Account view's Confirm calls `confirmMoneyMove`, a tool only the view may call
 * (`visibility: ["app"]`): the person's click confirms the move, so it may go over the money
 * caps, once per idempotency key. A host that does not declare the extension would offer such
 * a tool to the model like any other, so it is listed and callable only for clients that do.
 * That rests on the host: one that declares the extension and lets the model call the tool
 * anyway bypasses the caps (as a client can answer its own elicitation). So the amount and the
 * account must be ones the API takes, and the audit names the client; `--no-ui` turns it off.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ResourceNotFoundError, type ReadResourceResult, type Resource } from '@modelcontextprotocol/server';
import { METHODS } from '../../api/catalog.js';
import { isMoney, type MethodDef, type Money, type MoneyMethod } from '../../api/define.js';
import { fail } from '../../api/errors.js';
import type { McpContext } from '../context.js';
import { refusal } from '../result/results.js';
import { moneyCall } from '../tools/method-tool.js';
import { clientOf } from '../tools/money-gate.js';
import type { ToolSpec } from '../tool-spec.js';
import type { BulkPlans } from '../state.js';
import { expiredUnstarted } from './bulk.js';
import { outOfReach, type PlanBody } from './bulk-plan.js';
import { UI_MIME } from './apps-support.js';

export { UI_EXTENSION, UI_MIME, supportsApps } from './apps-support.js';
export const COMMIT_TOOL = 'confirmMoneyMove';
export const BULK_COMMIT_TOOL = 'confirmBulkPlan';

interface View {
  uri: string;
  name: string;
  title: string;
  description: string;
  /** The tools whose results it shows. */
  tools: readonly string[];
}

export const VIEWS: readonly View[] = [
  {
    uri: 'ui://workspace/contacts.html',
    name: 'contacts',
    title: 'Contacts view',
    description: 'A page of contacts as a sortable table, with next and previous pages.',
    tools: ['getContacts', 'findContacts'],
  },
  {
    uri: 'ui://workspace/account.html',
    name: 'account',
    title: 'Account view',
    description: "A contact's accounts, recent moves, and top-up / withdraw with a confirm card.",
    tools: ['getContactAccounts'],
  },
  {
    uri: 'ui://workspace/list.html',
    name: 'list',
    title: 'List view',
    description: "A list's fields and its first records.",
    tools: ['getListSchema'],
  },
  {
    uri: 'ui://workspace/bulk.html',
    name: 'bulk',
    title: 'Bulk plan view',
    description: 'A previewBulk plan: what it does, to how many, the total, who is skipped; its Confirm carries it out.',
    tools: ['previewBulk'],
  },
];

const ACCOUNT_URI = VIEWS[1]!.uri;
const BULK_URI = VIEWS[3]!.uri;
const BY_TOOL = new Map(VIEWS.flatMap((v) => v.tools.map((t) => [t, v.uri] as const)));

/** The `_meta` of a tool whose result a view shows; undefined for the others. */
export function uiMetaOf(tool: string): Record<string, unknown> | undefined {
  const uri = BY_TOOL.get(tool);
  return uri ? { ui: { resourceUri: uri } } : undefined;
}

/** Whether the tool is for views only (hosts keep it from the model). */
export function isAppOnly(t: { _meta?: Record<string, unknown> }): boolean {
  const visibility = (t._meta?.ui as { visibility?: string[] } | undefined)?.visibility;
  return Array.isArray(visibility) && !visibility.includes('model');
}

/** The views as resources/list gives them. */
export function uiResources(): Resource[] {
  return VIEWS.map((v) => ({ uri: v.uri, name: v.name, title: v.title, description: v.description, mimeType: UI_MIME }));
}

const html = new Map<string, string>();

/**
 * The built HTML of a view, dist/apps/NAME.html: seen from the compiled module
 * (dist/mcp/composite), from the bundled command's chunks (dist/cli, tools/bundle.mjs), or, when
 * this module runs from source (the tests), from src/mcp/composite after `npm run build`.
 */
function viewHtml(name: string): string {
  const cached = html.get(name);
  if (cached !== undefined) return cached;
  const places = [
    new URL(`../../apps/${name}.html`, import.meta.url),
    new URL(`../apps/${name}.html`, import.meta.url),
    new URL(`../../../dist/apps/${name}.html`, import.meta.url),
  ];
  for (const place of places) {
    try {
      const text = readFileSync(fileURLToPath(place), 'utf8');
      html.set(name, text);
      return text;
    } catch {
      /* the next place */
    }
  }
  throw new Error(`the ${name} view is not built (npm run build makes dist/apps/${name}.html)`);
}

/** resources/read of a view; undefined when the URI is not one. */
export function readView(uri: string): ReadResourceResult | undefined {
  const view = VIEWS.find((v) => v.uri === uri);
  if (!view) {
    if (uri.startsWith('ui://')) throw new ResourceNotFoundError(uri);
    return undefined;
  }
  // No network at all (no connect or resource domains): everything the view needs is inline.
  return { contents: [{ uri, mimeType: UI_MIME, text: viewHtml(view.name), _meta: { ui: { prefersBorder: true } } }] };
}

/** The Account view's moves, by which way they move money: each the catalog's (first) money method of that kind. */
const MOVES: Readonly<Record<string, Money>> = { add: 'credit', withdraw: 'debit' };

/**
 * The Account view's commit: the money tool of `move`, run as the person's confirmed call (over
 * the caps, recorded as confirmed in the app view), at most once per idempotency key.
 */
export function commitTool(ctx: McpContext, served: ReadonlySet<string>): ToolSpec {
  const money = (METHODS as readonly MethodDef[]).filter(isMoney);
  const moves = new Map<string, MoneyMethod>();
  for (const [move, kind] of Object.entries(MOVES)) {
    const def = money.find((m) => m.money === kind);
    if (def && served.has(def.name)) moves.set(move, def);
  }
  return {
    name: COMMIT_TOOL,
    title: 'Confirm a money move',
    description: 'Account view only: moves money a person confirmed, once per idempotency_key.',
    inputSchema: {
      type: 'object',
      properties: {
        move: { enum: Object.keys(MOVES) },
        account_id: { type: 'integer' },
        amount: { type: 'integer' },
        description: { type: 'string' },
        idempotency_key: { type: 'string' },
      },
      required: ['move', 'account_id', 'amount', 'description', 'idempotency_key'],
    },
    // Only what differs from the defaults (it writes, may destroy): tools/list stays small.
    annotations: { idempotentHint: true, openWorldHint: false },
    scopes: ['workspace:money'],
    _meta: { ui: { resourceUri: ACCOUNT_URI, visibility: ['app'] } },
    async run(args, extra) {
      const { move, ...rest } = args;
      const method = typeof move === 'string' ? moves.get(move) : undefined;
      if (!method) return refusal(fail.invalid('move', `The move field must be one of: ${[...moves.keys()].join(', ')}.`));
      // Without a key a second click could move the money again.
      if (typeof rest.idempotency_key !== 'string')
        return refusal(fail.invalid('idempotency_key', 'The idempotency key field is required.'));
      // Recorded with the client that showed the view: the click is only as trustworthy as that host.
      return moneyCall(ctx, method.name, rest, extra, { how: 'app view', by: `the person, in the Account view of ${clientOf(extra)}` });
    },
  };
}

/**
 * The Bulk plan view's commit: the person's click is their one confirmation of the whole plan
 * (recorded as the app view's, their first answer standing as elicitation's does), then the
 * plan runs as runBulk runs it (`run`), each contact's step at most once.
 */
export function bulkCommitTool(ctx: McpContext, plans: BulkPlans, run: ToolSpec): ToolSpec {
  return {
    name: BULK_COMMIT_TOOL,
    title: 'Confirm a bulk plan',
    description: 'Bulk plan view only: carries out a plan the person confirmed.',
    inputSchema: { type: 'object', properties: { plan_id: { type: 'string' } }, required: ['plan_id'] },
    annotations: { idempotentHint: true },
    scopes: run.scopes,
    _meta: { ui: { resourceUri: BULK_URI, visibility: ['app'] } },
    async run(args, extra) {
      const id = args.plan_id;
      const plan = typeof id === 'string' ? await plans.get(id) : undefined;
      if (!plan) return refusal(fail.invalid('plan_id', 'No such plan of yours: previewBulk makes one.'));
      // Nothing is recorded for a plan this request may not carry out: a confirmation stands for good.
      const body = plan.body as unknown as PlanBody;
      const refused = outOfReach(body.action, body.open_missing_accounts, extra, BULK_COMMIT_TOOL);
      if (refused) return refused;
      // A click on a card left open past the plan's time confirms nothing (runBulk refuses such a plan too).
      const expired = plan.confirmation ? undefined : await expiredUnstarted(plans, plan);
      if (expired) return refusal(expired);
      await plans.confirm(plan.id, { accepted: true, how: 'app view', by: `the person, in the Bulk plan view of ${clientOf(extra)}` });
      return run.run({ plan_id: plan.id }, extra);
    },
  };
}
