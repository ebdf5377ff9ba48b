/** The SQLite store: one file and the statements of every resource. Only this folder speaks SQL. */
import type Database from 'better-sqlite3';
import { AdminStore } from './admin.js';
import { AuditStore } from './audit.js';
import { CoreCache } from './core-cache.js';
import { BalanceStore } from './balance.js';
import { ContactAccountStore } from './contact-accounts.js';
import { ContactStore } from './contacts.js';
import { DirectoryStore } from './directory.js';
import { FixtureStore } from './fixtures.js';
import { ListStore } from './lists.js';
import { OwnerStore } from './owners.js';
import { ProjectStore } from './projects.js';
import { MessageStore } from './messages.js';
import { ReferralStore } from './referrals.js';
import { sqliteSearchIndex, type SearchIndex } from './search.js';
import { SettingStore } from './settings.js';
import { TagStore } from './tags.js';
import { VariableStore } from './variables.js';
import { openChecked, openDb, type CheckedOpen, type Db } from './db.js';
import type { StoreApi } from './store-api.js';
import { MemoryRateWindows } from './rate-windows.js';

export class Store implements StoreApi {
  readonly owners: OwnerStore;
  readonly projects: ProjectStore;
  readonly settings: SettingStore;
  readonly admin: AdminStore;
  readonly lists: ListStore;
  readonly contactAccounts: ContactAccountStore;
  readonly contacts: ContactStore;
  readonly balance: BalanceStore;
  readonly variables: VariableStore;
  readonly tags: TagStore;
  readonly messages: MessageStore;
  readonly referrals: ReferralStore;
  readonly search: SearchIndex;
  readonly directory: DirectoryStore;
  readonly audit: AuditStore;
  readonly fixtures: FixtureStore;
  readonly rateWindows = new MemoryRateWindows();
  /** Owners, deprecations and list schemas between requests (core-cache.ts). */
  readonly cache: CoreCache;
  /** One transaction wrapper for every call: making one per call costs more than a debit's SQL. */
  private readonly runner: Database.Transaction<(fn: () => unknown) => unknown>;
  constructor(readonly db: Db) {
    this.runner = db.transaction((fn: () => unknown) => fn());
    this.cache = new CoreCache(db);
    this.owners = new OwnerStore(db, this.cache);
    this.projects = new ProjectStore(db);
    this.settings = new SettingStore(db, this.cache);
    this.admin = new AdminStore(db, (fn) => this.tx(fn));
    this.lists = new ListStore(db, this.cache);
    this.contactAccounts = new ContactAccountStore(db);
    this.contacts = new ContactStore(db);
    this.balance = new BalanceStore(db);
    this.variables = new VariableStore(db);
    this.tags = new TagStore(db);
    this.messages = new MessageStore(db);
    this.referrals = new ReferralStore(db);
    this.search = sqliteSearchIndex(db);
    this.directory = new DirectoryStore(db);
    this.audit = new AuditStore(db);
    this.fixtures = new FixtureStore(db);
  }

  static open(file: string): Store {
    return new Store(openDb(file));
  }

  /**
   * Open for a server's start (see `openChecked`): `check` runs on the store inside the opening
   * transaction, so when it throws the file is left as it was.
   */
  static openChecked<T>(file: string, opts: CheckedOpen, check: (store: Store) => T): { store: Store; result: T } {
    let store: Store | undefined;
    const { result } = openChecked(file, opts, (db) => check((store = new Store(db))));
    return { store: store!, result };
  }

  /** Run `fn` in one IMMEDIATE transaction: all of it is written, or none. */
  tx<T>(fn: () => T): T {
    return this.runner.immediate(fn) as T;
  }

  /**
   * Run reads in one deferred (read) transaction: all of them see one snapshot (a total and its
   * page agree while another process writes). Nothing in `fn` may write.
   */
  read<T>(fn: () => T): T {
    return this.runner.deferred(fn) as T;
  }

  close(): void {
    this.db.close();
  }
}
