/**
 * Bulk plans in the MCP server's own state, SQLite (state/bulk-plans.ts) and PostgreSQL
 * (state/pg/bulk-plans.ts), the same behaviour: a plan and its steps kept together and read
 * back after a reopen, per scope; the first confirmation stands; one runner holds a run at a
 * time until its hold lapses; steps paged by contact id and by status.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BulkPlans } from '../../src/mcp/state.js';
import type { Sync } from '../../src/state/async.js';
import { McpStateStore } from '../../src/state/mcp-state.js';
import { PgMcpState } from '../../src/state/pg/mcp-state.js';
import { PgStore } from '../../src/store/pg/index.js';
import { usePostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

const pg = usePostgres();

const PLAN = {
  id: 'p1',
  created_at: '2026-11-26T10:00:00.000Z',
  expires_at: '2026-11-26T11:00:00.000Z',
  body: { action: { type: 'deposit' } },
};
const STEPS = [
  { contact_id: 12, status: 'pending' as const, note: { account_id: 7 } },
  { contact_id: 3, status: 'skipped' as const, note: { reason: 'unsubscribed' } },
  { contact_id: 40, status: 'pending' as const, note: {} },
];

/**
 * The shared behaviour; `reopen` gives the same scope's plans over a new connection to the same
 * state, `scoped` another scope's on the same state.
 */
function behaves(
  open: (scope: string) => Promise<{ plans: Sync<BulkPlans>; reopen: () => Sync<BulkPlans>; scoped: (scope: string) => Sync<BulkPlans> }>,
) {
  it('keeps a plan with its steps, by scope, across a reopen', async () => {
    const { plans, reopen, scoped } = await open('owner 1');
    plans.create(PLAN, STEPS);
    const again = reopen();
    expect(again.get('p1')).toEqual({ ...PLAN, confirmation: null });
    expect(again.steps('p1', { limit: 10 }).map((s) => s.contact_id)).toEqual([3, 12, 40]);
    expect(again.steps('p1', { limit: 10, status: ['pending'] })).toEqual([STEPS[0], STEPS[2]]);
    expect(again.steps('p1', { limit: 1, after: 3 })).toEqual([STEPS[0]]);
    expect(again.counts('p1')).toEqual({ pending: 2, skipped: 1 });
    again.mark('p1', { contact_id: 12, status: 'done', note: { before: 5 } });
    expect(plans.steps('p1', { limit: 1, status: ['done'] })).toEqual([{ contact_id: 12, status: 'done', note: { before: 5 } }]);
    expect(scoped('owner 2').get('p1')).toBeUndefined();
    // A second plan of the same id in the scope is refused, steps and all.
    expect(() => plans.create(PLAN, [])).toThrow();
  });

  it("a new plan sweeps away the scope's plans made over 30 days before it, steps and all", async () => {
    const { plans, scoped } = await open('owner 4');
    plans.create({ ...PLAN, id: 'old', created_at: '2026-10-26T09:59:59.000Z' }, STEPS);
    plans.create({ ...PLAN, id: 'recent', created_at: '2026-10-27T10:00:00.000Z' }, STEPS);
    const other = scoped('owner 5');
    other.create({ ...PLAN, id: 'old', created_at: '2026-10-26T09:59:59.000Z' }, STEPS);
    plans.create(PLAN, STEPS);
    expect(plans.get('old')).toBeUndefined();
    expect(plans.counts('old')).toEqual({});
    expect(plans.get('recent')).toBeDefined();
    expect(plans.counts('recent')).toEqual({ pending: 2, skipped: 1 });
    expect(other.get('old')).toBeDefined(); // another scope's, until one of its own plans sweeps
  });

  it('the first confirmation stands; one runner holds a run until its hold lapses', async () => {
    const { plans } = await open('owner 3');
    plans.create(PLAN, STEPS);
    expect(plans.confirm('p1', { accepted: false, how: 'elicitation declined', by: 'the person' })).toBe(true);
    expect(plans.confirm('p1', { accepted: true, how: 'elicitation accepted', by: 'the person' })).toBe(false);
    expect(plans.get('p1')!.confirmation).toEqual({ accepted: false, how: 'elicitation declined', by: 'the person' });
    expect(plans.hold('p1', 'a', 2000, 1000)).toBe(true);
    expect(plans.hold('p1', 'b', 2500, 1500)).toBe(false);
    expect(plans.hold('p1', 'a', 3000, 1500)).toBe(true); // renewed
    expect(plans.hold('p1', 'b', 4000, 3001)).toBe(true); // a's lapsed
    plans.letGo('p1', 'a'); // not a's any more: nothing
    expect(plans.hold('p1', 'c', 5000, 3500)).toBe(false);
    plans.letGo('p1', 'b');
    expect(plans.hold('p1', 'c', 5000, 3500)).toBe(true);
  });
}

describe('bulk plans in the SQLite state file', () => {
  behaves(async (scope) => {
    const file = join(tempDir(), 'mcp-state.sqlite');
    const state = McpStateStore.open(file);
    return {
      plans: state.plans(scope),
      reopen: () => McpStateStore.open(file).plans(scope),
      scoped: (other: string) => state.plans(other),
    };
  });
});

describe('bulk plans on PostgreSQL', () => {
  behaves(async (scope) => {
    const url = await pg.server().database();
    const store = pg.keep(PgStore.open(url));
    return {
      plans: new PgMcpState(store.conn).plans(scope),
      reopen: () => new PgMcpState(pg.keep(PgStore.open(url)).conn).plans(scope),
      scoped: (other: string) => new PgMcpState(store.conn).plans(other),
    };
  });
});
