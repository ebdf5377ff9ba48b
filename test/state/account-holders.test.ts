/**
 * Accounts' holders in the MCP server's state (mcp/state.ts AccountHolders), in both homes: the
 * SQLite file and the PostgreSQL database. What one scope keeps another never reads; a holder
 * seen again with another contact is replaced; a whole answer's pairs are kept at once.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { McpStateSync } from '../../src/state/mcp-state.js';
import { McpStateStore } from '../../src/state/mcp-state.js';
import { PgMcpState } from '../../src/state/pg/mcp-state.js';
import { PgStore } from '../../src/store/pg/index.js';
import { usePostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/world.js';

const pg = usePostgres();

function check(state: McpStateSync): void {
  const alice = state.holders('owner 1');
  const bob = state.holders('owner 2');
  expect(alice.get(500)).toBeUndefined();
  alice.put([
    [500, 100],
    [501, 100],
    [502, 101],
  ]);
  expect([alice.get(500), alice.get(501), alice.get(502)]).toEqual([100, 100, 101]);
  expect(bob.get(500)).toBeUndefined();
  bob.put([[600, 200]]);
  expect(alice.get(600)).toBeUndefined();
  alice.put([[502, 102]]);
  expect(alice.get(502)).toBe(102);
  expect(bob.get(600)).toBe(200);
}

describe("accounts' holders in the MCP state", () => {
  it('SQLite: kept per scope, and across opening the file again', () => {
    const file = join(tempDir(), 'mcp-state.sqlite');
    const state = McpStateStore.open(file);
    try {
      check(state);
    } finally {
      state.close();
    }
    const again = McpStateStore.open(file);
    try {
      expect(again.holders('owner 1').get(501)).toBe(100);
    } finally {
      again.close();
    }
  });

  it('PostgreSQL: kept per scope, seen by another connection', async () => {
    const url = await pg.server().database();
    check(new PgMcpState(pg.keep(PgStore.open(url)).conn));
    const other = pg.keep(PgStore.open(url));
    expect(new PgMcpState(other.conn).holders('owner 1').get(502)).toBe(102);
  });
});
