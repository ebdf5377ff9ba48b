/**
 * What each tool needs a person to grant (src/api/scopes.ts), and the read-only door. The
 * contract: "Four scopes: `workspace:read` (every tool that changes nothing, the resources,
 * search, exports, previews), `workspace:write` (changes that neither move money nor reach a
 * contact: lists, records, tags, variables, contacts, accounts opened), `workspace:money`
 * (top-ups and debits, and bulk plans that move money), `workspace:message` (anything that sends
 * to a contact, and bulk message plans) […] Which scope a tool needs follows from its method's
 * definition, never from a list of names." And: "The read-only door: `<…>/mcp/read-only` in every
 * `--auth` mode serves only the `workspace:read` tools."
 */
import { afterEach, describe, expect, test } from 'vitest';
import { METHODS } from '../../../src/api/catalog.js';
import { isMoney, type MethodDef } from '../../../src/api/define.js';
import { SCOPES, scopeOf } from '../../../src/api/scopes.js';
import { serveMcpHttp, serveMcpHttpByKey, type McpHttpServer } from '../../../src/mcp/serve/http.js';
import { connectHttp, ERAS, type McpClient } from '../clients.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnv, runCli, spawnAnnounced, spawnServe } from '../../helpers/cli.js';
import { usePostgres } from '../../helpers/postgres.js';
import { stop } from '../../helpers/temp.js';
import { seedDb, tempDir } from '../../helpers/world.js';
import { firstJson, mcpFixture, useMcp } from '../harness.js';
import { reachOf } from '../../../src/mcp/auth/scopes.js';
import {
  authorizeGet,
  authorizeParams,
  consentForm,
  consentTicked,
  exchange,
  freePort,
  pkce,
  REDIRECT,
  register,
  seedWorld,
  startOAuth,
} from '../oauth-flow.js';

const start = useMcp();
const closing: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const c of closing.splice(0).reverse()) await c.close();
});

describe('every tool has its scope', () => {
  test("an API method's follows from its definition: money, else read for what changes nothing, message for what reaches a person, else write", () => {
    for (const def of METHODS as readonly MethodDef[]) {
      const scope = scopeOf(def);
      if (isMoney(def)) expect(scope, def.name).toBe('workspace:money');
      else if (def.annotations.readOnlyHint) expect(scope, def.name).toBe('workspace:read');
      else if (def.annotations.openWorldHint) expect(scope, def.name).toBe('workspace:message');
      else expect(scope, def.name).toBe('workspace:write');
    }
    const by = (name: string) => scopeOf((METHODS as readonly MethodDef[]).find((m) => m.name === name)!);
    expect([by('getContacts'), by('createOrUpdateContact'), by('addFundsToContactAccount'), by('sendMessage')]).toEqual([
      'workspace:read',
      'workspace:write',
      'workspace:money',
      'workspace:message',
    ]);
  });

  test('every tool the server serves names at least one scope, each a known one; what changes nothing needs read alone', async () => {
    const w = await start();
    expect(w.tools.length).toBeGreaterThan(30);
    for (const t of w.tools) {
      expect(t.scopes.length, t.name).toBeGreaterThan(0);
      for (const s of t.scopes) expect(SCOPES, t.name).toContain(s);
      if (t.annotations.readOnlyHint === true) expect(t.scopes, t.name).toEqual(['workspace:read']);
      else expect(t.scopes, t.name).not.toContain('workspace:read');
    }
    const scopes = Object.fromEntries(w.tools.map((t) => [t.name, t.scopes]));
    expect(scopes.findContacts).toEqual(['workspace:read']);
    expect(scopes.exportContacts).toEqual(['workspace:read']);
    expect(scopes.previewBulk).toEqual(['workspace:read']);
    expect(scopes.runBulk).toEqual(['workspace:write', 'workspace:money', 'workspace:message']);
  });
});

/** The names of the tools listed over `url`. */
async function listed(client: McpClient): Promise<string[]> {
  return (await client.listTools()).tools.map((t) => t.name).sort();
}

describe('the read-only door /mcp/read-only', () => {
  test.each(ERAS)('%s, --auth token: only the tools that change nothing, the instructions of those; /mcp still all', async (era) => {
    const w = await start();
    const http = await serveMcpHttp(w.context, w.tools, { host: '127.0.0.1', port: 0 });
    closing.push(http);
    const door = await connectHttp(era, `${http.url}/read-only`);
    closing.push(door);
    const read = w.tools.filter((t) => t.annotations.readOnlyHint === true).map((t) => t.name);
    expect(await listed(door)).toEqual([...read].sort());
    expect(door.getInstructions()).not.toMatch(/idempotency_key|runBulk/);
    const r = await door.callTool({ name: 'getContactAccounts', arguments: { contact_id: 100 } });
    expect(r.isError).toBeFalsy();
    // Not listed, and called anyway: refused with what it needs, nothing moved.
    const refused = await door.callTool({
      name: 'addFundsToContactAccount',
      arguments: { account_id: 500, amount: 5, description: 'Top-up', idempotency_key: 'k1' },
    });
    expect(refused.isError).toBe(true);
    expect(firstJson(refused)).toMatchObject({
      status: 403,
      code: 'insufficient_scope',
      message: expect.stringMatching(/workspace:money.*read-only address/),
    });
    const after = await door.callTool({ name: 'getContactAccounts', arguments: { contact_id: 100 } });
    expect(after.structuredContent).toEqual(r.structuredContent);
    const full = await connectHttp(era, http.url);
    closing.push(full);
    expect(await listed(full)).toContain('addFundsToContactAccount');
  });

  test('--auth key: each owner through the door gets the read tools; a session opened there is not found through /mcp', async () => {
    const w = await start();
    const owners: Record<string, number> = { 'alice-key': 1 };
    const http: McpHttpServer = await serveMcpHttpByKey(
      {
        owner: async (key) => (owners[key] ? { id: owners[key]! } : { status: 401, message: 'Unauthenticated.' }),
        served: async () => ({ ctx: w.context, tools: w.tools }),
      },
      { host: '127.0.0.1', port: 0 },
    );
    closing.push(http);
    const auth = { Authorization: 'Bearer alice-key' };
    const door = await connectHttp('2026-07-28', `${http.url}/read-only`, auth);
    closing.push(door);
    expect(await listed(door)).not.toContain('withdrawFundsFromContactAccount');
    expect(await listed(door)).toContain('getContacts');
    // A 2025-era session of the door, its id sent to /mcp: not found there.
    const init = await fetch(`${http.url}/read-only`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });
    await init.text();
    const sid = init.headers.get('mcp-session-id')!;
    expect(sid).toBeTruthy();
    const other = await fetch(http.url, {
      method: 'POST',
      headers: {
        ...auth,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Mcp-Session-Id': sid,
        'MCP-Protocol-Version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    await other.text();
    expect(other.status).toBe(404);
  });
});

describe("a person's grant, the deployment's --scopes and the door, together", () => {
  test('what a request reaches is what all three allow; a refusal says which one stands in the way', () => {
    const all = ['workspace:read', 'workspace:write', 'workspace:money', 'workspace:message'] as const;
    expect([...reachOf('full', all).scopes]).toEqual([...all]);
    expect([...reachOf('full', all, ['workspace:read', 'workspace:money']).scopes]).toEqual(['workspace:read', 'workspace:money']);
    expect([...reachOf('read-only', all, [...all]).scopes]).toEqual(['workspace:read']);
    expect([...reachOf('full', ['workspace:read', 'workspace:write'], [...all]).scopes]).toEqual(['workspace:read', 'workspace:write']);
    expect(reachOf('full', all, ['workspace:read']).why(['workspace:money'])).toMatch(/sign in again and tick that box/);
    expect(reachOf('full', ['workspace:read'], [...all]).why(['workspace:money'])).toMatch(/deployment does not allow \(its --scopes\)/);
    expect(reachOf('read-only', all).why(['workspace:write'])).toMatch(/read-only address/);
    // The same reach, the same key: the same tools and refusals are served.
    expect(reachOf('full', all, ['workspace:money', 'workspace:read']).key).toBe(
      reachOf('full', all, ['workspace:read', 'workspace:money']).key,
    );
  });

  test.each(ERAS)(
    '%s: a grant of read and money lists and runs exactly those tools; another is refused with 403 insufficient_scope',
    async (era) => {
      const w = await start();
      const grant = { id: 'g1', owner_id: 1, client_id: 'c1', client_name: 'App' };
      const everything = { ...grant, id: 'g2' };
      const http = await serveMcpHttpByKey(
        {
          owner: async () => ({ id: 1 }),
          served: async () => ({ ctx: w.context, tools: w.tools }),
          signIn: {
            hostName: '127.0.0.1',
            serve: async () => false,
            signedIn: async (header) =>
              header === 'Bearer tok'
                ? { grant, key: 'alice-key', scopes: ['workspace:read', 'workspace:money'] }
                : header === 'Bearer all'
                  ? { grant: everything, key: 'alice-key', scopes: ['workspace'] }
                  : { status: 401, headers: {}, body: '' },
            keyRefused: async () => ({ status: 401, headers: {}, body: '' }),
          },
        },
        { host: '127.0.0.1', port: 0 },
      );
      closing.push(http);
      const client = await connectHttp(era, http.url, { Authorization: 'Bearer tok' });
      closing.push(client);
      const names = await listed(client);
      const model = w.tools.filter(
        (t) => !(t._meta as { ui?: { visibility?: string[] } } | undefined)?.ui?.visibility?.every((v) => v === 'app'),
      );
      const want = model.filter((t) => t.scopes.includes('workspace:read') || t.scopes.includes('workspace:money')).map((t) => t.name);
      expect(names).toEqual(want.sort());
      expect(names).toContain('addFundsToContactAccount');
      expect(names).toContain('runBulk');
      expect(names).not.toContain('createOrUpdateContact');
      expect(client.getInstructions()).not.toMatch(/sendMessage/);
      const refused = await client.callTool({ name: 'sendMessage', arguments: { contact_id: 100, text: 'hi' } });
      expect(refused.isError).toBe(true);
      expect(firstJson(refused)).toMatchObject({
        status: 403,
        code: 'insufficient_scope',
        message: expect.stringMatching(/^sendMessage was not run\. It needs workspace:message, which the person did not grant/),
      });
      // The account, seen first as a model would (a money call needs an account it was shown).
      expect((await client.callTool({ name: 'getContactAccounts', arguments: { contact_id: 100 } })).isError).toBeFalsy();
      const moved = await client.callTool({
        name: 'addFundsToContactAccount',
        arguments: { account_id: 500, amount: 1, description: 'Thanks', idempotency_key: `g-${era}` },
      });
      expect(moved.isError, JSON.stringify(firstJson(moved))).toBeFalsy();
      // A message plan: previewBulk refuses it before anyone confirms; one planned under a wider
      // grant (the same person) is refused by runBulk before a step runs.
      const message = { selection: { bot_id: 10, tags: ['vip'] }, action: { type: 'sendMessage', text: 'Hello' } };
      expect(firstJson(await client.callTool({ name: 'previewBulk', arguments: message }))).toMatchObject({
        status: 403,
        code: 'insufficient_scope',
        message: expect.stringMatching(/^previewBulk was not run: a sendMessage plan\. It needs workspace:message/),
      });
      const wide = await connectHttp(era, http.url, { Authorization: 'Bearer all' });
      closing.push(wide);
      const planned = firstJson(await wide.callTool({ name: 'previewBulk', arguments: message }));
      expect(planned.data.plan_id).toEqual(expect.any(String));
      expect(firstJson(await client.callTool({ name: 'runBulk', arguments: { plan_id: planned.data.plan_id } }))).toMatchObject({
        status: 403,
        code: 'insufficient_scope',
      });
      expect(
        firstJson(
          await client.callTool({
            name: 'previewBulk',
            arguments: { ...message, action: { type: 'deposit', currency: 'USD', amount: 100, description: 'Bonus' } },
          }),
        ).data.plan_id,
      ).toEqual(expect.any(String));
    },
  );
});

describe('--scopes caps a deployment (the built CLI)', () => {
  test('--scopes workspace:read,workspace:write: no money or message tool listed; a top-up refused, naming --scopes; a bad scope is one line, exit 2', async () => {
    const started = await spawnAnnounced(
      ['mcp', '--db', seedDb(mcpFixture()), '--http', '--port', '0', '--scopes', 'workspace:read,workspace:write'],
      /(http:\/\/\S+\/mcp)/,
      cliEnv({ WORKSPACE_API_KEY: 'alice-key' }),
    );
    closing.push({ close: () => stop(started.proc) });
    const client = await connectHttp('2026-07-28', started.url);
    closing.push(client);
    const names = await listed(client);
    expect(names).toContain('createOrUpdateContact');
    expect(names).not.toContain('addFundsToContactAccount');
    expect(names).not.toContain('sendMessage');
    // Valid arguments for an account it was shown: only the scope stands in the way.
    await client.callTool({ name: 'getContactAccounts', arguments: { contact_id: 100 } });
    const r = await client.callTool({
      name: 'addFundsToContactAccount',
      arguments: { account_id: 500, amount: 1, description: 'x', idempotency_key: 'cap-1' },
    });
    expect(firstJson(r)).toMatchObject({ status: 403, code: 'insufficient_scope', message: expect.stringMatching(/its --scopes/) });
    const bad = runCli(['mcp', '--http', '--scopes', 'workspace:admin']);
    expect(bad.status).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/--scopes takes scopes .* not workspace:admin/);
  });
});

/** `--auth oauth` through the built CLI over each backend: its public URL, and its audit trail as the operator reads it. */
interface SignInRun {
  base: string;
  mcp: string;
  trail(): Array<Record<string, unknown>>;
  close(): Promise<void>;
}

const jsonLines = (text: string) =>
  text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** The built CLI with --auth oauth over a SQLite file, a PostgreSQL database (`pgUrl`), or (remote) our own `serve` over SQLite. */
async function signInRun(backend: 'sqlite' | 'postgres' | 'remote', pgUrl?: () => Promise<string>): Promise<SignInRun> {
  if (backend !== 'remote') {
    const run = await startOAuth(await seedWorld(backend === 'postgres' ? await pgUrl!() : undefined));
    return { ...run, trail: () => jsonLines(runCli(['admin', 'audit', '--db', run.db]).stdout) };
  }
  const api = await spawnServe(['--db', await seedWorld(), '--rate-limit', '0']);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const dataDir = tempDir();
  const mcp = await spawnAnnounced(
    ['mcp', '--http', '--auth', 'oauth', '--public-url', base, '--port', String(port), '--remote', api.baseUrl],
    /(http:\/\/\S+\/mcp)/,
    cliEnv({ WORKSPACE_DATA_DIR: dataDir, WORKSPACE_SECRET: 'cd'.repeat(32) }),
  );
  return {
    base,
    mcp: `${base}/mcp`,
    // The remote mode's trail: a JSON-lines file in its data folder.
    trail: () => jsonLines(readFileSync(join(dataDir, 'audit.jsonl'), 'utf8')),
    close: async () => {
      await stop(mcp.proc);
      await stop(api.proc);
    },
  };
}

describe('--auth oauth, through the built CLI: what the person ticks is what their assistant gets', () => {
  const pg = usePostgres();
  const cases = (['sqlite', 'postgres', 'remote'] as const).flatMap((b) => ERAS.map((era) => [b, era] as const));
  test.each(cases)(
    '%s, %s: read and write ticked: no money tool listed, a top-up refused with the box to tick; the door lists read alone',
    async (backend, era) => {
      const run = await signInRun(backend, () => pg.server().database());
      closing.push(run);
      const id = await register(run.base);
      const { verifier, challenge } = pkce();
      const params = authorizeParams(run.base, id, challenge, { scope: 'workspace' });
      const page = await authorizeGet(run.base, params);
      const back = await consentTicked(run.base, consentForm(page), 'alice-key', ['workspace:read', 'workspace:write']);
      const code = back.location!.searchParams.get('code')!;
      const t = await exchange(run.base, { code, code_verifier: verifier, client_id: id, redirect_uri: REDIRECT });
      const tokens = JSON.parse(t.text) as { access_token: string; scope: string };
      expect(tokens.scope.split(' ').sort()).toEqual(['workspace:read', 'workspace:write']);
      const client = await connectHttp(era, run.mcp, { Authorization: `Bearer ${tokens.access_token}` });
      closing.push(client);
      const names = await listed(client);
      expect(names).toContain('createOrUpdateContact');
      expect(names).not.toContain('addFundsToContactAccount');
      expect(names).not.toContain('sendMessage');
      expect(client.getInstructions()).not.toMatch(/idempotency_key/);
      await client.callTool({ name: 'getContactAccounts', arguments: { contact_id: 100 } });
      const r = await client.callTool({
        name: 'addFundsToContactAccount',
        arguments: { account_id: 500, amount: 100, description: 'x', idempotency_key: `e2e-${backend}-${era}` },
      });
      expect(firstJson(r)).toMatchObject({
        status: 403,
        code: 'insufficient_scope',
        message: expect.stringMatching(/sign in again and tick that box/),
      });
      // The audit trail names the grant's scopes beside its client.
      const tagged = await client.callTool({ name: 'attachTagToContact', arguments: { contact_id: 100, name: 'scoped' } });
      expect(tagged.isError, JSON.stringify(firstJson(tagged))).toBeFalsy();
      const trail = run.trail();
      expect(trail.find((e) => e.tool === 'attachTagToContact')).toMatchObject({
        oauth_client: { id },
        grant_scopes: ['workspace:read', 'workspace:write'],
      });
      // The door: a sign-in for its resource holds read alone.
      const doorParams = authorizeParams(run.base, id, challenge, { resource: `${run.base}/mcp/read-only` });
      const doorPage = await authorizeGet(run.base, doorParams);
      const doorBack = await consentTicked(run.base, consentForm(doorPage), 'alice-key', ['workspace:read']);
      const doorCode = doorBack.location!.searchParams.get('code')!;
      const dt = await exchange(run.base, {
        code: doorCode,
        code_verifier: verifier,
        client_id: id,
        redirect_uri: REDIRECT,
        resource: `${run.base}/mcp/read-only`,
      });
      const doorTokens = JSON.parse(dt.text) as { access_token: string; scope: string };
      expect(doorTokens.scope).toBe('workspace:read');
      const door = await connectHttp(era, `${run.mcp}/read-only`, { Authorization: `Bearer ${doorTokens.access_token}` });
      closing.push(door);
      const doorNames = await listed(door);
      expect(doorNames).toContain('getContacts');
      expect(doorNames).not.toContain('createOrUpdateContact');
    },
  );
});

describe('a bulk plan outside the reach leaves nothing behind', () => {
  const all = ['workspace:read', 'workspace:write', 'workspace:money', 'workspace:message'] as const;
  const extraFor = (granted: readonly string[]) => ({
    signal: new AbortController().signal,
    progress: async () => {},
    elicit: { canAsk: false, reply: () => undefined, state: () => undefined, ask: () => Promise.reject(new Error('no questions')) },
    reach: reachOf('full', all, granted),
  });

  test("the Bulk plan view's confirmation under a grant without the plan's scope records no confirmation", async () => {
    const w = await start();
    const tool = (name: string) => w.tools.find((t) => t.name === name)!;
    const planned = firstJson(
      (await tool('previewBulk').run(
        { selection: { bot_id: 10, tags: ['vip'] }, action: { type: 'deposit', currency: 'USD', amount: 100, description: 'Bonus' } },
        extraFor([...all]),
      )) as never,
    );
    const planId = planned.data.plan_id as string;
    const refused = firstJson(
      (await tool('confirmBulkPlan').run({ plan_id: planId }, extraFor(['workspace:read', 'workspace:write']))) as never,
    );
    expect(refused).toMatchObject({ status: 403, code: 'insufficient_scope', message: expect.stringMatching(/workspace:money/) });
    expect((await w.context.plans!.get(planId))!.confirmation).toBeNull();
  });

  test('a deposit plan that opens missing accounts needs write too: refused under read and money, made under read, money and write', async () => {
    const w = await start();
    const preview = w.tools.find((t) => t.name === 'previewBulk')!;
    const args = {
      selection: { bot_id: 10, tags: ['vip'] },
      action: { type: 'deposit', currency: 'USD', amount: 100, description: 'Bonus' },
      open_missing_accounts: true,
    };
    expect(firstJson((await preview.run(args, extraFor(['workspace:read', 'workspace:money']))) as never)).toMatchObject({
      status: 403,
      code: 'insufficient_scope',
      message: expect.stringMatching(/^previewBulk was not run: a deposit plan that opens missing accounts\. It needs workspace:write/),
    });
    expect(
      firstJson((await preview.run(args, extraFor(['workspace:read', 'workspace:money', 'workspace:write']))) as never).data.plan_id,
    ).toEqual(expect.any(String));
  });
});
