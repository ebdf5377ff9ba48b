/**
 * The MCP state's two ways of answering. Its interfaces (mcp/state.ts, oauth/store.ts) answer
 * promises, so that on PostgreSQL a read or write runs on a service thread and the serving
 * thread goes on with every other session meanwhile. The stores themselves are synchronous (a
 * SQLite file; PostgreSQL on a service thread's own connection): `Sync<T>` is such a store's
 * type, `answeredAtOnce` the promises over it.
 */
import type { OAuthStore } from '../oauth/store.js';
import type { AccountHolders, BulkPlans, IdempotencyKeys, MoneyWindow } from '../mcp/state.js';

/** `T` with each method answering at once what its promise would have. */
export type Sync<T> = { [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Awaited<R> : T[K] };

/** OAuth's store answering at once, but for the request path's own reads, which were promises already (PostgreSQL: its async pool). */
export type OAuthStoreSync = Sync<Omit<OAuthStore, 'access' | 'touchGrant'>> & Pick<OAuthStore, 'access' | 'touchGrant'>;

/** The MCP server's own state, per scope (every method a promise). */
export interface McpState {
  keys(scope: string): IdempotencyKeys;
  moves(scope: string): MoneyWindow;
  /** The bulk plans (previewBulk, runBulk). */
  plans(scope: string): BulkPlans;
  /** Which contact holds which account, as answers showed it to the scope. */
  holders(scope: string): AccountHolders;
  /** OAuth sign-in's store (`--auth oauth`). */
  oauth(): OAuthStore;
  close(): void;
}

/** The same state answering at once: a SQLite file, or PostgreSQL on the thread that holds the connection. */
export interface McpStateSync {
  keys(scope: string): Sync<IdempotencyKeys>;
  moves(scope: string): Sync<MoneyWindow>;
  plans(scope: string): Sync<BulkPlans>;
  holders(scope: string): Sync<AccountHolders>;
  oauth(): OAuthStoreSync;
  close(): void;
}

/** The parts of the state a call names (`StateJob.part`). */
type StatePart = 'keys' | 'moves' | 'plans' | 'holders' | 'oauth';

/** One call of the state: its part (of a scope), method and arguments; what crosses to a service thread. */
export interface StateJob {
  part: StatePart;
  scope: string;
  method: string;
  args: unknown[];
}

/** Runs `job` on `state`, at once. */
export function runStateJob(state: McpStateSync, job: StateJob): unknown {
  const part = (job.part === 'oauth' ? state.oauth() : state[job.part](job.scope)) as unknown as Record<
    string,
    (...a: unknown[]) => unknown
  >;
  const method = part[job.method];
  if (typeof method !== 'function') throw new Error(`the MCP state has no ${job.part}.${job.method}`);
  return method.apply(part, job.args);
}

/** Each method of `part` as a promise of what it answers (a throw: a rejected promise). */
export function promised<T extends object>(part: object): T {
  const out: Record<string, unknown> = {};
  // Its own properties and its class's methods (a store's part may be either).
  const names = new Set(Object.keys(part));
  for (let p = Object.getPrototypeOf(part) as object | null; p && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null)
    for (const n of Object.getOwnPropertyNames(p)) if (n !== 'constructor') names.add(n);
  for (const name of names) {
    const fn = (part as Record<string, unknown>)[name];
    out[name] =
      typeof fn === 'function'
        ? (...args: unknown[]) => {
            try {
              return Promise.resolve((fn as (...a: unknown[]) => unknown).apply(part, args));
            } catch (e) {
              return Promise.reject(e);
            }
          }
        : fn;
  }
  return out as T;
}

/** The state of a synchronous store, its answers as promises. */
export function answeredAtOnce(state: McpStateSync): McpState {
  return {
    keys: (scope) => promised(state.keys(scope)),
    moves: (scope) => promised(state.moves(scope)),
    plans: (scope) => promised(state.plans(scope)),
    holders: (scope) => promised(state.holders(scope)),
    oauth: () => promised(state.oauth()),
    close: () => state.close(),
  };
}

/** The state whose every call is `run` (PostgreSQL: on a service thread); `oauth`'s request-path reads kept from `own` (the serving thread's async pool). */
export function answeredBy(
  run: (job: StateJob) => Promise<unknown>,
  own: Pick<OAuthStore, 'access' | 'touchGrant'>,
  close: () => void,
): McpState {
  const part = <T>(name: StatePart, scope: string): T =>
    new Proxy({} as Record<string, unknown>, {
      get: (_, method) =>
        // Not a thenable: a part may be awaited as a value.
        typeof method === 'string' && method !== 'then' ? (...args: unknown[]) => run({ part: name, scope, method, args }) : undefined,
    }) as T;
  return {
    keys: (scope) => part('keys', scope),
    moves: (scope) => part('moves', scope),
    plans: (scope) => part('plans', scope),
    holders: (scope) => part('holders', scope),
    oauth: () => {
      const rest = part<OAuthStore>('oauth', '');
      return new Proxy(rest, {
        get: (target, method) => (method === 'access' || method === 'touchGrant' ? own[method] : target[method as keyof OAuthStore]),
      });
    },
    close,
  };
}
