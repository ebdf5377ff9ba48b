/** Contacts: export, count, create or update: the SQL. */
import type { Db } from './db.js';

export class ContactStore {
  constructor(private readonly db: Db) {}
}
