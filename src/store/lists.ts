/** List schemas and list records: the SQL. */
import type { Db } from './db.js';

export class ListStore {
  constructor(private readonly db: Db) {}
}
