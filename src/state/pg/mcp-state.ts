/**
 * The MCP server's own state on PostgreSQL (the SQLite part, a file per process:
 * ../mcp-state.ts), in the service's own database, so that every MCP server instance on it
 * shares it: an idempotency key used through one instance replays through another, a
 * confirmation's first answer is final on all of them, and the daily caps count what all of
 * them moved. The same methods as the SQLite part, each atomic across instances. Its tables
 * (../schema.ts) are brought up to date when it is made, by its own migrations.
 */
import type { AccountHolders, Caps, KeptAnswer, KeptCall, Reservation } from '../../mcp/state.js';
import { bodyText, DAY_MS, keptCall, refusedReservation, type KeyRow } from '../mcp-state.js';
import type { McpStateSync, OAuthStoreSync, Sync } from '../async.js';
import { PG_STATE_MIGRATIONS } from '../schema.js';
import { isoTime } from '../../store/time.js';
import type { PgConnection } from '../../store/pg/connection.js';
import { MIGRATION_LOCK, PgSchemaProblem, underAdvisoryLock } from '../../store/pg/migrations.js';
import { pgBulkPlans } from './bulk-plans.js';
import { pgOAuthStore } from './oauth-store.js';

/** The advisory locks of the money window: this pair's first number, an account's hash the second. */
const WINDOW_LOCK = 0x776b_6d64;

/** The advisory lock of the state's migrations: the store's first number, a second of its own. */
const STATE_MIGRATION_LOCK = [MIGRATION_LOCK[0], 2] as const;

/**
 * Bring the state's tables up to date (`PG_STATE_MIGRATIONS`, after the store's own), once
 * however many instances start together: the first to take the lock migrates, in one
 * transaction; the others wait, then find them current. The version is the row of
 * `mcp_state_schema`, made at 0 on first use (in a database migrated before the state had
 * migrations of its own too, whose tables its first entries then find made). A state of a newer
 * version is refused.
 */
export function migratePgState(c: PgConnection, migrations: readonly string[] = PG_STATE_MIGRATIONS): void {
  underAdvisoryLock(c, STATE_MIGRATION_LOCK, () =>
    c.tx(() => {
      c.exec(
        'CREATE TABLE IF NOT EXISTS mcp_state_schema (version integer NOT NULL); INSERT INTO mcp_state_schema SELECT 0 WHERE NOT EXISTS (SELECT FROM mcp_state_schema)',
      );
      const current = c.one<{ version: number }>('SELECT version FROM mcp_state_schema')!.version;
      if (current > migrations.length)
        throw new PgSchemaProblem(`made by a newer version (state schema ${current}, this one knows ${migrations.length})`);
      for (let v = current; v < migrations.length; v++) {
        c.exec(migrations[v]!);
        c.query('UPDATE mcp_state_schema SET version = $1', [v + 1]);
      }
    }),
  );
}

export class PgMcpState implements McpStateSync {
  /**
   * The state over the store's connection `c`, its tables migrated first (`migrated`: they
   * were, by this process: a service thread's). Each call waits on `c`: the MCP server runs
   * them on its service threads (service/pool.ts), through `answeredBy` of ../async.ts.
   */
  constructor(
    private readonly c: PgConnection,
    o: { migrated?: boolean } = {},
  ) {
    if (!o.migrated) migratePgState(c);
  }

  /** Nothing of its own to close: the connection is the store's, closed with it. */
  close(): void {}

  /** OAuth sign-in's clients, grants, codes and tokens, shared by every instance on the database. */
  oauth(): OAuthStoreSync {
    return pgOAuthStore(this.c);
  }

  /** The idempotency keys of one scope (the owner the server acts for). */
  keys(scope: string) {
    const c = this.c;
    return {
      /**
       * Claim `key` for a call: undefined when this call now owns it, else the call already
       * there. Atomic: one INSERT that only one instance's call can win.
       */
      reserve(key: string, method: string, paramsHash: string): KeptCall | undefined {
        const won = c.query(
          `INSERT INTO mcp_idempotency_keys (scope, key, method, params_hash, status, body, created_at)
           VALUES ($1, $2, $3, $4, 0, '', $5) ON CONFLICT (scope, key) DO NOTHING`,
          [scope, key, method, paramsHash, isoTime()],
        ).rowCount;
        if (won === 1) return undefined;
        return keptCall(
          c.one<KeyRow>('SELECT method, params_hash, status, body FROM mcp_idempotency_keys WHERE scope = $1 AND key = $2', [scope, key]),
        );
      },
      /** Keep the answer of a reserved call. */
      complete(key: string, answer: KeptAnswer): void {
        c.query('UPDATE mcp_idempotency_keys SET status = $1, body = $2 WHERE scope = $3 AND key = $4 AND status = 0', [
          answer.status,
          bodyText(answer.body),
          scope,
          key,
        ]);
      },
      /** Give the key back (the call moved nothing), so it may be used again. */
      release(key: string): void {
        c.query('DELETE FROM mcp_idempotency_keys WHERE scope = $1 AND key = $2 AND status = 0', [scope, key]);
      },
    };
  }

  /** The bulk plans of one scope (previewBulk, runBulk). */
  plans(scope: string) {
    return pgBulkPlans(this.c, scope);
  }

  /** Which contact holds which account, as answers showed it to one scope (every instance's). */
  holders(scope: string): Sync<AccountHolders> {
    const c = this.c;
    return {
      get: (accountId) =>
        c.one<{ contact_id: number }>('SELECT contact_id FROM mcp_account_holders WHERE scope = $1 AND account_id = $2', [scope, accountId])
          ?.contact_id,
      // One statement for the whole answer: one round trip.
      put: (pairs) => {
        c.query(
          `INSERT INTO mcp_account_holders (scope, account_id, contact_id)
           SELECT $1, a, h FROM unnest($2::bigint[], $3::bigint[]) AS t(a, h)
           ON CONFLICT (scope, account_id) DO UPDATE SET contact_id = excluded.contact_id`,
          [scope, pairs.map((p) => p[0]), pairs.map((p) => p[1])],
        );
      },
    };
  }

  /** The money window of one scope: what the caps count. */
  moves(scope: string) {
    const c = this.c;
    return {
      /**
       * Reserve `amount` of an account's window unless it passes a cap (`force`: even then).
       * The account's advisory lock makes read-then-insert one step across instances: the
       * next reservation of the account waits for this one's commit, and (READ COMMITTED)
       * then sees it. No serialisation failures, so nothing is retried while the caller waits.
       */
      reserve(accountId: number, amount: number, caps: Caps, force: boolean, now = Date.now()): Reservation {
        return c.tx(
          () => {
            c.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [WINDOW_LOCK, `${scope} account ${accountId}`]);
            const used = c.one<{ used: number }>(
              'SELECT coalesce(sum(amount), 0)::bigint AS used FROM mcp_money_moves WHERE scope = $1 AND account_id = $2 AND at_ms > $3',
              [scope, accountId, now - DAY_MS],
            )!.used;
            return (
              refusedReservation(used, amount, caps, force) ?? {
                ok: true,
                id: c.one<{ id: number }>(
                  'INSERT INTO mcp_money_moves (scope, account_id, amount, at_ms) VALUES ($1, $2, $3, $4) RETURNING id',
                  [scope, accountId, amount, now],
                )!.id,
              }
            );
          },
          { readCommitted: true },
        );
      },
      /** Give a reservation back: the call moved nothing. */
      release(id: number): void {
        c.query('DELETE FROM mcp_money_moves WHERE id = $1', [id]);
      },
    };
  }
}
