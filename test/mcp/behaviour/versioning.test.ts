/**
 * Versioning through the tools, on both backends: Deprecation and Sunset headers become a
 * warning in the tool result; after the sunset, 410 method_removed passes through.
 */
import { expect, test } from 'vitest';
import { firstJson, useMcp } from '../harness.js';

const startMcp = useMcp();

test('a deprecated method answers as before, with a warning naming its sunset', async () => {
  const world = await startMcp();
  world.store.settings.setDeprecation('getContactAccounts', '2999-01-01T00:00:00+00:00');
  const r = await world.call('getContactAccounts', { contact_id: 100 });
  expect(r.isError).toBeFalsy();
  const body = r.structuredContent as { data: unknown[]; warnings: string[] };
  expect(body.data).toHaveLength(1);
  expect(body.warnings.join(' ')).toMatch(/getContactAccounts is deprecated.*2999-01-01T00:00:00\.000Z/);
});

test('after its sunset date a method answers 410 with code method_removed', async () => {
  const world = await startMcp();
  world.store.settings.setDeprecation('getContactAccounts', '2020-01-01T00:00:00+00:00');
  const r = await world.call('getContactAccounts', { contact_id: 100 });
  expect(r.isError).toBe(true);
  expect(firstJson(r)).toMatchObject({ status: 410, code: 'method_removed' });
});

test("a backend's own warning (a lost write) reaches the model beside the error", async () => {
  const world = await startMcp({
    wrap: (b) => ({
      call: async (m, p, o) =>
        m === 'addFundsToContactAccount'
          ? {
              status: 504,
              headers: {},
              body: { message: 'outcome unknown', error: 'outcome unknown', code: 'outcome_unknown' },
              warnings: ['Check with getContactAccounts before retrying.'],
            }
          : b.call(m, p, o),
      close: () => b.close(),
    }),
  });
  const r = await world.call('addFundsToContactAccount', { account_id: 500, amount: 5, description: 'x' });
  expect(r.isError).toBe(true);
  expect(firstJson(r)).toMatchObject({
    status: 504,
    code: 'outcome_unknown',
    warnings: ['Check with getContactAccounts before retrying.'],
  });
});
