/**
 * The PostgreSQL store: the same parts as the SQLite store (../index.ts) over a database that
 * several instances share. Opening it migrates under an advisory lock (migrations.ts).
 *
 * Not whole yet: the parts below are those that hold the state every instance must share
 * (owners and keys, settings and deprecations, the rate limit's windows, balances, the ledger,
 * the audit trail). `PgStoreParts` names them; the CLI refuses a PostgreSQL URL until the
 * store is the whole `StoreApi`, so no server ever answers half the API from it.
 */
import type { StoreApi } from '../contract.js';
import { PgBalanceStore, PgContactAccountStore } from './accounts.js';
import { PgAuditStore } from './audit.js';
import { PgConnection, type PgOptions } from './connection.js';
import { migratePg } from './migrations.js';
import { PgOwnerStore } from './owners.js';
import { PgRateWindows } from './rate-windows.js';
import { PgSettingStore } from './settings.js';

export { isPostgresUrl } from './url.js';

/** The parts of `StoreApi` the PostgreSQL store has so far. */
export type PgStoreParts = Pick<StoreApi, 'owners' | 'settings' | 'balance' | 'contactAccounts' | 'audit' | 'rateWindows' | 'tx' | 'close'>;

export class PgStore implements PgStoreParts {
  readonly owners: PgOwnerStore;
  readonly settings: PgSettingStore;
  readonly balance: PgBalanceStore;
  readonly contactAccounts: PgContactAccountStore;
  readonly audit: PgAuditStore;
  readonly rateWindows: PgRateWindows;

  constructor(readonly conn: PgConnection) {
    this.owners = new PgOwnerStore(conn);
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

  tx<T>(fn: () => T): T {
    return this.conn.tx(fn);
  }

  close(): void {
    this.conn.close();
  }
}
