import { defineConfig } from 'vitest/config';

/**
 * Which suites run where is by folder, so a new file lands in every project it belongs to:
 * - test/mcp/behaviour/: the MCP behaviour suites, on every backend (built-in, remote, PostgreSQL)
 *   with a client of each protocol era ($WORKSPACE_TEST_BACKEND, $WORKSPACE_TEST_ERA and
 *   $WORKSPACE_TEST_STORE, set by the project, reach them through test/mcp/harness.ts and
 *   test/helpers/store.ts);
 * - test/mcp/every-backend/: suites on every backend that run both eras themselves;
 * - test/service/ (the API's behaviour suites, every method over HTTP, the concurrent debits
 *   through four `serve` processes on one database among them) and every-store/ folders (key
 *   order through the built `serve`'s service threads, the pipeline's, parameters, the
 *   reliability suite's isolation sweep and fuzzing: "a refused request changes nothing"):
 *   on both stores.
 * The rest of test/ runs once, in `local`.
 */
const BEHAVIOUR = 'test/mcp/behaviour/**/*.test.ts';
const EVERY_BACKEND = 'test/mcp/every-backend/**/*.test.ts';
const EVERY_STORE = ['test/service/**/*.test.ts', 'test/*/every-store/**/*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One temp folder per run, checked at the end; each file's temp folders go when it ends.
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup.ts'],
    projects: [
      { extends: true, test: { name: 'local', include: ['test/**/*.test.ts'] } },
      {
        extends: true,
        test: { name: 'remote', include: [BEHAVIOUR, EVERY_BACKEND], env: { WORKSPACE_TEST_BACKEND: 'remote' } },
      },
      // local and remote's client speaks 2025-11-25 (the v1 SDK's); these two's 2026-07-28 (the
      // v2 SDK's, pinned), over each backend. The suites' client is joined in memory (the server
      // side as over stdio); test/mcp/eras.test.ts runs both eras on both backends over the
      // built CLI's stdio and Streamable HTTP.
      {
        extends: true,
        test: { name: 'local-2026', include: [BEHAVIOUR], env: { WORKSPACE_TEST_ERA: '2026-07-28' } },
      },
      {
        extends: true,
        // The behaviour suites a third time, on PostgreSQL: one throwaway server for the
        // project's run (test/postgres-setup.ts), a database of its own per world; the built-in
        // service in-process, the 2025-11-25 client. No test of these files is left out here.
        test: {
          name: 'postgres',
          include: [BEHAVIOUR, EVERY_BACKEND, ...EVERY_STORE],
          globalSetup: ['test/global-setup.ts', 'test/postgres-setup.ts'],
          // Seeding the 20 000-contact worlds (budget, search) takes seconds longer here.
          hookTimeout: 90_000,
          env: { WORKSPACE_TEST_STORE: 'postgres' },
        },
      },
      {
        extends: true,
        // remote-index.test.ts (the remote backend's own index, findContacts' progress while it
        // syncs; always on the remote backend) runs in local with a 2025 client, here with a 2026 one.
        test: {
          name: 'remote-2026',
          include: [BEHAVIOUR, 'test/mcp/remote-index.test.ts'],
          env: { WORKSPACE_TEST_BACKEND: 'remote', WORKSPACE_TEST_ERA: '2026-07-28' },
        },
      },
    ],
  },
});
