/**
 * Bulk plans (previewBulk, runBulk) in the MCP server's SQLite state file (migration 4 of
 * `mcp-state.ts`): a plan's body as JSON, its confirmation, who holds its run now, and one
 * step per contact, so a run goes on after a crash from where it stopped.
 */
import type { BulkConfirmation, BulkPlan, BulkPlans, BulkStep, BulkStepStatus } from '../mcp/state.js';
import type { Sync } from './async.js';
import type { Db } from '../store/db.js';

/** A plan's row as both stores keep it. */
export interface PlanRow {
  id: string;
  body: string;
  created_at: string;
  expires_at: string;
  confirmation: string | null;
}

/** A step's row as both stores keep it. */
export interface StepRow {
  contact_id: number;
  status: string;
  note: string;
}

export const planOf = (row: PlanRow | undefined): BulkPlan | undefined =>
  row && {
    id: row.id,
    created_at: row.created_at,
    expires_at: row.expires_at,
    body: JSON.parse(row.body) as Record<string, unknown>,
    confirmation: row.confirmation === null ? null : (JSON.parse(row.confirmation) as BulkConfirmation),
  };

export const stepOf = (row: StepRow): BulkStep => ({
  contact_id: Number(row.contact_id),
  status: row.status as BulkStepStatus,
  note: JSON.parse(row.note) as Record<string, unknown>,
});

/** The counts of a `status, n` query, by status. */
export const countsOf = (rows: Array<{ status: string; n: number | string }>): Partial<Record<BulkStepStatus, number>> =>
  Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));

/** How long a plan and its outcomes are kept: a new plan of the scope sweeps older ones away. */
const KEEP_MS = 30 * 24 * 60 * 60 * 1000;

/** Plans made before this are swept when a new one is made (`created_at` is ISO 8601, which sorts as time). */
export const sweptBefore = (plan: { created_at: string }): string => new Date(Date.parse(plan.created_at) - KEEP_MS).toISOString();

/** The statuses a query keeps (all of them when none are given). */
export const ALL_STATUSES: readonly BulkStepStatus[] = ['pending', 'running', 'unknown', 'done', 'failed', 'skipped'];

export function sqliteBulkPlans(db: Db, scope: string): Sync<BulkPlans> {
  const s = {
    plan: db.prepare<[string, string], PlanRow>(
      'SELECT id, body, created_at, expires_at, confirmation FROM bulk_plans WHERE scope = ? AND id = ?',
    ),
    addPlan: db.prepare<[string, string, string, string, string]>(
      'INSERT INTO bulk_plans (scope, id, body, created_at, expires_at) VALUES (?, ?, ?, ?, ?)',
    ),
    addStep: db.prepare<[string, string, number, string, string]>(
      'INSERT INTO bulk_steps (scope, plan_id, contact_id, status, note) VALUES (?, ?, ?, ?, ?)',
    ),
    confirm: db.prepare<[string, string, string]>(
      'UPDATE bulk_plans SET confirmation = ? WHERE scope = ? AND id = ? AND confirmation IS NULL',
    ),
    hold: db.prepare<[string, number, string, string, string, number]>(
      'UPDATE bulk_plans SET runner = ?, held_until_ms = ? WHERE scope = ? AND id = ? AND (runner IS NULL OR runner = ? OR held_until_ms < ?)',
    ),
    letGo: db.prepare<[string, string, string]>('UPDATE bulk_plans SET runner = NULL WHERE scope = ? AND id = ? AND runner = ?'),
    mark: db.prepare<[string, string, string, string, number]>(
      'UPDATE bulk_steps SET status = ?, note = ? WHERE scope = ? AND plan_id = ? AND contact_id = ?',
    ),
    sweepSteps: db.prepare<[string, string, string]>(
      'DELETE FROM bulk_steps WHERE scope = ? AND plan_id IN (SELECT id FROM bulk_plans WHERE scope = ? AND created_at < ?)',
    ),
    sweepPlans: db.prepare<[string, string]>('DELETE FROM bulk_plans WHERE scope = ? AND created_at < ?'),
    counts: db.prepare<[string, string], { status: string; n: number }>(
      'SELECT status, count(*) AS n FROM bulk_steps WHERE scope = ? AND plan_id = ? GROUP BY status',
    ),
  };
  const create = db.transaction((plan: Omit<BulkPlan, 'confirmation'>, steps: readonly BulkStep[]) => {
    const old = sweptBefore(plan);
    s.sweepSteps.run(scope, scope, old);
    s.sweepPlans.run(scope, old);
    s.addPlan.run(scope, plan.id, JSON.stringify(plan.body), plan.created_at, plan.expires_at);
    for (const st of steps) s.addStep.run(scope, plan.id, st.contact_id, st.status, JSON.stringify(st.note));
  });
  return {
    create: (plan, steps) => create.immediate(plan, steps),
    get: (id) => planOf(s.plan.get(scope, id)),
    confirm: (id, c) => s.confirm.run(JSON.stringify(c), scope, id).changes === 1,
    hold: (id, runner, untilMs, nowMs) => s.hold.run(runner, untilMs, scope, id, runner, nowMs).changes === 1,
    letGo: (id, runner) => void s.letGo.run(scope, id, runner),
    steps(id, o) {
      const status = o.status ?? ALL_STATUSES;
      const rows = db
        .prepare<unknown[], StepRow>(
          `SELECT contact_id, status, note FROM bulk_steps WHERE scope = ? AND plan_id = ? AND contact_id > ?
           AND status IN (${status.map(() => '?').join(', ')}) ORDER BY contact_id LIMIT ?`,
        )
        .all(scope, id, o.after ?? 0, ...status, o.limit);
      return rows.map(stepOf);
    },
    mark: (id, st) => void s.mark.run(st.status, JSON.stringify(st.note), scope, id, st.contact_id),
    counts: (id) => countsOf(s.counts.all(scope, id)),
  };
}
