/**
 * The audit trail: "every call of a tool that changes data is recorded: time, owner, the MCP
 * client's name and version and session, tool, arguments (keys and secrets redacted), outcome,
 * idempotency key and whether it was a replay". Local: in the database, in the transaction of
 * the change; remote: a JSON-lines file. Read as the resource workspace://audit.
 */
import { describe, expect, test } from 'vitest';
import { findMethod } from '../../../src/api/catalog.js';
import { firstJson, mcpFixture, TEST_BACKEND, useMcp, type McpWorld } from '../harness.js';
import { SAMPLES, type SampleState } from '../samples.js';

const startMcp = useMcp();

async function readAudit(world: McpWorld, query = ''): Promise<{ data: any[]; next: string | null }> {
  const read = await world.client.readResource({ uri: `workspace://audit${query}` });
  return JSON.parse((read.contents[0] as { text: string }).text);
}

describe(`audit trail (${TEST_BACKEND})`, () => {
  test('every tool whose annotations say it changes data leaves one complete entry per call; reads leave none', async () => {
    const world = await startMcp();
    const state: SampleState = {};
    const mutating: string[] = [];
    for (const s of SAMPLES) {
      const r = await world.call(s.name, s.args(state));
      expect(r.isError, s.name).toBeFalsy();
      s.keep?.(state, r.structuredContent);
      const def = findMethod(s.name);
      if (def && !def.annotations.readOnlyHint) mutating.push(s.name);
    }
    expect(mutating.length).toBeGreaterThan(10);
    const { data } = await readAudit(world, '?limit=500');
    // Newest first.
    expect(data.map((e) => e.tool)).toEqual([...mutating].reverse());
    for (const e of data) {
      expect(e, e.tool).toMatchObject({
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        owner_id: 1,
        client: { name: 'test', version: '1.0.0' },
        tool: expect.any(String),
        arguments: expect.any(Object),
        status: expect.any(Number),
        code: null,
        idempotency_key: null,
        replayed: false,
        confirmation: null,
      });
      expect(e.status, e.tool).toBeGreaterThanOrEqual(200);
      expect(e.status, e.tool).toBeLessThan(300);
    }
  });

  test('a refused call is recorded with its status and error code; a replay with its key and replayed: true', async () => {
    const world = await startMcp();
    const debit = { account_id: 500, amount: 99_999, description: 'Too much', idempotency_key: 'k-1' };
    expect((await world.call('withdrawFundsFromContactAccount', debit)).isError).toBe(true);
    const topUp = { account_id: 500, amount: 5, description: 'Bonus', idempotency_key: 'k-2' };
    await world.call('addFundsToContactAccount', topUp);
    await world.call('addFundsToContactAccount', topUp);
    const misspelt = await world.call('addFundsToContactAccount', { account_id: 500, ammount: 5, description: 'x' });
    expect(firstJson(misspelt).status).toBe(422);
    const { data } = await readAudit(world);
    expect(data.map((e) => [e.tool, e.status, e.code, e.idempotency_key, e.replayed])).toEqual([
      ['addFundsToContactAccount', 422, null, null, false], // a validation 422 has no code
      ['addFundsToContactAccount', 200, null, 'k-2', true],
      ['addFundsToContactAccount', 200, null, 'k-2', false],
      ['withdrawFundsFromContactAccount', 422, 'insufficient_funds', 'k-1', false],
    ]);
    // The idempotency key is kept apart from the arguments.
    expect(data[1].arguments).toEqual({ account_id: 500, amount: 5, description: 'Bonus' });
  });

  test('arguments that look like keys or secrets are redacted', async () => {
    const world = await startMcp();
    // An unknown argument is refused, and still recorded, redacted.
    await world.call('createOrUpdateContact', { bot_id: 10, messenger: 'telegram', name: 'Zed', telegram_id: 9, secret_token: 's3cret' });
    const { data } = await readAudit(world);
    expect(JSON.stringify(data)).not.toContain('s3cret');
    expect(data[0].arguments.secret_token).toBe('[redacted]');
  });

  test('filters by tool, contact and since, and pages newest first with a next URI', async () => {
    const world = await startMcp();
    await world.call('getContactAccounts', { contact_id: 100 }); // shows who holds account 500
    const start = new Date().toISOString();
    for (let i = 1; i <= 5; i++) await world.call('addFundsToContactAccount', { account_id: 500, amount: i, description: `n${i}` });
    await world.call('attachTagToContact', { contact_id: 101, name: 'gold' });
    expect((await readAudit(world, '?tool=attachTagToContact')).data.map((e) => e.contact_id)).toEqual([101]);
    const forAnn = await readAudit(world, '?contact=100&limit=2');
    expect(forAnn.data.map((e) => e.arguments.amount)).toEqual([5, 4]);
    expect(forAnn.next).toMatch(/^workspace:\/\/audit\?/);
    const more = await readAudit(world, forAnn.next!.slice('workspace://audit'.length));
    expect(more.data.map((e) => e.arguments.amount)).toEqual([3, 2]);
    expect((await readAudit(world, `?since=${encodeURIComponent(start)}`)).data).toHaveLength(6);
    expect((await readAudit(world, '?since=2999-01-01T00:00:00Z')).data).toEqual([]);
    await expect(world.client.readResource({ uri: 'workspace://audit?limit=0' })).rejects.toThrow(/limit/);

    // Ids sent as text are ids all the same: the API reads "500" as 500, and so does the trail.
    await world.call('attachTagToContact', { contact_id: ' 102 ', name: 'gold' });
    await world.call('addFundsToContactAccount', { account_id: '500', amount: 1, description: 'as text' });
    expect((await readAudit(world, '?limit=2')).data.map((e) => e.contact_id)).toEqual([100, 102]);
  });

  test('the trail is listed as a resource', async () => {
    const world = await startMcp();
    const { resources } = await world.client.listResources();
    expect(resources.map((r) => r.uri)).toContain('workspace://audit');
  });
});
