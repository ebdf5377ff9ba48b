/**
 * The tools over the SDK's real Client and InMemoryTransport: one tool per catalog method,
 * each called with a success and with errors, in the contract's result shapes.
 */
import { describe, expect, test } from 'vitest';
import { METHODS, findMethod } from '../../../src/api/catalog.js';
import type { MethodDef } from '../../../src/api/define.js';
import { isListMethod } from '../../../src/mcp/tools/method-tool.js';
import type { Backend } from '../../../src/api/backend.js';
import { firstJson, useMcp, type McpWorld } from '../harness.js';
import { SAMPLES, type SampleState } from '../samples.js';

const DEFS = METHODS as readonly MethodDef[];
const startMcp = useMcp();

/**
 * The tools, written out: one per API method in the catalog's order, then the composite tools. Read
 * from nowhere else, so a tool that goes missing (or a method that lands without a tool) fails.
 */
const TOOLS = [
  'getMe',
  'getBalance',
  'getListSchemas',
  'getListSchema',
  'createListSchema',
  'deleteListSchema',
  'addListSchemaField',
  'deleteListSchemaField',
  'getListItems',
  'addListItem',
  'updateListItem',
  'deleteListItem',
  'getContactAccounts',
  'addContactAccount',
  'deleteContactAccount',
  'addFundsToContactAccount',
  'withdrawFundsFromContactAccount',
  'getContacts',
  'getNumberOfContacts',
  'createOrUpdateContact',
  'getContactVariables',
  'setContactVariable',
  'deleteContactVariable',
  'getBotTags',
  'getContactTags',
  'attachTagToContact',
  'detachTagFromContact',
  'sendMessage',
  'getReferrers',
  'getReferrals',
  'getCountReferrals',
  'decodeShortLink',
  'exportContacts',
  'findContacts',
  'getWorkspace',
  'previewBulk',
  'runBulk',
];

function countingBackend(calls: string[]) {
  return (b: Backend): Backend => ({
    call: (m, p, o) => {
      calls.push(m);
      return b.call(m, p, o);
    },
    close: () => b.close(),
  });
}

describe('tools/list', () => {
  test('one tool per API method, named as the method; aliases are not tools', async () => {
    const world = await startMcp();
    const { tools } = await world.client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(TOOLS);
    expect(DEFS.map((d) => d.name)).toEqual(TOOLS.slice(0, -5));
    expect(DEFS.flatMap((d) => d.aliases ?? [])).toEqual(['createContactAccount']);
    expect(names).not.toContain('createContactAccount');
  });

  test('every tool has a title, a description, strict input, an output schema (unless it answers 204) and all four annotations', async () => {
    const world = await startMcp();
    const { tools } = await world.client.listTools();
    for (const t of tools) {
      expect(t.title, t.name).toBeTruthy();
      expect((t.description ?? '').length, t.name).toBeGreaterThan(20);
      expect(t.inputSchema.type).toBe('object');
      expect((t.inputSchema as any).additionalProperties, t.name).toBe(false);
      if (findMethod(t.name)?.status === 204) expect(t.outputSchema, t.name).toBeUndefined();
      else expect(t.outputSchema?.type, t.name).toBe('object');
      for (const k of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
        expect(typeof t.annotations?.[k], `${t.name}.${k}`).toBe('boolean');
      }
      const def = findMethod(t.name);
      if (def) {
        expect(t.annotations).toMatchObject(def.annotations);
        expect(Object.keys(t.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(Object.keys(def.params)));
      }
    }
    // Titles tell tools apart: getContacts, a page of contacts, was once titled as an export.
    const titles = tools.map((t) => t.title);
    expect(new Set(titles).size).toBe(titles.length);
    expect(tools.filter((t) => /export/i.test(t.title ?? '')).map((t) => t.name)).toEqual(['exportContacts']);
  });

  test('the money tools take an optional idempotency_key; no other tool does', async () => {
    const world = await startMcp();
    const { tools } = await world.client.listTools();
    for (const t of tools) {
      const has = Object.hasOwn(t.inputSchema.properties ?? {}, 'idempotency_key');
      expect(has, t.name).toBe(t.name === 'addFundsToContactAccount' || t.name === 'withdrawFundsFromContactAccount');
      expect(t.inputSchema.required ?? []).not.toContain('idempotency_key');
    }
  });

  test('only list tools whose definition names a whole-set tool point to it', async () => {
    const world = await startMcp();
    const { tools } = await world.client.listTools();
    const lists = DEFS.filter(isListMethod).map((d) => d.name);
    expect(lists).toEqual(expect.arrayContaining(['getContacts', 'getContactAccounts', 'getContactTags', 'attachTagToContact']));
    for (const t of tools.filter((x) => lists.includes(x.name))) {
      const whole = findMethod(t.name)?.paging?.whole;
      if (whole) expect(t.description, t.name).toContain(`Every one at once: ${whole}.`);
      else expect(t.description, t.name).not.toMatch(/exportContacts/);
    }
    expect(tools.find((t) => t.name === 'getContacts')?.description).toMatch(/Every one at once: exportContacts\./);
  });

  test('createListSchema and addListSchemaField say a field is required unless is_required: false, and it is so', async () => {
    const world = await startMcp();
    const { tools } = await world.client.listTools();
    const tool = (name: string) => tools.find((t) => t.name === name)!;
    const fieldOf = (name: string): any => {
      const p = tool(name).inputSchema.properties as any;
      return name === 'createListSchema' ? p.fields.items : p.field;
    };
    for (const name of ['createListSchema', 'addListSchemaField']) {
      expect(tool(name).description, name).toContain('required unless is_required: false');
      expect(fieldOf(name).properties.is_required.description, name).toMatch(/^Default true: every addListItem must fill it$/);
    }
    // What the text says: a field given without is_required is required by the next addListItem.
    const made = firstJson(
      await world.call('createListSchema', { name: 'Notes', bot_id: 10, fields: [{ name: 'Title', slug: 'title', type: 'string' }] }),
    );
    const schemaId = made.data.id;
    expect(made.data.fields.title.is_required).toBe(true);
    expect(
      (await world.call('addListSchemaField', { schema_id: schemaId, field: { name: 'Note', slug: 'note', type: 'string' } })).isError,
    ).toBeFalsy();
    const refused = await world.call('addListItem', { schema_id: schemaId, data: { title: 'A' } });
    expect(refused.isError).toBe(true);
    expect(firstJson(refused)).toMatchObject({ status: 422, errors: { 'data.note': ['The data.note field is required.'] } });
  });
});

describe("a list cut to the result budget says so, as the method's paging policy says", () => {
  const bigPage =
    (m: string, data: unknown[]) =>
    (b: Backend): Backend => ({
      call: async (name, p, o) => (name === m ? { status: 200, headers: {}, body: { data } } : b.call(name, p, o)),
      close: () => b.close(),
    });
  const tags = Array.from({ length: 200 }, (_, i) => `tag-${i}-${'x'.repeat(200)}`);

  test('getContactTags: cut, with no pointer to exportContacts (its name has "contact" in it, nothing more)', async () => {
    const world = await startMcp({ wrap: bigPage('getContactTags', tags), maxResultChars: 20_000 });
    const r = await world.call('getContactTags', { contact_id: 100 });
    const body = r.structuredContent as { data: string[]; warnings: string[]; truncated: unknown };
    const kept = body.data.length;
    expect(body.warnings.join(' ')).toMatch(
      new RegExp(`^Cut to the result budget of 20000 characters: ${kept} of the 200 items of this answer are shown\\.$`),
    );
    expect(body.truncated).toEqual({ kept, of: 200, next: null });
  });

  test('getContacts: cut, pointing to exportContacts', async () => {
    const contacts = Array.from({ length: 60 }, (_, i) => ({ id: i, name: 'n'.repeat(500) }));
    const world = await startMcp({ wrap: bigPage('getContacts', contacts), maxResultChars: 20_000 });
    const r = await world.call('getContacts', {});
    const warnings = (r.structuredContent as { warnings: string[] }).warnings.join(' ');
    expect(warnings).toMatch(/of the 60 items of this answer are shown\. Every one at once: exportContacts\.$/);
  });
});

describe('every tool succeeds once', () => {
  test('each tool has one success sample', () => {
    expect(SAMPLES.map((s) => s.name).sort(), 'one success sample per tool in test/mcp/samples.ts').toEqual([...TOOLS].sort());
  });

  test('success: structuredContent is the API body ({} for a 204) and the text carries the same JSON', async () => {
    const world = await startMcp();
    const state: SampleState = {};
    let called = 0;
    for (const s of SAMPLES) {
      const r = await world.call(s.name, s.args(state));
      expect(r.isError, `${s.name}: ${JSON.stringify(r.content)}`).toBeFalsy();
      expect(firstJson(r), s.name).toEqual(r.structuredContent);
      // Compact, and the same object key for key in the same order (a paginator's URLs too).
      expect((r.content[0] as { text: string }).text, s.name).toBe(JSON.stringify(r.structuredContent));
      const def = findMethod(s.name);
      if (def?.result) {
        const parsed = def.result.safeParse(r.structuredContent);
        expect(parsed.success, `${s.name} body matches its result schema: ${parsed.error?.message}`).toBe(true);
      } else if (def) {
        expect(r.structuredContent, s.name).toEqual({});
      }
      s.keep?.(state, r.structuredContent);
      called++;
    }
    expect(called).toBe(TOOLS.length);
  });
});

describe('every tool fails in the API error shape', () => {
  test('an unknown argument (a misspelt name) is a 422 naming it, and the API is not called', async () => {
    const calls: string[] = [];
    const world = await startMcp({ wrap: countingBackend(calls) });
    const { tools } = await world.client.listTools();
    expect(tools).toHaveLength(TOOLS.length);
    for (const t of tools) {
      const r = await world.call(t.name, { surplus_arg: 1 });
      expect(r.isError, t.name).toBe(true);
      const body = firstJson(r);
      expect(body.status, t.name).toBe(422);
      expect(body.message, t.name).toMatch(/surplus arg/);
      expect(Object.keys(body.errors), t.name).toEqual(['surplus_arg']);
    }
    expect(calls).toEqual([]);
  });

  test('"ammount" is refused with a hint, not dropped: no money moves', async () => {
    const world = await startMcp();
    const r = await world.call('addFundsToContactAccount', { account_id: 500, ammount: 5, description: 'x' });
    const body = firstJson(r);
    expect(body).toMatchObject({ status: 422, errors: { ammount: [expect.stringMatching(/Did you mean amount\?/)] } });
    expect(await balance(world, 500)).toBe(1000);
  });

  test('an unknown key inside an object argument is refused with its dot path', async () => {
    const world = await startMcp();
    const r = await world.call('createListSchema', {
      name: 'X',
      bot_id: 10,
      fields: [{ name: 'A', slug: 'a', type: 'string', colour: 'red' }],
    });
    expect(firstJson(r)).toMatchObject({ status: 422, errors: { 'fields.0.colour': [expect.any(String)] } });
  });

  test("every tool answers the pipeline's error: a key without the Pro plan gives 402 pro_required", async () => {
    const world = await startMcp({ apiKey: 'fran-key' });
    const { tools } = await world.client.listTools();
    expect(tools).toHaveLength(TOOLS.length);
    const state: SampleState = { schemaId: 'x', itemId: 'x', accountId: 500, shortLink: 'http://localhost/s/x' };
    for (const t of tools) {
      const sample = SAMPLES.find((s) => s.name === t.name);
      const r = await world.call(t.name, sample ? sample.args(state) : {});
      expect(r.isError, t.name).toBe(true);
      // runBulk reads only the server's own plans, and a key without the plan could make none (previewBulk answers 402).
      if (t.name === 'runBulk') {
        expect(firstJson(r), t.name).toMatchObject({ status: 422, errors: { plan_id: [expect.stringMatching(/No such plan/)] } });
        continue;
      }
      expect(r.structuredContent, t.name).toBeUndefined();
      expect(firstJson(r), t.name).toEqual({ status: 402, error: expect.any(String), code: 'pro_required' });
    }
  });

  test("a wrong value is the API's own 422, Laravel style", async () => {
    const world = await startMcp();
    const r = await world.call('addFundsToContactAccount', { account_id: 500, amount: 0, description: 'x' });
    expect(firstJson(r)).toEqual({ status: 422, message: expect.any(String), errors: { amount: [expect.any(String)] } });
  });

  test('a 404 and a 403 come back as {status, error}: the status and the API body, nothing else (as docs/mcp-server.md says)', async () => {
    const world = await startMcp();
    expect(firstJson(await world.call('getContactAccounts', { contact_id: 999 }))).toEqual({ status: 404, error: expect.any(String) });
    expect(firstJson(await world.call('getContactAccounts', { contact_id: 200 }))).toEqual({ status: 403, error: expect.any(String) });
  });

  test('rate limit ("per account, all methods combined"): past the limit any tool answers 429 Too Many Attempts, and says when to retry', async () => {
    const world = await startMcp({ rateLimit: 2 });
    expect((await world.call('getMe')).isError).toBeFalsy();
    expect((await world.call('getBalance')).isError).toBeFalsy();
    const refused = firstJson(await world.call('getContactAccounts', { contact_id: 100 }));
    expect(refused).toEqual({ status: 429, message: 'Too Many Attempts.', warnings: [expect.stringMatching(/retry in \d+ s/)] });
    // The window is a minute: the wait is at most that.
    const seconds = Number(/retry in (\d+) s/.exec(refused.warnings[0])![1]);
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(60);
  });

  test('an unknown tool is an error result, not a crash', async () => {
    const world = await startMcp();
    const r = await world.call('createContactAccount', { contact_id: 100, currency: 'EUR' });
    expect(r.isError).toBe(true);
    expect(firstJson(r)).toMatchObject({ status: 404 });
  });
});

async function balance(w: McpWorld, accountId: number): Promise<number> {
  const r = await w.call('getContactAccounts', { contact_id: 100 });
  return (r.structuredContent as any).data.find((a: any) => a.id === accountId).amount;
}
export { balance };

describe('a backend that throws', () => {
  const throwing = (b: Backend): Backend => ({
    call: async (name, p, o) => {
      await b.call(name, p, o);
      throw new Error(`lost after ${name}`);
    },
    close: () => b.close(),
  });

  test('a write may have been made: outcome_unknown, read it back; a read: upstream_unreachable', async () => {
    const world = await startMcp({ wrap: throwing });
    const write = firstJson(await world.call('attachTagToContact', { contact_id: 101, name: 'gold' }));
    expect(write).toMatchObject({ code: 'outcome_unknown' });
    expect(write.message).toMatch(/attachTagToContact.*may or may not have been made\. Read it back/);
    // It was made: which is why the answer must not say the service was never reached.
    expect(world.store.tags.botTags(10)).toContain('gold');
    expect(firstJson(await world.call('getContactTags', { contact_id: 101 }))).toMatchObject({ code: 'upstream_unreachable' });
  });
});
