/**
 * Confirmation that fails closed: "above a cap, when the client can elicit ... ask the person
 * with a form elicitation that names the contact, the account, the amount in major units and
 * the balance after. Accept moves the money once; decline or cancel moves nothing and the
 * result says so"; "when the client cannot elicit: move nothing ... never a token"; "an
 * accepted confirmation moves money exactly once even when the call is retried". With the
 * SDK's real clients of both eras, in-memory and over HTTP; on the test project's backend.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { tapLog } from '../../../src/common/log.js';
import { serveMcpHttp } from '../../../src/mcp/serve/http.js';
import type { McpContext } from '../../../src/mcp/context.js';
import { QUESTION_TTL_SECONDS } from '../../../src/mcp/money/elicit.js';
import { moneyCall } from '../../../src/mcp/tools/method-tool.js';
import type { ToolSpec } from '../../../src/mcp/tool-spec.js';
import { CLI, cliEnv } from '../../helpers/cli.js';
import { seedStore, TEST_STORE } from '../../helpers/store.js';
import { accountFixture, ANN } from '../../helpers/world.js';
import {
  connectHttp,
  connectInMemory,
  connectStdio,
  ERAS,
  type ConnectOptions,
  type ElicitAnswer,
  type Era,
  type McpClient,
} from '../clients.js';
import { firstJson, TEST_BACKEND, useMcp, type McpWorld, type StartOptions } from '../harness.js';

const start = useMcp();
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Анна Каренина's USD account 500 holds 25.00; this server caps a call at 5.00. */
const FIXTURE = { ...accountFixture([{ id: 500, currency: 'USD', amount: 2500 }]), contacts: [{ ...ANN, name: 'Анна Каренина' }] };
const CAPS = { maxAmount: { '*': '5.00' } };
const QUESTION = "Top up Анна Каренина's USD account 500 by 10.00 → 35.00?";
const topUp = (amount: number, extra: Record<string, unknown> = {}) => ({ account_id: 500, amount, description: 'Bonus', ...extra });

async function world(o: StartOptions = {}): Promise<McpWorld> {
  return start({ fixture: FIXTURE, money: CAPS, ...o });
}

/** A client of `era` on `w`, in-memory or over HTTP (2026-07-28: stateless requests). */
async function client(w: McpWorld, era: Era, o: ConnectOptions = {}, how: 'in-memory' | 'http' = 'in-memory'): Promise<McpClient> {
  let c: McpClient;
  if (how === 'in-memory') c = await connectInMemory(era, (rc, io) => w.factory(rc, io), o);
  else {
    const http = await serveMcpHttp(w.context, w.tools, { host: '127.0.0.1', port: 0 });
    cleanups.push(() => http.close());
    c = await connectHttp(era, http.url, {}, o);
  }
  cleanups.push(() => c.close());
  return c;
}

/** The account's balance; the read also shows the server who holds account 500. */
async function balance(c: McpClient): Promise<number> {
  // Found as a model finds a person: findContacts also tells the server the contact's name.
  const found = await c.callTool({ name: 'findContacts', arguments: { query: 'Анна' } });
  expect(found.isError, JSON.stringify(found.content)).toBeFalsy();
  const r = await c.callTool({ name: 'getContactAccounts', arguments: { contact_id: 100 } });
  return (r.structuredContent as { data: Array<{ amount: number }> }).data[0]!.amount;
}

async function audit(c: McpClient): Promise<any[]> {
  const read = await c.readResource({ uri: 'workspace://audit?tool=addFundsToContactAccount' });
  return JSON.parse((read.contents[0] as { text: string }).text).data;
}

/** Answers every question with `reply`, keeping the questions asked. */
function answering(c: McpClient, reply: ReturnType<ElicitAnswer> | (() => Promise<never>)): string[] {
  const asked: string[] = [];
  c.answer(((q: { message: string }) => {
    asked.push(q.message);
    return typeof reply === 'function' ? reply() : reply;
  }) as ElicitAnswer);
  return asked;
}

const YES = { action: 'accept', content: { confirm: true } } as const;
const BY = (era: Era) => expect.stringMatching(era === '2025-11-25' ? /^the person, in test 1\.0\.0/ : /^the person, in test 1\.0\.0$/);

describe(`confirmation of a money call over a cap (${TEST_BACKEND})`, () => {
  test.each(ERAS)(
    '%s: accepted, the question names contact, account, amount and balance after; the money moves once; a retry with the same key replays without asking',
    async (era) => {
      const w = await world();
      const c = await client(w, era);
      expect(await balance(c)).toBe(2500);
      const asked = answering(c, YES);
      const r = await c.callTool({ name: 'addFundsToContactAccount', arguments: topUp(1000, { idempotency_key: 'gift-1' }) });
      expect(r.isError).toBeFalsy();
      expect((r.structuredContent as any).data.amount).toBe(3500);
      expect(asked).toHaveLength(1);
      expect(asked[0]!.split('\n')[0]).toBe(QUESTION);
      expect(asked[0]).toContain("over this server's cap of 5.00 USD per call");
      // The same call again (a retry after a lost answer): the kept result, nothing moved, nobody asked.
      const again = await c.callTool({ name: 'addFundsToContactAccount', arguments: topUp(1000, { idempotency_key: 'gift-1' }) });
      expect(again.structuredContent).toEqual({ ...(r.structuredContent as object), replayed: true });
      expect(asked).toHaveLength(1);
      expect(await balance(c)).toBe(3500);
      // The trail: the replay, the accepted call (by whom), and the question before it.
      const [replay, moved, question] = await audit(c);
      expect(replay).toMatchObject({ status: 200, replayed: true, idempotency_key: 'gift-1' });
      expect(moved).toMatchObject({ status: 200, replayed: false, confirmation: { how: 'elicitation accepted', by: BY(era) } });
      expect(question).toMatchObject({
        status: 422,
        code: 'confirmation_required',
        confirmation: { how: 'elicitation asked, no answer yet' },
      });
    },
  );

  test.each([
    ['declined', { action: 'decline' }, 'elicitation declined', /declined to top up Анна Каренина's USD account 500 by 10\.00 USD/],
    ['cancelled', { action: 'cancel' }, 'elicitation cancelled', /closed the question to top up .* without confirming it/],
    ['accepted without the box ticked', { action: 'accept', content: { confirm: false } }, 'elicitation declined', /declined/],
  ] as const)(
    "%s, in both eras: nothing moves, the result says so and that it is the person's decision",
    async (_name, reply, how, said) => {
      const w = await world();
      for (const era of ERAS) {
        const c = await client(w, era);
        await balance(c);
        const asked = answering(c, reply as ReturnType<ElicitAnswer>);
        const r = await c.callTool({ name: 'addFundsToContactAccount', arguments: topUp(1000) });
        expect(asked).toHaveLength(1);
        expect(r.isError).toBe(true);
        const body = firstJson(r);
        expect(body).toMatchObject({ status: 422, code: 'confirmation_declined', message: expect.stringMatching(said) });
        expect(body.message).toMatch(/Nothing was moved\. This is the person's decision.*do not call again unless they ask you to/);
        expect(Object.keys(body).sort()).toEqual(['code', 'errors', 'message', 'status']);
        expect(await balance(c)).toBe(2500);
        expect((await audit(c))[0]).toMatchObject({ status: 422, code: 'confirmation_declined', confirmation: { how, by: BY(era) } });
      }
    },
  );

  test.each(ERAS)('%s: the person never answers; the call times out and nothing moves', async (era) => {
    const w = await world();
    const c = await client(w, era);
    await balance(c);
    // 2025: the question stays open until the client's request times out (the server is told
    // the call was cancelled). 2026-07-28: the client itself gives up on the unanswered question.
    const never = () =>
      new Promise<never>((_, reject) => (era === '2025-11-25' ? undefined : setTimeout(() => reject(new Error('no answer')), 300)));
    const asked = answering(c, never);
    await expect(c.callTool({ name: 'addFundsToContactAccount', arguments: topUp(1000) }, { timeout: 500 })).rejects.toThrow();
    expect(asked).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(await balance(c)).toBe(2500);
    const trail = await audit(c);
    expect(trail.map((e) => e.confirmation?.how)).toEqual(['elicitation asked, no answer yet']);
  });

  test.each(ERAS.flatMap((era) => (['in-memory', 'http'] as const).map((how) => [era, how] as const)))(
    '%s over %s, a client that declares no elicitation: refused, nothing moves, the result says what the person can do, no token',
    async (era, how) => {
      const w = await world();
      const c = await client(w, era, { elicitation: false }, how);
      await balance(c);
      const r = await c.callTool({ name: 'addFundsToContactAccount', arguments: topUp(1000) });
      expect(r.isError).toBe(true);
      const body = firstJson(r);
      expect(body).toMatchObject({ status: 422, code: 'confirmation_required' });
      expect(body.message).toMatch(/Nothing was moved\. The person can confirm this call in an MCP client that supports elicitation/);
      expect(body.message).toMatch(/--max-amount, --max-daily or --money-policy/);
      expect(Object.keys(body).sort()).toEqual(['code', 'errors', 'message', 'status']);
      expect(await balance(c)).toBe(2500);
      expect((await audit(c))[0].confirmation).toEqual({
        how: 'not possible: the client cannot ask the person (no elicitation)',
        by: expect.stringMatching(/^test 1\.0\.0/),
      });
    },
  );

  test.each(ERAS)('%s over HTTP: accepted, the money moves once', async (era) => {
    const w = await world();
    const c = await client(w, era, {}, 'http');
    await balance(c);
    const asked = answering(c, YES);
    const r = await c.callTool({ name: 'addFundsToContactAccount', arguments: topUp(1000) });
    expect((r.structuredContent as any).data.amount).toBe(3500);
    expect(asked.map((q) => q.split('\n')[0])).toEqual([QUESTION]);
    expect(await balance(c)).toBe(3500);
  });

  test.each(ERAS)(
    '%s: 20 concurrent calls against a daily cap of 1.00: declined ones move nothing, accepted ones are counted exactly',
    async (era) => {
      const w = await world({ money: { maxDaily: { '*': '1.00' } } });
      const c = await client(w, era);
      await balance(c);
      const burst = (prefix: string) =>
        Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            c.callTool({ name: 'addFundsToContactAccount', arguments: topUp(30, { idempotency_key: `${prefix}-${i}` }) }),
          ),
        );
      const no = answering(c, { action: 'decline' });
      const declined = await burst('no');
      expect(declined.filter((r) => !r.isError)).toHaveLength(3);
      expect(no).toHaveLength(17);
      expect(await balance(c)).toBe(2590);
      // Said yes to, every call moves once; all of them count toward the window.
      const yes = answering(c, YES);
      const accepted = await burst('yes');
      expect(accepted.filter((r) => r.isError)).toEqual([]);
      expect(yes).toHaveLength(20);
      expect(await balance(c)).toBe(3190);
      // The window holds 0.90 + 6.00: even one cent more asks.
      const cent = answering(c, { action: 'decline' });
      await c.callTool({ name: 'addFundsToContactAccount', arguments: topUp(1) });
      expect(cent).toHaveLength(1);
    },
  );

  test.each(ERAS)('%s, --no-confirm: nobody is asked, the money moves, the trail says so', async (era) => {
    const w = await world({ money: { ...CAPS, noConfirm: true } });
    const c = await client(w, era);
    await balance(c);
    const asked = answering(c, { action: 'decline' });
    const r = await c.callTool({ name: 'addFundsToContactAccount', arguments: topUp(1000) });
    expect(r.isError).toBeFalsy();
    expect(asked).toEqual([]);
    expect(await balance(c)).toBe(3500);
    expect((await audit(c))[0].confirmation).toEqual({ how: 'not asked (--no-confirm)', by: 'the server operator' });
  });

  test.runIf(TEST_BACKEND === 'local')(
    'a contact the answers never named is named from the contact search (the local database)',
    async () => {
      const w = await world();
      const c = await client(w, '2026-07-28');
      await c.callTool({ name: 'getContactAccounts', arguments: { contact_id: 100 } });
      const asked = answering(c, { action: 'decline' });
      await c.callTool({ name: 'addFundsToContactAccount', arguments: topUp(1000) });
      expect(asked.map((q) => q.split('\n')[0])).toEqual([QUESTION]);
    },
  );

  test('moneyCall with a confirmation given elsewhere (an app view): moves over the cap without asking, once per key, recorded so', async () => {
    let ctx: McpContext | undefined;
    // A test-only stand-in for an MCP Apps view's commit tool (app-only there, never the model's).
    const commit: ToolSpec = {
      name: 'commitTest',
      title: 'Commit (test only)',
      description: 'Tops up as confirmed in a view.',
      inputSchema: { type: 'object' },
      annotations: {},
      scopes: ['workspace:write'],
      run: (args, extra) => moneyCall(ctx!, 'addFundsToContactAccount', args, extra, { how: 'app view', by: 'the person, in a test view' }),
    };
    const w = await world({ extraTools: [commit] });
    ctx = w.context;
    const c = await client(w, ERAS[1]!);
    await balance(c);
    const asked = answering(c, { action: 'decline' });
    // Unconfirmed, the same function decides "needs confirmation" (asks, and here is declined).
    expect(firstJson(await c.callTool({ name: 'addFundsToContactAccount', arguments: topUp(1000) })).code).toBe('confirmation_declined');
    for (let i = 0; i < 2; i++) {
      const r = await c.callTool({ name: 'commitTest', arguments: topUp(1000, { idempotency_key: 'view-1' }) });
      expect((r.structuredContent as any).data.amount).toBe(3500);
    }
    expect(asked).toHaveLength(1);
    expect(await balance(c)).toBe(3500);
    const [replay, moved] = await audit(c);
    expect(replay).toMatchObject({ replayed: true });
    expect(moved).toMatchObject({ status: 200, confirmation: { how: 'app view', by: 'the person, in a test view' } });
  });

  test('a debit over the balance is refused as insufficient_funds before anyone is asked', async () => {
    const w = await world();
    const c = await client(w, ERAS[0]!);
    await balance(c);
    const asked = answering(c, YES);
    const r = await c.callTool({ name: 'withdrawFundsFromContactAccount', arguments: topUp(3000) });
    expect(firstJson(r).code).toBe('insufficient_funds');
    expect(asked).toEqual([]);
    expect(await balance(c)).toBe(2500);
  });
});

describe(`the gate reads numbers as the API does (${TEST_BACKEND})`, () => {
  // The API's `integer` rule takes "20000" as 20000, as Laravel does: so must the caps.
  test.each([
    ['an amount sent as text', { amount: '20000' }],
    ['an account id sent as text', { account_id: '500', amount: 1000 }],
  ])('%s, over the cap, from a client that cannot ask: refused, nothing moves, the trail says why', async (_name, args) => {
    const w = await world();
    const c = await client(w, ERAS[0]!, { elicitation: false });
    await balance(c);
    const r = await c.callTool({ name: 'addFundsToContactAccount', arguments: { ...topUp(0), ...args } });
    expect(firstJson(r)).toMatchObject({ status: 422, code: 'confirmation_required' });
    expect(await balance(c)).toBe(2500);
    expect((await audit(c))[0].confirmation).toMatchObject({ how: 'not possible: the client cannot ask the person (no elicitation)' });
  });

  test('under the cap, text counts in the 24 h window like a number; what the API would not take as an integer is refused', async () => {
    const w = await world({ money: { maxDaily: { '*': '5.00' } } });
    const c = await client(w, ERAS[1]!, { elicitation: false });
    await balance(c);
    expect(
      (await c.callTool({ name: 'addFundsToContactAccount', arguments: topUp(0, { account_id: '500', amount: '400' }) })).isError,
    ).toBeFalsy();
    // Strings are trimmed first, as Laravel's middleware does.
    expect((await c.callTool({ name: 'addFundsToContactAccount', arguments: topUp(0, { amount: ' 50 ' }) })).isError).toBeFalsy();
    expect(await balance(c)).toBe(2950);
    expect(firstJson(await c.callTool({ name: 'addFundsToContactAccount', arguments: topUp(56) })).code).toBe('confirmation_required');
    for (const amount of ['1.5', '1e2', true, null]) {
      const r = firstJson(await c.callTool({ name: 'addFundsToContactAccount', arguments: topUp(0, { amount }) }));
      expect(r, String(amount)).toMatchObject({
        status: 422,
        errors: { amount: [expect.stringMatching(/^The amount field (must be an integer|is required)\.$/)] },
      });
    }
    expect(await balance(c)).toBe(2950);
  });
});

describe.runIf(TEST_BACKEND === 'remote')('remote mode: the move and its record', () => {
  test("the audit line cannot be written: the move's real result, with a warning (and a line on stderr)", async () => {
    const w = await world();
    const c = await client(w, ERAS[0]!, { elicitation: false });
    await balance(c);
    const file = join(w.context.dataDir, 'audit.jsonl');
    rmSync(file, { force: true });
    mkdirSync(file);
    const logged: string[] = [];
    tapLog((level, _obj, msg) => void logged.push(`${level} ${msg}`));
    cleanups.push(() => tapLog(undefined));
    const r = await c.callTool({ name: 'addFundsToContactAccount', arguments: topUp(100) });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({
      data: { amount: 2600 },
      warnings: [expect.stringMatching(/audit trail could not be written/)],
    });
    expect(logged).toContain('error audit line not written');
    expect(await balance(c)).toBe(2600);
  });

  test('a money tool that fails unexpectedly says the outcome is unknown and what to check, not a bare Server Error', async () => {
    const w = await world({
      wrap: (b) => ({
        call: async (method, params, opts) => {
          const res = await b.call(method, params, opts);
          if (method === 'addFundsToContactAccount') throw new Error('lost after the move');
          return res;
        },
        close: () => b.close(),
      }),
    });
    const c = await client(w, ERAS[0]!, { elicitation: false });
    await balance(c);
    const body = firstJson(await c.callTool({ name: 'addFundsToContactAccount', arguments: topUp(100, { idempotency_key: 'k-1' }) }));
    expect(body).toMatchObject({ code: 'outcome_unknown' });
    expect(body.message).toMatch(/getContactAccounts/);
    expect(await balance(c)).toBe(2600);
  });
});

describe.runIf(TEST_BACKEND === 'local')('the built CLI over stdio, `mcp --max-amount 5`', () => {
  test.each(ERAS)('%s: a top-up over the cap is asked of the person and, accepted, moves once', async (era) => {
    const db = seedStore(FIXTURE);
    // On PostgreSQL the secret comes from the environment (every instance has the same one).
    const secret: Record<string, string> = TEST_STORE === 'postgres' ? { WORKSPACE_SECRET: 'ab'.repeat(32) } : {};
    const c = await connectStdio(era, {
      command: process.execPath,
      args: [CLI, 'mcp', '--db', db, '--max-amount', '5'],
      env: cliEnv({ WORKSPACE_API_KEY: 'alice-key', ...secret }),
      stderr: 'pipe',
    });
    cleanups.push(() => c.close());
    expect(await balance(c)).toBe(2500);
    const asked = answering(c, YES);
    const r = await c.callTool({ name: 'addFundsToContactAccount', arguments: topUp(1000) });
    expect((r.structuredContent as any).data.amount).toBe(3500);
    expect(asked.map((q) => q.split('\n')[0])).toEqual([QUESTION]);
    expect((await audit(c))[0]).toMatchObject({ owner_id: 1, confirmation: { how: 'elicitation accepted' } });
  });
});

describe('the 2026-07-28 wire, raw: the sealed state binds the exact call and expires', () => {
  const ENVELOPE = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
    'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
  };

  async function serve() {
    const w = await world();
    const http = await serveMcpHttp(w.context, w.tools, { host: '127.0.0.1', port: 0 });
    cleanups.push(() => http.close());
    let id = 0;
    const call = async (name: string, args: Record<string, unknown>, more: Record<string, unknown> = {}) => {
      const res = await fetch(http.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2026-07-28',
          'Mcp-Method': 'tools/call',
          'Mcp-Name': name,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: ++id,
          method: 'tools/call',
          params: { name, arguments: args, ...more, _meta: ENVELOPE },
        }),
      });
      const text = await res.text();
      return res.headers.get('content-type')?.includes('text/event-stream')
        ? JSON.parse(
            text
              .split('\n')
              .filter((l) => l.startsWith('data: '))
              .at(-1)!
              .slice(6),
          )
        : JSON.parse(text);
    };
    const amount = async () => {
      await call('findContacts', { query: 'Анна' });
      return (await call('getContactAccounts', { contact_id: 100 })).result.structuredContent.data[0].amount;
    };
    return { call, amount };
  }

  const yes = { confirm: { action: 'accept', content: { confirm: true } } };

  test('a "yes" counts for the call it was asked for only; the same answered request twice moves once; an expired state is refused', async () => {
    const { call, amount } = await serve();
    expect(await amount()).toBe(2500);
    const first = (await call('addFundsToContactAccount', topUp(1000))).result;
    expect(first.resultType).toBe('input_required');
    expect(first.inputRequests.confirm.params.message.split('\n')[0]).toBe(QUESTION);
    // The "yes" to 10.00 does not carry over to 99.00, nor to a debit: asked again, nothing moved.
    const other = (await call('addFundsToContactAccount', topUp(9900), { requestState: first.requestState, inputResponses: yes })).result;
    expect(other.resultType).toBe('input_required');
    expect(other.inputRequests.confirm.params.message).toMatch(/by 99\.00 → 124\.00\?/);
    expect(
      (await call('withdrawFundsFromContactAccount', topUp(1000), { requestState: first.requestState, inputResponses: yes })).result
        .resultType,
    ).toBe('input_required');
    expect(await amount()).toBe(2500);
    // Answered: moved; the same answered request again (a client's retry) replays.
    const done = (await call('addFundsToContactAccount', topUp(1000), { requestState: first.requestState, inputResponses: yes })).result;
    expect(done.structuredContent.data.amount).toBe(3500);
    const twice = (await call('addFundsToContactAccount', topUp(1000), { requestState: first.requestState, inputResponses: yes })).result;
    expect(twice.structuredContent).toMatchObject({ replayed: true, data: { amount: 3500 } });
    expect(await amount()).toBe(2500 + 1000);
    // A state past its time is refused before the tool runs.
    const late = (await call('addFundsToContactAccount', topUp(800))).result;
    const now = Date.now();
    const clock = vi.spyOn(Date, 'now').mockReturnValue(now + (QUESTION_TTL_SECONDS + 60) * 1000);
    try {
      const expired = await call('addFundsToContactAccount', topUp(800), { requestState: late.requestState, inputResponses: yes });
      expect(expired.error).toMatchObject({ code: -32602, message: 'Invalid or expired requestState' });
    } finally {
      clock.mockRestore();
    }
    expect(await amount()).toBe(3500);
  });

  test.each([
    ['without', {}],
    ['with', { idempotency_key: 'ask-1' }],
  ])(
    'a "no" is final for its question (%s an idempotency key): the same request answered "yes" afterwards moves nothing',
    async (_name, key) => {
      const { call, amount } = await serve();
      await amount();
      const first = (await call('addFundsToContactAccount', topUp(1000, key))).result;
      expect(first.resultType).toBe('input_required');
      const answer = (reply: object) =>
        call('addFundsToContactAccount', topUp(1000, key), { requestState: first.requestState, inputResponses: { confirm: reply } });
      const no = (await answer({ action: 'decline' })).result;
      expect(JSON.parse(no.content[0].text)).toMatchObject({ code: 'confirmation_declined' });
      for (const reply of [yes.confirm, { action: 'cancel' }, yes.confirm]) {
        const again = (await answer(reply)).result;
        expect(again.isError).toBe(true);
        expect(JSON.parse(again.content[0].text)).toMatchObject({ code: 'confirmation_declined' });
      }
      expect(await amount()).toBe(2500);
    },
  );

  test('a 2026-07-28 request whose capabilities declare no elicitation is refused with the explanation, not a protocol error', async () => {
    const { call, amount } = await serve();
    await amount();
    const saved = ENVELOPE['io.modelcontextprotocol/clientCapabilities'];
    (ENVELOPE as Record<string, unknown>)['io.modelcontextprotocol/clientCapabilities'] = {};
    try {
      const r = (await call('addFundsToContactAccount', topUp(1000))).result;
      expect(r.isError).toBe(true);
      expect(JSON.parse(r.content[0].text)).toMatchObject({ code: 'confirmation_required' });
    } finally {
      ENVELOPE['io.modelcontextprotocol/clientCapabilities'] = saved;
    }
    expect(await amount()).toBe(2500);
  });
});
