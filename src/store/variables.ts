/** Contact variables (get, set, delete) and the lookup short links resolve through: the SQL. */
import type { Db } from './db.js';
import type { VariableRow } from './contacts.js';

const COLUMNS = 'id, contact_id, name, value, type, schema_id, deletable, payload';

export class VariableStore {
  private readonly s;
  constructor(db: Db) {
    this.s = {
      list: db.prepare<[number], VariableRow>(`SELECT ${COLUMNS} FROM contact_variables WHERE contact_id = ? ORDER BY id`),
      byId: db.prepare<[number], VariableRow>(`SELECT ${COLUMNS} FROM contact_variables WHERE id = ?`),
      byName: db.prepare<[number, string], VariableRow>(`SELECT ${COLUMNS} FROM contact_variables WHERE contact_id = ? AND name = ?`),
      upsert: db.prepare<{ contact_id: number; name: string; value: string; deletable: number }, VariableRow>(
        `INSERT INTO contact_variables (contact_id, name, value, deletable) VALUES (@contact_id, @name, @value, @deletable)
         ON CONFLICT (contact_id, name) DO UPDATE SET value = excluded.value, deletable = excluded.deletable
         RETURNING ${COLUMNS}`,
      ),
      delete: db.prepare<[number]>('DELETE FROM contact_variables WHERE id = ?'),
    };
  }

  /** A contact's variables, oldest first. */
  list(contactId: number): VariableRow[] {
    return this.s.list.all(contactId);
  }
  /** A variable by its id, whoever's it is (short links resolve through this). */
  byId(id: number): VariableRow | undefined {
    return this.s.byId.get(id);
  }
  byName(contactId: number, name: string): VariableRow | undefined {
    return this.s.byName.get(contactId, name);
  }
  /** Create the variable or change its value and `deletable`; its type stays. */
  set(contactId: number, name: string, value: string, deletable: boolean): VariableRow {
    return this.s.upsert.get({ contact_id: contactId, name, value, deletable: deletable ? 1 : 0 })!;
  }
  delete(id: number): boolean {
    return this.s.delete.run(id).changes > 0;
  }
}
