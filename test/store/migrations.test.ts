/**
 * SQLite migrations that change what a database already holds. Migration 8 drops migration 1's
 * idempotency_keys, which nothing read or wrote (the MCP server's keys are in its own file).
 */
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { openDb } from '../../src/store/db.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { Store } from '../../src/store/index.js';
import { tempDir } from '../helpers/temp.js';

test('a database made before migration 8 loses the unused idempotency_keys table, and keeps its data', () => {
  const file = join(tempDir(), 'workspace.db');
  const old = openDb(file, MIGRATIONS.slice(0, 7));
  old.exec(`INSERT INTO owners (id, name, plan, created_at) VALUES (1, 'A', 'pro', '2026-01-01T00:00:00+00:00');
    INSERT INTO idempotency_keys (owner_id, key, method, params_hash, status, body, created_at)
    VALUES (1, 'k', 'addFundsToContactAccount', 'h', 0, '', '2026-01-01T00:00:00+00:00');`);
  old.close();

  const store = Store.open(file);
  try {
    expect(store.db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    expect(store.db.prepare("SELECT name FROM sqlite_master WHERE name = 'idempotency_keys'").all()).toEqual([]);
    expect(store.owners.get(1)?.name).toBe('A');
  } finally {
    store.close();
  }
});
