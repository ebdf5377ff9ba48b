/** Contact variables on PostgreSQL (the SQLite part: ../variables.ts). */
import type { VariableRow } from '../contacts.js';
import type { Surface } from '../store-api.js';
import type { VariableStore } from '../variables.js';
import type { PgConnection } from './connection.js';

const COLUMNS = 'id, contact_id, name, value, type, schema_id, deletable, payload';

export class PgVariableStore implements Surface<VariableStore> {
  constructor(private readonly c: PgConnection) {}

  list(contactId: number): VariableRow[] {
    return this.c.query<VariableRow>(`SELECT ${COLUMNS} FROM contact_variables WHERE contact_id = $1 ORDER BY id`, [contactId]).rows;
  }
  byId(id: number): VariableRow | undefined {
    return this.c.one<VariableRow>(`SELECT ${COLUMNS} FROM contact_variables WHERE id = $1`, [id]);
  }
  byName(contactId: number, name: string): VariableRow | undefined {
    return this.c.one<VariableRow>(`SELECT ${COLUMNS} FROM contact_variables WHERE contact_id = $1 AND name = $2`, [contactId, name]);
  }
  set(contactId: number, name: string, value: string, deletable: boolean): VariableRow {
    return this.c.one<VariableRow>(
      `INSERT INTO contact_variables (contact_id, name, value, deletable) VALUES ($1, $2, $3, $4)
       ON CONFLICT (contact_id, name) DO UPDATE SET value = excluded.value, deletable = excluded.deletable
       RETURNING ${COLUMNS}`,
      [contactId, name, value, deletable ? 1 : 0],
    )!;
  }
  delete(id: number): boolean {
    return this.c.query('DELETE FROM contact_variables WHERE id = $1', [id]).rowCount > 0;
  }
}
