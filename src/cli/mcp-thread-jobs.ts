/**
 * What the MCP server on PostgreSQL asks of its service threads besides API calls, so that its
 * serving thread never waits on the database: the MCP state's reads and writes (idempotency
 * keys, the money window, accounts' holders, bulk plans, OAuth sign-in), the local contact
 * search and workspace directory, an account's holder. Each thread loads this module
 * (`PoolSetup.jobs`) and runs a job on its own connection, as it answers an API call; the
 * serving thread's side is `threadedState`, `threadedSearch` and `threadedHolder`.
 */
import type { AuditEntry } from '../api/backend.js';
import { IndexRefused, type FindOptions } from '../mcp/contact-search.js';
import type { AuditPage, AuditQuery, AuditTrail } from '../mcp/state.js';
import { LocalBackend } from '../service/backend.js';
import type { Service } from '../service/pipeline.js';
import type { ServicePool } from '../service/pool.js';
import { answeredBy, runStateJob, type McpState, type StateJob } from '../state/async.js';
import { PgMcpState } from '../state/pg/mcp-state.js';
import { pgOAuthStore } from '../state/pg/oauth-store.js';
import type { PgStore } from '../store/pg/index.js';
import { localSearch, type SearchParts } from './search-wiring.js';

/** Who a search acts as: the LocalBackend's identity (a key's hash, checked at each call, or an owner). */
export type SearchIdentity = { keyHash: string } | { ownerId: number };

/** A search or directory call: the part, its method and arguments (no signal or callback crosses). */
interface SearchJob {
  as: SearchIdentity;
  part: keyof SearchParts;
  method: string;
  args: unknown[];
}

type Job = { state: StateJob } | { search: SearchJob } | { holder: number } | { audit: { method: 'append' | 'read'; arg: unknown } };

/** What a search job answers: its value, or the API's refusal (IndexRefused, made again on the serving thread). */
type SearchAnswer = { value: unknown } | { refused: { status: number; body: unknown; headers: Record<string, string> } };

/** Searches kept per identity at most (one more forgets them all). */
const MAX_SEARCHES = 1_000;

/** The handler of a service thread (service/pool-worker.ts): runs each job on the thread's own store and service. */
export function jobHandler(store: PgStore, service: Service): (job: Job) => unknown {
  const state = new PgMcpState(store.conn, { migrated: true });
  const searches = new Map<string, SearchParts>();
  const searchAs = (as: SearchIdentity): SearchParts => {
    const k = JSON.stringify(as);
    let s = searches.get(k);
    if (!s) {
      if (searches.size >= MAX_SEARCHES) searches.clear();
      searches.set(k, (s = localSearch(store, new LocalBackend(service, as))));
    }
    return s;
  };
  return (job) => {
    if ('state' in job) return runStateJob(state, job.state);
    if ('holder' in job) return store.contactAccounts.get(job.holder)?.contact_id;
    if ('audit' in job)
      return job.audit.method === 'append'
        ? store.audit.append(job.audit.arg as AuditEntry)
        : store.audit.read(job.audit.arg as AuditQuery);
    const { as, part, method, args } = job.search;
    const target = searchAs(as)[part] as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
    return target[method]!(...args).then(
      (value): SearchAnswer => ({ value }),
      (e: unknown): SearchAnswer => {
        if (e instanceof IndexRefused) return { refused: { status: e.status, body: e.body, headers: e.headers } };
        throw e;
      },
    );
  };
}

/** The MCP state on the service threads of `pool` (the request path's OAuth reads on the serving thread's async pool, over `store`). */
export function threadedState(pool: () => Promise<ServicePool>, store: PgStore): McpState {
  const own = pgOAuthStore(store.conn);
  return answeredBy(
    async (job) => (await pool()).run({ state: job } satisfies Job, `${job.part}.${job.method}`),
    { access: own.access, touchGrant: own.touchGrant },
    () => {},
  );
}

/** The local search and directory acting as `as`, each call run on a service thread of `pool`. */
export function threadedSearch(pool: ServicePool, as: SearchIdentity): SearchParts {
  const call =
    (part: keyof SearchParts, method: string) =>
    async (...args: unknown[]): Promise<never> => {
      const answer = (await pool.run(
        { search: { as, part, method, args: args.map(crossing) } } satisfies Job,
        `${part}.${method}`,
      )) as SearchAnswer;
      if ('refused' in answer) throw new IndexRefused(answer.refused.status, answer.refused.body, answer.refused.headers);
      return answer.value as never;
    };
  return {
    contacts: { find: call('contacts', 'find') },
    directory: {
      describe: call('directory', 'describe'),
      botChoices: call('directory', 'botChoices'),
      onlyBot: call('directory', 'onlyBot'),
      currencies: call('directory', 'currencies'),
    },
  };
}

/** A search's options without what cannot cross to a thread (the signal, the progress callback: a local search neither waits nor syncs). */
function crossing(arg: unknown): unknown {
  if (arg === null || typeof arg !== 'object' || !('limit' in arg)) return arg;
  const { signal: _signal, progress: _progress, ...rest } = arg as FindOptions;
  return rest;
}

/** The database's audit trail, each entry written and each page read on a service thread of `pool`. */
export function threadedAudit(pool: ServicePool): AuditTrail {
  return {
    append: async (entry) => void (await pool.run({ audit: { method: 'append', arg: entry } } satisfies Job, 'audit.append')),
    read: async (q) => (await pool.run({ audit: { method: 'read', arg: q } } satisfies Job, 'audit.read')) as AuditPage,
  };
}

/** Who holds an account, read on a service thread of `pool` (another instance may have shown it). */
export function threadedHolder(pool: ServicePool): (accountId: number) => Promise<number | undefined> {
  return async (accountId) => (await pool.run({ holder: accountId } satisfies Job, 'accountHolder')) as number | undefined;
}
