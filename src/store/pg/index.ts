/**
 * The PostgreSQL store: the same parts as the SQLite store (../index.ts) over a database that
 * several instances share. Opening it migrates under an advisory lock (migrations.ts). The
 * MCP server's own state on it is a part of its own (src/state/pg/mcp-state.ts), as on SQLite.
 */
import type { StoreApi, TxOptions } from '../store-api.js';
import { PgBalanceStore, PgContactAccountStore } from './accounts.js';
import { PgAdminStore } from './admin.js';
import { PgAuditStore } from './audit.js';
import { PgConnection, type PgOptions } from './connection.js';
import { PgContactStore } from './contacts.js';
import { PgDirectoryStore } from './directory.js';
import { PgFixtureStore } from './fixtures.js';
import { PgListStore } from './lists.js';
import { PgMessageStore } from './messages.js';
import { migratePg } from './migrations.js';
import { PgOwnerStore } from './owners.js';
import { PgProjectStore } from './projects.js';
import { PgRateWindows } from './rate-windows.js';
import { PgReferralStore } from './referrals.js';
import type { SearchIndex } from '../search.js';
import { pgSearchIndex } from './search.js';
import { PgSettingStore } from './settings.js';
import { PgTagStore } from './tags.js';
import { PgVariableStore } from './variables.js';

export class PgStore implements StoreApi {
  readonly owners: PgOwnerStore;
  readonly projects: PgProjectStore;
  readonly admin: PgAdminStore;
  readonly contacts: PgContactStore;
  readonly variables: PgVariableStore;
  readonly tags: PgTagStore;
  readonly messages: PgMessageStore;
  readonly referrals: PgReferralStore;
  readonly directory: PgDirectoryStore;
  readonly lists: PgListStore;
  readonly search: SearchIndex;
  readonly fixtures: PgFixtureStore;
  readonly settings: PgSettingStore;
  readonly balance: PgBalanceStore;
  readonly contactAccounts: PgContactAccountStore;
  readonly audit: PgAuditStore;
  readonly rateWindows: PgRateWindows;
  private searchConn: PgConnection | undefined;

  constructor(readonly conn: PgConnection) {
    this.owners = new PgOwnerStore(conn);
    this.projects = new PgProjectStore(conn);
    this.admin = new PgAdminStore(conn);
    this.contacts = new PgContactStore(conn);
    this.variables = new PgVariableStore(conn);
    this.tags = new PgTagStore(conn);
    this.messages = new PgMessageStore(conn);
    this.referrals = new PgReferralStore(conn);
    this.directory = new PgDirectoryStore(conn);
    this.lists = new PgListStore(conn);
    // The search on a connection of its own, opened at the first search: its statements are
    // prepared with generic plans (planning one costs more than running it); the store's
    // statements are planned for their values on `conn`.
    this.search = pgSearchIndex(() => (this.searchConn ??= conn.sibling({ genericPlans: true })));
    this.fixtures = new PgFixtureStore(conn);
    this.settings = new PgSettingStore(conn);
    this.balance = new PgBalanceStore(conn);
    this.contactAccounts = new PgContactAccountStore(conn);
    this.audit = new PgAuditStore(conn);
    this.rateWindows = new PgRateWindows(conn);
  }

  /** Connect to `url` and bring its schema up to date; throws PgSchemaProblem for a database not ours. */
  static open(url: string, opts?: PgOptions): PgStore {
    const conn = new PgConnection(url, opts);
    try {
      migratePg(conn);
    } catch (e) {
      conn.close();
      throw e;
    }
    return new PgStore(conn);
  }

  /** Nothing is cached between requests here: every instance reads owners and deprecations afresh. */
  readonly cache = { hold(_arrival?: number): void {}, release(): void {} };

  tx<T>(fn: () => T, opts?: TxOptions): T {
    return this.conn.tx(fn, { readCommitted: opts?.rowLocks });
  }

  /** One snapshot, read only: REPEATABLE READ gives it without the SERIALIZABLE predicate locks, and never fails to commit. */
  read<T>(fn: () => T): T {
    return this.conn.tx(fn, { snapshot: true });
  }

  close(): void {
    this.searchConn?.close();
    this.conn.close();
  }
}
