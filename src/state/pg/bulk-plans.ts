/**
 * Bulk plans on PostgreSQL (the SQLite part: ../bulk-plans.ts), in the service's database, so
 * every MCP server instance on it sees the same plans, and one run of a plan at a time.
 */
import type { BulkPlans } from '../../mcp/state.js';
import type { Sync } from '../async.js';
import type { PgConnection } from '../../store/pg/connection.js';
import { ALL_STATUSES, countsOf, planOf, stepOf, sweptBefore, type PlanRow, type StepRow } from '../bulk-plans.js';

export function pgBulkPlans(c: PgConnection, scope: string): Sync<BulkPlans> {
  return {
    create(plan, steps) {
      c.tx(() => {
        const old = sweptBefore(plan);
        c.query(
          'DELETE FROM mcp_bulk_steps WHERE scope = $1 AND plan_id IN (SELECT id FROM mcp_bulk_plans WHERE scope = $1 AND created_at < $2)',
          [scope, old],
        );
        c.query('DELETE FROM mcp_bulk_plans WHERE scope = $1 AND created_at < $2', [scope, old]);
        c.query('INSERT INTO mcp_bulk_plans (scope, id, body, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)', [
          scope,
          plan.id,
          JSON.stringify(plan.body),
          plan.created_at,
          plan.expires_at,
        ]);
        // One statement for every step: a round trip each would be thousands.
        c.query(
          `INSERT INTO mcp_bulk_steps (scope, plan_id, contact_id, status, note)
           SELECT $1, $2, u.contact_id, u.status, u.note FROM unnest($3::bigint[], $4::text[], $5::text[]) AS u(contact_id, status, note)`,
          [scope, plan.id, steps.map((st) => st.contact_id), steps.map((st) => st.status), steps.map((st) => JSON.stringify(st.note))],
        );
      });
    },
    get: (id) =>
      planOf(
        c.one<PlanRow>('SELECT id, body, created_at, expires_at, confirmation FROM mcp_bulk_plans WHERE scope = $1 AND id = $2', [
          scope,
          id,
        ]),
      ),
    confirm: (id, conf) =>
      c.query('UPDATE mcp_bulk_plans SET confirmation = $1 WHERE scope = $2 AND id = $3 AND confirmation IS NULL', [
        JSON.stringify(conf),
        scope,
        id,
      ]).rowCount === 1,
    hold: (id, runner, untilMs, nowMs) =>
      c.query(
        `UPDATE mcp_bulk_plans SET runner = $1, held_until_ms = $2
         WHERE scope = $3 AND id = $4 AND (runner IS NULL OR runner = $1 OR held_until_ms < $5)`,
        [runner, untilMs, scope, id, nowMs],
      ).rowCount === 1,
    letGo: (id, runner) =>
      void c.query('UPDATE mcp_bulk_plans SET runner = NULL WHERE scope = $1 AND id = $2 AND runner = $3', [scope, id, runner]),
    steps: (id, o) =>
      c
        .query<StepRow>(
          `SELECT contact_id, status, note FROM mcp_bulk_steps WHERE scope = $1 AND plan_id = $2 AND contact_id > $3
           AND status = ANY($4::text[]) ORDER BY contact_id LIMIT $5`,
          [scope, id, o.after ?? 0, o.status ?? ALL_STATUSES, o.limit],
        )
        .rows.map(stepOf),
    mark: (id, st) =>
      void c.query('UPDATE mcp_bulk_steps SET status = $1, note = $2 WHERE scope = $3 AND plan_id = $4 AND contact_id = $5', [
        st.status,
        JSON.stringify(st.note),
        scope,
        id,
        st.contact_id,
      ]),
    counts: (id) =>
      countsOf(
        c.query<{ status: string; n: string }>(
          'SELECT status, count(*) AS n FROM mcp_bulk_steps WHERE scope = $1 AND plan_id = $2 GROUP BY status',
          [scope, id],
        ).rows,
      ),
  };
}
