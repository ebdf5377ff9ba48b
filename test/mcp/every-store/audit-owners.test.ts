/**
 * One owner's part of an audit trail several owners write (ownersAudit over the database's
 * trail, SQLite or PostgreSQL as the test project says, and over the remote mode's JSON-lines
 * file): their entries only, newest first, paged by `next` without overlap or gap, filters kept;
 * `null` is the entries that name no owner.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import type { AuditEntry } from '../../../src/api/backend.js';
import { JsonlAuditTrail, ownersAudit } from '../../../src/mcp/money/audit.js';
import type { AuditTrail } from '../../../src/mcp/state.js';
import { promised } from '../../../src/state/async.js';
import type { StoreApi } from '../../../src/store/store-api.js';
import { openStore, seedStore, TEST_STORE } from '../../helpers/store.js';
import { tempDir } from '../../helpers/temp.js';

function entry(owner: number | null, i: number): AuditEntry {
  return {
    at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    owner_id: owner,
    client: null,
    session: null,
    tool: i % 3 === 0 ? 'addTag' : 'addFundsToContactAccount',
    arguments: { n: i },
    contact_id: i,
    status: 200,
    code: null,
    idempotency_key: null,
    replayed: false,
    confirmation: null,
  };
}

const stores: StoreApi[] = [];
afterAll(() => {
  for (const s of stores) s.close();
});

const TRAILS: Array<[string, () => AuditTrail]> = [
  [
    `the database's (${TEST_STORE})`,
    () => {
      const store = openStore(seedStore({}));
      stores.push(store);
      return promised<AuditTrail>(store.audit);
    },
  ],
  ['the remote JSON-lines file', () => new JsonlAuditTrail(join(tempDir(), 'audit.jsonl'))],
];

describe.each(TRAILS)('ownersAudit over %s', (_, open) => {
  test("each owner pages through their own entries only; others' interleaved are skipped", async () => {
    const trail = open();
    // 300 entries: owners 1, 2 and none taking turns.
    const owners = [1, 2, null] as const;
    for (let i = 0; i < 300; i++) await trail.append(entry(owners[i % 3]!, i));
    for (const owner of owners) {
      const mine = ownersAudit(trail, owner);
      const seen: number[] = [];
      let before: number | undefined;
      do {
        const page = await mine.read({ limit: 30, before });
        expect(page.entries.every((e) => e.owner_id === owner)).toBe(true);
        seen.push(...page.entries.map((e) => e.arguments.n as number));
        before = page.next;
      } while (before !== undefined);
      const expected = Array.from({ length: 100 }, (_, k) => 297 - 3 * k + owners.indexOf(owner));
      expect(seen).toEqual(expected);
    }
    // Filters hold beside the owner's: owner 1's addTag entries (i % 3 === 0: all of owner 1's).
    expect((await ownersAudit(trail, 2).read({ limit: 500, tool: 'addTag' })).entries).toEqual([]);
    expect((await ownersAudit(trail, 1).read({ limit: 500, tool: 'addTag' })).entries).toHaveLength(100);
  });
});
