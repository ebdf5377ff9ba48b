/** Contact accounts and their journal: the SQL. */
import type { Db } from './db.js';

export class ContactAccountStore {
  constructor(private readonly db: Db) {}
}
