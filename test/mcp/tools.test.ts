/**
 * The tools over the SDK's real Client and InMemoryTransport: one tool per catalog method,
 * each called with a success and with errors, in the contract's result shapes.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { METHODS, findMethod } from '../../src/api/catalog.js';
import type { MethodDef } from '../../src/api/define.js';
import { isListMethod } from '../../src/mcp/tools.js';
import type { Backend } from '../../src/service/backend.js';
import { firstJson, startMcp, type McpWorld } from './harness.js';
import { SAMPLES, type SampleState } from './samples.js';

const DEFS = METHODS as readonly MethodDef[];
let world: McpWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

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
    world = await startMcp();
    const { tools } = await world.client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual([...DEFS.map((d) => d.name), 'exportContacts']);
    for (const d of DEFS) for (const a of d.aliases ?? []) expect(names).not.toContain(a);
  });

  test('every tool has a title, a description, strict input, an output schema and all four annotations', async () => {
    world = await startMcp();
    const { tools } = await world.client.listTools();
    for (const t of tools) {
      expect(t.title, t.name).toBeTruthy();
      expect((t.description ?? '').length, t.name).toBeGreaterThan(40);
      expect(t.inputSchema.type).toBe('object');
      expect((t.inputSchema as any).additionalProperties, t.name).toBe(false);
      expect(t.outputSchema?.type, t.name).toBe('object');
      for (const k of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
        expect(typeof t.annotations?.[k], `${t.name}.${k}`).toBe('boolean');
      }
      const def = findMethod(t.name);
      if (def) {
        expect(t.annotations).toMatchObject(def.annotations);
        expect(Object.keys(t.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(Object.keys(def.params)));
      }
    }
  });

  test('the money tools take an optional idempotency_key; no other tool does', async () => {
    world = await startMcp();
    const { tools } = await world.client.listTools();
    for (const t of tools) {
      const has = Object.hasOwn(t.inputSchema.properties ?? {}, 'idempotency_key');
      expect(has, t.name).toBe(t.name === 'addFundsToContactAccount' || t.name === 'withdrawFundsFromContactAccount');
      expect(t.inputSchema.required ?? []).not.toContain('idempotency_key');
    }
  });

  test('list tools state the output budget and point to exportContacts', async () => {
    world = await startMcp();
    const { tools } = await world.client.listTools();
    const lists = DEFS.filter(isListMethod).map((d) => d.name);
    expect(lists).toContain('getContacts');
    for (const t of tools.filter((x) => lists.includes(x.name))) {
      expect(t.description, t.name).toMatch(/about 20000 characters/);
      expect(t.description, t.name).toMatch(/exportContacts/);
    }
  });
});

describe('every tool succeeds once', () => {
  test('each catalog method has a success sample', () => {
    const sampled = new Set(SAMPLES.map((s) => s.name));
    const missing = DEFS.map((d) => d.name).filter((n) => !sampled.has(n));
    expect(missing, 'add a success sample in test/mcp/samples.ts').toEqual([]);
  });

  test('success: structuredContent is the API body ({} for a 204) and the text carries the same JSON', async () => {
    world = await startMcp();
    const state: SampleState = {};
    const names = new Set((await world.client.listTools()).tools.map((t) => t.name));
    let called = 0;
    for (const s of SAMPLES) {
      if (!names.has(s.name)) continue;
      const r = await world.call(s.name, s.args(state));
      expect(r.isError, `${s.name}: ${JSON.stringify(r.content)}`).toBeFalsy();
      expect(firstJson(r), s.name).toEqual(r.structuredContent);
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
    expect(called).toBe(names.size);
  });
});

describe('every tool fails in the API error shape', () => {
  test('an unknown argument (a misspelt name) is a 422 naming it, and the API is not called', async () => {
    const calls: string[] = [];
    world = await startMcp({ wrap: countingBackend(calls) });
    const { tools } = await world.client.listTools();
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
    world = await startMcp();
    const r = await world.call('addFundsToContactAccount', { account_id: 500, ammount: 5, description: 'x' });
    const body = firstJson(r);
    expect(body).toMatchObject({ status: 422, errors: { ammount: [expect.stringMatching(/Did you mean amount\?/)] } });
    expect(await balance(world, 500)).toBe(1000);
  });

  test('an unknown key inside an object argument is refused with its dot path', async () => {
    world = await startMcp();
    const r = await world.call('createListSchema', {
      name: 'X',
      bot_id: 10,
      fields: [{ name: 'A', slug: 'a', type: 'string', colour: 'red' }],
    });
    expect(firstJson(r)).toMatchObject({ status: 422, errors: { 'fields.0.colour': [expect.any(String)] } });
  });

  test('every tool answers the pipeline\'s error: a key without the Pro plan gives 402 pro_required', async () => {
    world = await startMcp({ apiKey: 'fran-key' });
    const { tools } = await world.client.listTools();
    const state: SampleState = { schemaId: 'x', itemId: 'x', accountId: 500, shortLink: 'http://localhost/s/x' };
    for (const t of tools) {
      const sample = SAMPLES.find((s) => s.name === t.name);
      const r = await world.call(t.name, sample ? sample.args(state) : {});
      expect(r.isError, t.name).toBe(true);
      expect(r.structuredContent, t.name).toBeUndefined();
      expect(firstJson(r), t.name).toEqual({ status: 402, error: expect.any(String), code: 'pro_required' });
    }
  });

  test('a wrong value is the API\'s own 422, Laravel style', async () => {
    world = await startMcp();
    const r = await world.call('addFundsToContactAccount', { account_id: 500, amount: 0, description: 'x' });
    expect(firstJson(r)).toEqual({ status: 422, message: expect.any(String), errors: { amount: [expect.any(String)] } });
  });

  test('a 404 and a 403 come back with status and the API body', async () => {
    world = await startMcp();
    expect(firstJson(await world.call('getContactAccounts', { contact_id: 999 }))).toMatchObject({ status: 404, error: expect.any(String) });
    expect(firstJson(await world.call('getContactAccounts', { contact_id: 200 }))).toMatchObject({ status: 403, error: expect.any(String) });
  });

  test('rate limit: past the limit a tool answers 429 Too Many Attempts, and says when to retry', async () => {
    world = await startMcp({ rateLimit: 2 });
    await world.call('getMe');
    await world.call('getMe');
    const refused = firstJson(await world.call('getMe'));
    expect(refused).toEqual({ status: 429, message: 'Too Many Attempts.', warnings: [expect.stringMatching(/retry in \d+ s/)] });
    // The window is a minute: the wait is at most that.
    const seconds = Number(/retry in (\d+) s/.exec(refused.warnings[0])![1]);
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(60);
  });

  test('an unknown tool is an error result, not a crash', async () => {
    world = await startMcp();
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
