/** The behaviour suites really run over the backend their project names (a guard for the setup). */
import { expect, test } from 'vitest';
import { RemoteBackend } from '../../src/remote/client.js';
import { LocalBackend } from '../../src/service/backend.js';
import { TEST_BACKEND, useMcp } from './harness.js';

const startMcp = useMcp();

test(`the suite runs over the ${TEST_BACKEND} backend`, async () => {
  const world = await startMcp();
  expect(world.context.backend).toBeInstanceOf(TEST_BACKEND === 'remote' ? RemoteBackend : LocalBackend);
  const me = await world.call('getMe');
  expect(me.isError).toBeFalsy();
  expect((me.structuredContent as { data: { id: number } }).data.id).toBe(1);
});
