/**
 * The MCP server's own state, in a small SQLite file of its own (never an API database): the
 * idempotency keys of the money tools, the money window, accounts' holders, by scope (who the
 * server acts for). It implements the MCP layer's state interfaces (`mcp/state.ts`), answering
 * at once (`McpStateSync`; `answeredAtOnce` of async.ts makes them the promises the MCP layer
 * awaits); `pg/mcp-state.ts` is the same on PostgreSQL, run on the service threads.
 */
import { parseOrderedJson } from '../common/ordered.js';
import type { AccountHolders, Caps, KeptAnswer, KeptCall, Reservation } from '../mcp/state.js';
import { openDb, type Db } from '../store/db.js';
import { isoTime } from '../store/time.js';
import type { McpStateSync, OAuthStoreSync, Sync } from './async.js';
import { sqliteOAuthStore } from './oauth-store.js';
import { sqliteBulkPlans } from './bulk-plans.js';
import { MCP_STATE_APPLICATION_ID, MCP_STATE_MIGRATIONS } from './schema.js';

export type { McpState, McpStateSync } from './async.js';

/** The window of the daily cap. */
export const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Which cap `amount` would pass, given what the window holds (`used`); undefined when it may
 * be reserved. `force`: none (a confirmed move is counted whatever the caps say).
 */
export function refusedReservation(used: number, amount: number, caps: Caps, force: boolean): Reservation | undefined {
  if (!force && caps.perCall !== undefined && amount > caps.perCall) return { ok: false, over: 'amount', used };
  if (!force && caps.daily !== undefined && used + amount > caps.daily) return { ok: false, over: 'daily', used };
  return undefined;
}

export interface KeyRow {
  method: string;
  params_hash: string;
  status: number;
  body: string;
}

/** A kept key's row as the MCP layer reads it (none: the key was given back meanwhile). */
export function keptCall(row: KeyRow | undefined): KeptCall | undefined {
  if (!row) return undefined;
  const kept: KeptCall = { method: row.method, paramsHash: row.params_hash };
  if (row.status !== 0) kept.answer = { status: row.status, body: row.body === '' ? undefined : parseOrderedJson(row.body) };
  return kept;
}

/** A kept answer's body as stored: JSON text, or '' for none. */
export const bodyText = (body: unknown): string => (body === undefined ? '' : JSON.stringify(body));

export class McpStateStore implements McpStateSync {
  private readonly s;
  private constructor(readonly db: Db) {
    this.s = {
      get: db.prepare<[string, string], KeyRow>(
        'SELECT method, params_hash, status, body FROM idempotency_keys WHERE scope = ? AND key = ?',
      ),
      reserve: db.prepare(
        `INSERT INTO idempotency_keys (scope, key, method, params_hash, status, body, created_at)
         VALUES (@scope, @key, @method, @params_hash, 0, '', @created_at)
         ON CONFLICT(scope, key) DO NOTHING`,
      ),
      complete: db.prepare<[number, string, string, string]>(
        'UPDATE idempotency_keys SET status = ?, body = ? WHERE scope = ? AND key = ? AND status = 0',
      ),
      release: db.prepare<[string, string]>('DELETE FROM idempotency_keys WHERE scope = ? AND key = ? AND status = 0'),
      used: db.prepare<[string, number, number], { used: number }>(
        'SELECT coalesce(sum(amount), 0) AS used FROM money_moves WHERE scope = ? AND account_id = ? AND at_ms > ?',
      ),
      move: db.prepare<[string, number, number, number]>('INSERT INTO money_moves (scope, account_id, amount, at_ms) VALUES (?, ?, ?, ?)'),
      drop: db.prepare<[number]>('DELETE FROM money_moves WHERE id = ?'),
      holder: db.prepare<[string, number], { contact_id: number }>(
        'SELECT contact_id FROM account_holders WHERE scope = ? AND account_id = ?',
      ),
      hold: db.prepare<[string, number, number]>(
        `INSERT INTO account_holders (scope, account_id, contact_id) VALUES (?, ?, ?)
         ON CONFLICT(scope, account_id) DO UPDATE SET contact_id = excluded.contact_id`,
      ),
    };
    this.holdTx = db.transaction((scope: string, pairs: ReadonlyArray<readonly [number, number]>) => {
      for (const [accountId, contactId] of pairs) this.s.hold.run(scope, accountId, contactId);
    });
    // Read the window and reserve in one IMMEDIATE transaction: concurrent calls, from any
    // number of processes on the file, cannot together pass the daily cap.
    this.reserveTx = db.transaction(
      (scope: string, accountId: number, amount: number, caps: Caps, force: boolean, now: number): Reservation => {
        const used = this.s.used.get(scope, accountId, now - DAY_MS)!.used;
        return (
          refusedReservation(used, amount, caps, force) ?? {
            ok: true,
            id: Number(this.s.move.run(scope, accountId, amount, now).lastInsertRowid),
          }
        );
      },
    );
  }
  private readonly reserveTx;
  private readonly holdTx;

  /** Which contact holds which account, as answers showed it to one scope. */
  holders(scope: string): Sync<AccountHolders> {
    const s = this.s;
    const hold = this.holdTx;
    return {
      get: (accountId) => s.holder.get(scope, accountId)?.contact_id,
      put: (pairs) => hold.immediate(scope, pairs),
    };
  }

  /** The money window of one scope: what the caps count. */
  moves(scope: string) {
    const s = this.s;
    const reserve = this.reserveTx;
    return {
      /** Reserve `amount` (minor units) of an account's window unless it passes a cap (`force`: even then). */
      reserve(accountId: number, amount: number, caps: Caps, force: boolean, now = Date.now()): Reservation {
        return reserve.immediate(scope, accountId, amount, caps, force, now);
      },
      /** Give a reservation back: the call moved nothing. */
      release(id: number): void {
        s.drop.run(id);
      },
    };
  }

  /** Open (creating if needed) the state file; refuses a SQLite file of another kind. */
  static open(file: string): McpStateStore {
    const db = openDb(file, MCP_STATE_MIGRATIONS);
    if (db.pragma('application_id', { simple: true }) !== MCP_STATE_APPLICATION_ID) {
      db.close();
      throw new Error(`${file} is not an MCP state file`);
    }
    return new McpStateStore(db);
  }

  /** The idempotency keys of one scope (the owner or key the server acts for). */
  keys(scope: string) {
    const s = this.s;
    return {
      /**
       * Claim `key` for a call: undefined when this call now owns it, else the call already
       * there (finished, or another call's reservation). Atomic: one statement.
       */
      reserve(key: string, method: string, paramsHash: string): KeptCall | undefined {
        const r = s.reserve.run({ scope, key, method, params_hash: paramsHash, created_at: isoTime() });
        if (r.changes === 1) return undefined;
        return keptCall(s.get.get(scope, key));
      },
      /** Keep the answer of a reserved call. */
      complete(key: string, answer: KeptAnswer): void {
        s.complete.run(answer.status, bodyText(answer.body), scope, key);
      },
      /** Give the key back (the call moved nothing), so it may be used again. */
      release(key: string): void {
        s.release.run(scope, key);
      },
    };
  }

  /** The bulk plans of one scope (previewBulk, runBulk). */
  plans(scope: string) {
    return sqliteBulkPlans(this.db, scope);
  }

  /** OAuth sign-in's clients, grants, codes and tokens. */
  oauth(): OAuthStoreSync {
    return sqliteOAuthStore(this.db);
  }

  close(): void {
    this.db.close();
  }
}
