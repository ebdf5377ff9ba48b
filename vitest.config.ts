import { defineConfig } from 'vitest/config';

/** The MCP behaviour suites that must hold for both backends and both protocol eras. */
const BEHAVIOUR = ['test/mcp/backend.test.ts', 'test/mcp/budget.test.ts', 'test/mcp/hints.test.ts', 'test/mcp/tools.test.ts', 'test/mcp/money.test.ts', 'test/mcp/features.test.ts', 'test/mcp/extended.test.ts', 'test/mcp/versioning.test.ts', 'test/mcp/order.test.ts', 'test/mcp/search.test.ts', 'test/mcp/audit.test.ts', 'test/mcp/caps.test.ts'];

/**
 * What else runs on PostgreSQL too: the API's behaviour suites (every method over HTTP, the
 * concurrent debits through four `serve` processes on one database among them), key order
 * through the built `serve`'s service threads, the pipeline's,
 * and the reliability suite's isolation sweep and fuzzing ("a refused request changes nothing").
 */
const POSTGRES_TOO = ['test/service/**/*.test.ts', 'test/http/served-key-order.test.ts', 'test/http/pipeline.test.ts', 'test/http/params.test.ts', 'test/reliability/isolation.test.ts', 'test/reliability/fuzz.test.ts'];


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
        // confirm.test.ts runs both eras itself, so it is here and in `local`, not in local-2026.
        test: { name: 'remote', include: [...BEHAVIOUR, 'test/mcp/confirm.test.ts'], env: { WORKSPACE_TEST_BACKEND: 'remote' } },
      },
      // local and remote's client speaks 2025-11-25 (the v1 SDK's); these two's 2026-07-28 (the
      // v2 SDK's, pinned), over each backend. The suites' client is joined in memory (the server
      // side as over stdio); test/mcp/eras.test.ts runs both eras on both backends over the
      // built CLI's stdio and Streamable HTTP.
      {
        extends: true,
        test: { name: 'local-2026', include: BEHAVIOUR, env: { WORKSPACE_TEST_ERA: '2026-07-28' } },
      },
      {
        extends: true,
        // The behaviour suites a third time, on PostgreSQL: one throwaway server for the
        // project's run (test/postgres-setup.ts), a database of its own per world; the built-in
        // service in-process, the 2025-11-25 client. No test of these files is left out here.
        test: {
          name: 'postgres',
          include: [...BEHAVIOUR, 'test/mcp/confirm.test.ts', ...POSTGRES_TOO],
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
          include: [...BEHAVIOUR, 'test/mcp/remote-index.test.ts'],
          env: { WORKSPACE_TEST_BACKEND: 'remote', WORKSPACE_TEST_ERA: '2026-07-28' },
        },
      },
    ],
  },
});
