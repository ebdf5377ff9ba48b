/**
 * A bulk plan's entries in the audit trail name who asked as a method tool's do: under
 * `--auth oauth` the OAuth client the person signed in with (`oauth_client`), beside the MCP
 * client and session. The caller is what the server's HTTP transport gives a signed-in
 * request's tools (serve/server.ts); here a test tool hands runBulk that caller, as an
 * `--auth oauth` request would.
 */
import { expect, test } from 'vitest';
import type { AuditEntry } from '../../src/api/backend.js';
import { runBulkTool } from '../../src/mcp/composite/bulk.js';
import type { McpContext } from '../../src/mcp/context.js';
import type { ToolSpec } from '../../src/mcp/tool-spec.js';
import { useMcp, type McpWorld } from './harness.js';

const startMcp = useMcp();

/** The OAuth client the person signed in with. */
const HOST = { id: 'https://host.example/client.json', name: 'Signed-in host' };

/** runBulk as a request signed in through HOST calls it. */
function signedInRunBulk(context: () => McpContext): ToolSpec {
  return {
    name: 'runBulkSignedIn',
    title: 'runBulk, signed in (test only)',
    description: 'runBulk with the caller of an --auth oauth request.',
    inputSchema: { type: 'object' },
    annotations: {},
    scopes: ['workspace:write'],
    run: (args, extra) =>
      runBulkTool(context(), context().plans!).run(args, {
        ...extra,
        caller: { client: extra.caller?.client ?? null, session: extra.caller?.session ?? null, oauthClient: HOST },
      }),
  };
}

async function world(): Promise<McpWorld> {
  let w: McpWorld | undefined;
  // A client that cannot ask: a deposit under no caps runs at once, a message plan is refused.
  w = await startMcp({ extraTools: [signedInRunBulk(() => w!.context)], client: { elicitation: false } });
  return w;
}

async function plan(w: McpWorld, action: Record<string, unknown>): Promise<string> {
  const preview = await w.call('previewBulk', { selection: { bot_id: 10, tags: ['vip'] }, action });
  expect(preview.isError, JSON.stringify(preview.content)).toBeFalsy();
  return (preview.structuredContent as { data: { plan_id: string } }).data.plan_id;
}

const entries = async (w: McpWorld): Promise<AuditEntry[]> => (await w.context.audit!.read({ limit: 50 })).entries;

test("a bulk plan's run and its steps name the OAuth client that asked", async () => {
  const w = await world();
  const planId = await plan(w, { type: 'deposit', currency: 'USD', amount: 100, description: 'Signed-in bonus' });
  const run = await w.call('runBulkSignedIn', { plan_id: planId });
  expect(run.structuredContent).toMatchObject({ data: { done: 1, remaining: 0 } });
  const trail = await entries(w);
  const started = trail.find((e) => e.tool === 'runBulk');
  expect(started).toMatchObject({ status: 200, arguments: { plan_id: planId }, oauth_client: HOST });
  expect(trail.find((e) => e.tool === 'addFundsToContactAccount')).toMatchObject({ status: 200, oauth_client: HOST });
});

test("a bulk plan's refusal names the OAuth client that asked", async () => {
  const w = await world();
  const planId = await plan(w, { type: 'sendMessage', text: 'Hello' });
  const run = await w.call('runBulkSignedIn', { plan_id: planId });
  expect(run.isError).toBe(true);
  expect((await entries(w)).find((e) => e.tool === 'runBulk')).toMatchObject({
    status: 422,
    code: 'confirmation_required',
    arguments: { plan_id: planId },
    oauth_client: HOST,
  });
});
