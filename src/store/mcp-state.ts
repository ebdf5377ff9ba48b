/**
 * The MCP server's own state, in a small SQLite file of its own (never an API database): the
 * idempotency keys of the money tools, by scope (who the server acts for). It implements the
 * MCP layer's state interfaces (`mcp/state.ts`), which the CLI passes in.
 */
import { parseOrderedJson } from '../api/ordered.js';
import { openDb, type Db } from './db.js';
import { isoTime } from './time.js';

/** Marks a file as this schema (`PRAGMA application_id`), so another SQLite file is refused. */
export const MCP_STATE_APPLICATION_ID = 0x574d4353;

/** Numbered, forward-only migrations of the state file; never edit a released entry. */
export const MCP_STATE_MIGRATIONS: readonly string[] = [
  // 1: idempotency keys. status 0 with an empty body is a reservation: the call is under way,
  // or its outcome was never learnt.
  `
  PRAGMA application_id = ${MCP_STATE_APPLICATION_ID};
  CREATE TABLE idempotency_keys (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    method TEXT NOT NULL,
    params_hash TEXT NOT NULL,
    status INTEGER NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (scope, key)
  ) STRICT;
  `,
];

interface KeyRow {
  method: string;
  params_hash: string;
  status: number;
  body: string;
}

/** A kept call as the MCP layer reads it: the answer only once the call finished. */
export interface KeptCallRow {
  method: string;
  paramsHash: string;
  answer?: { status: number; body: unknown };
}

export class McpStateStore {
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
      reserve(key: string, method: string, paramsHash: string): KeptCallRow | undefined {
        const r = s.reserve.run({ scope, key, method, params_hash: paramsHash, created_at: isoTime() });
        if (r.changes === 1) return undefined;
        const row = s.get.get(scope, key);
        if (!row) return undefined;
        const kept: KeptCallRow = { method: row.method, paramsHash: row.params_hash };
        if (row.status !== 0) kept.answer = { status: row.status, body: row.body === '' ? undefined : parseOrderedJson(row.body) };
        return kept;
      },
      /** Keep the answer of a reserved call. */
      complete(key: string, answer: { status: number; body: unknown }): void {
        s.complete.run(answer.status, answer.body === undefined ? '' : JSON.stringify(answer.body), scope, key);
      },
      /** Give the key back (the call moved nothing), so it may be used again. */
      release(key: string): void {
        s.release.run(scope, key);
      },
    };
  }

  close(): void {
    this.db.close();
  }
}
