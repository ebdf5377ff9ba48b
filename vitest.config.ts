import { defineConfig } from 'vitest/config';

/** The MCP behaviour suites that must hold for both backends and both protocol eras. */
const BEHAVIOUR = ['test/mcp/backend.test.ts', 'test/mcp/budget.test.ts', 'test/mcp/hints.test.ts', 'test/mcp/tools.test.ts', 'test/mcp/money.test.ts', 'test/mcp/features.test.ts', 'test/mcp/extended.test.ts', 'test/mcp/versioning.test.ts', 'test/mcp/order.test.ts', 'test/mcp/search.test.ts', 'test/mcp/audit.test.ts', 'test/mcp/caps.test.ts'];

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
