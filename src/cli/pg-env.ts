/**
 * The settings of a PostgreSQL database from the environment, read and checked when a command
 * opens one (a bad value is a one-line error, exit status 2, before anything connects):
 * - WORKSPACE_PG_POOL: service threads of `serve`, each holding one connection (default 4);
 *   the requests an instance answers at once, and the connections it holds.
 * - WORKSPACE_PG_STATEMENT_TIMEOUT_MS: a statement running longer is cancelled and its request
 *   answers 503 with Retry-After (default 15000).
 */
import { UsageError } from './args.js';

export interface PgEnv {
  poolSize: number;
  statementTimeoutMs: number;
}

const SETTINGS = {
  poolSize: { name: 'WORKSPACE_PG_POOL', min: 1, max: 64, fallback: 4, what: 'service threads of serve, each with its own connection' },
  statementTimeoutMs: {
    name: 'WORKSPACE_PG_STATEMENT_TIMEOUT_MS',
    min: 100,
    max: 3_600_000,
    fallback: 15_000,
    what: 'milliseconds a statement may run',
  },
} as const;

export function pgEnv(env: NodeJS.ProcessEnv = process.env): PgEnv {
  const read = (s: (typeof SETTINGS)[keyof PgEnv]): number => {
    const v = env[s.name];
    if (v === undefined || v === '') return s.fallback;
    if (!/^\d+$/.test(v) || Number(v) < s.min || Number(v) > s.max) {
      throw new UsageError(`${s.name} must be a whole number from ${s.min} to ${s.max} (${s.what}; default ${s.fallback}), not ${v}`);
    }
    return Number(v);
  };
  return { poolSize: read(SETTINGS.poolSize), statementTimeoutMs: read(SETTINGS.statementTimeoutMs) };
}
