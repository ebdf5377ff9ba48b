/**
 * The behaviour suites really run over the backend, with the client era and on the store their
 * project names (a guard for the setup): a misspelt variable in vitest.config.ts would otherwise
 * run a suite again over the default backend, era and store, and pass.
 */
import { expect, test } from 'vitest';
import { RemoteBackend } from '../../../src/remote/client.js';
import { LocalBackend } from '../../../src/service/backend.js';
import { Store } from '../../../src/store/index.js';
import { PgStore } from '../../../src/store/pg/index.js';
import { TEST_STORE } from '../../helpers/store.js';
import { TEST_ERA } from '../clients.js';
import { TEST_BACKEND, useMcp } from '../harness.js';

const startMcp = useMcp();

test(`the suite runs over the ${TEST_BACKEND} backend with a ${TEST_ERA} client on ${TEST_STORE}`, async ({ task }) => {
  // Projects: local, remote (2025-11-25), local-2026, remote-2026; postgres (local, 2025-11-25).
  const project = TEST_STORE === 'postgres' ? 'postgres' : `${TEST_BACKEND}${TEST_ERA === '2026-07-28' ? '-2026' : ''}`;
  expect(task.file.projectName).toBe(project);
  const world = await startMcp();
  expect(world.context.backend).toBeInstanceOf(TEST_BACKEND === 'remote' ? RemoteBackend : LocalBackend);
  expect(world.store).toBeInstanceOf(TEST_STORE === 'postgres' ? PgStore : Store);
  const me = await world.call('getMe');
  expect(me.isError).toBeFalsy();
  expect((me.structuredContent as { data: { id: number } }).data.id).toBe(1);
  // On the wire: a 2026-07-28 result names its server in _meta (there is no initialize to do it).
  const serverInfo = (me._meta as Record<string, { name?: string }> | undefined)?.['io.modelcontextprotocol/serverInfo'];
  if (TEST_ERA === '2026-07-28') expect(serverInfo?.name).toBe('workspace-mcp');
  else expect(serverInfo).toBeUndefined();
});
