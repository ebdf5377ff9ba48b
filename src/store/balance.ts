/** The platform account's own balance (owners.balance, migration 3): the SQL. */
import type { Db } from './db.js';

export class BalanceStore {
  private readonly s;
  constructor(db: Db) {
    this.s = {
      balance: db.prepare<[number], { balance: number; currency: string }>('SELECT balance, currency FROM owners WHERE id = ?'),
      setBalance: db.prepare<[number, string, number]>('UPDATE owners SET balance = ?, currency = ? WHERE id = ?'),
    };
  }

  /** Balance in minor units of `currency`. */
  get(ownerId: number): { balance: number; currency: string } | undefined {
    return this.s.balance.get(ownerId);
  }
  set(ownerId: number, balance: number, currency: string): boolean {
    return this.s.setBalance.run(balance, currency, ownerId).changes > 0;
  }
}
