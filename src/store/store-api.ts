/**
 * The store the service is written against: one interface, two implementations (SQLite,
 * `index.ts`; PostgreSQL, `pg/`). Each part is the public surface of the SQLite part, so the
 * two cannot drift apart: the PostgreSQL part must give the same methods with the same types.
 * The service only ever sees this interface; no SQL dialect is named outside the store.
 */
import type { AdminStore } from './admin.js';
import type { AuditStore } from './audit.js';
import type { BalanceStore } from './balance.js';
import type { ContactAccountStore } from './contact-accounts.js';
import type { ContactStore } from './contacts.js';
import type { DirectoryStore } from './directory.js';
import type { FixtureStore } from './fixtures.js';
import type { ListStore } from './lists.js';
import type { MessageStore } from './messages.js';
import type { OwnerStore } from './owners.js';
import type { ProjectStore } from './projects.js';
import type { ReferralStore } from './referrals.js';
import type { SearchIndex } from './search.js';
import type { SettingStore } from './settings.js';
import type { TagStore } from './tags.js';
import type { VariableStore } from './variables.js';

/** The public methods of a store part (its private statements left out). */
export type Surface<T> = { [K in keyof T]: T[K] };

/** One owner's rate-limit window after a request was offered to it. */
export interface WindowHit {
  /** When the window began (ms). */
  start: number;
  /** Requests counted in it, at most the limit. */
  count: number;
  /** Whether this request was counted (else the limit was reached). */
  counted: boolean;
}

/**
 * The per-owner request windows of the rate limit. Where they live is the store's choice: the
 * SQLite store keeps them in the process (one process serves a file); the PostgreSQL store in
 * the database, so that every instance on it counts in the same window.
 */
export interface RateWindows {
  /** Offer a request of `owner` at `now` (ms): counted unless `limit` already were in its window of `windowMs`. */
  hit(owner: number, now: number, windowMs: number, limit: number): WindowHit;
}

/** How a transaction guards its reads (the SQLite store's IMMEDIATE transactions are serial anyway). */
export interface TxOptions {
  /**
   * `fn` writes through conditional statements that check what they change (an `UPDATE …
   * WHERE amount + $1 >= 0`) and locks any row it reads to decide after one of them fails:
   * PostgreSQL runs it at READ COMMITTED, so concurrent writes to one row queue on its lock
   * instead of failing as serialisation conflicts. Inside another transaction it changes nothing.
   */
  rowLocks?: boolean;
}

/** The database cannot be reached now (connection lost or refused, statement timed out): 503. */
export class StoreUnavailable extends Error {
  /** Seconds a client should wait before trying again. */
  readonly retryAfter: number = 1;
}

/**
 * A nested transaction (a savepoint) lost a race with another connection's: the outermost
 * transaction runs again whole, and whatever was answered inside it meanwhile is discarded.
 */
export class StoreConflict extends StoreUnavailable {}

/**
 * The connection was lost while a transaction's COMMIT was under way, and whether it committed
 * could not be learnt: a 503 all the same, but the change may have been made, so the client
 * reads it back before sending it again.
 */
export class StoreOutcomeUnknown extends StoreUnavailable {}

/**
 * A text the database cannot hold: PostgreSQL's text (and jsonb) refuse the NUL character, where
 * SQLite keeps it. Thrown before the statement is sent, so the transaction rolls back whole and the
 * request is refused as bad input (422), never a 500 or a half-written change.
 */
export class StoreBadText extends Error {}

export interface StoreApi {
  readonly owners: Surface<OwnerStore>;
  readonly projects: Surface<ProjectStore>;
  readonly settings: Surface<SettingStore>;
  readonly admin: Surface<AdminStore>;
  readonly lists: Surface<ListStore>;
  readonly contactAccounts: Surface<ContactAccountStore>;
  readonly contacts: Surface<ContactStore>;
  readonly balance: Surface<BalanceStore>;
  readonly variables: Surface<VariableStore>;
  readonly tags: Surface<TagStore>;
  readonly messages: Surface<MessageStore>;
  readonly referrals: Surface<ReferralStore>;
  readonly search: SearchIndex;
  readonly directory: Surface<DirectoryStore>;
  readonly audit: Surface<AuditStore>;
  readonly fixtures: Surface<FixtureStore>;
  readonly rateWindows: RateWindows;
  /**
   * Caches kept between requests (owners, deprecations): `hold` checks once whether another
   * connection committed and trusts the cache until `release`; a request stamped at `arrival`
   * (`arrived()`) trusts a check made after it arrived instead. A store without caches makes
   * both do nothing.
   */
  readonly cache: { hold(arrival?: number): void; release(): void };
  /** Run `fn` in one transaction: all of it is written, or none. Nested calls are savepoints. */
  tx<T>(fn: () => T, opts?: TxOptions): T;
  /** Run reads that must see one snapshot (a total and its page agree). Nothing in `fn` may write. */
  read<T>(fn: () => T): T;
  close(): void;
}
