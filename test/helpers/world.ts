/**
 * Test worlds: the fixtures, a temp SQLite file seeded with one, the real service over real
 * HTTP on 127.0.0.1, and `useWorld` for a suite that shares one world across its tests. A
 * world's database is the test project's store (helpers/store.ts): a SQLite file, or a
 * PostgreSQL database in the `postgres` project.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Server } from 'node:http';
import { afterAll, beforeAll } from 'vitest';
import { listen } from '../../src/http/server.js';
import { Service, type ServiceOptions } from '../../src/service/pipeline.js';
import { deriveSecrets } from '../../src/service/secrets.js';
import type { StoreApi } from '../../src/store/store-api.js';
import { Store } from '../../src/store/index.js';
import { loadFixture } from '../../src/store/seed.js';
import { callApi, type CallOptions, type CallResult } from './http.js';
import { folderOf, openStore, removeStore, seedStore, sqliteOf, type Fixture } from './store.js';
import { tempDir } from './temp.js';

export { tempDir } from './temp.js';
export type { CallOptions, CallResult } from './http.js';

export type { Fixture } from './store.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DEMO_FIXTURE = join(ROOT, 'fixtures', 'demo.json');

export function demoFixture(): Fixture {
  return JSON.parse(readFileSync(DEMO_FIXTURE, 'utf8')) as Fixture;
}

/** A small world every suite can extend: two pro owners, a free one, a blocked one. */
export function baseFixture(): Fixture {
  return {
    owners: [
      { id: 1, name: 'Alice', email: 'alice@example.com', plan: 'pro', api_key: 'alice-key' },
      { id: 2, name: 'Bob', email: 'bob@example.com', plan: 'pro', api_key: 'bob-key' },
      { id: 3, name: 'Fran', plan: 'free', api_key: 'fran-key' },
      { id: 4, name: 'Blocked', plan: 'pro', blocked: true, api_key: 'blocked-key' },
    ],
    projects: [
      { uuid: '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10', owner_id: 1, name: 'Shop' },
      { uuid: '5a2b3c4d-1111-4c1e-9a55-0b6f3d2e1a11', owner_id: 2, name: 'Bob shop' },
    ],
    members: [{ owner_id: 1, project_uuid: '5a2b3c4d-1111-4c1e-9a55-0b6f3d2e1a11' }],
    bots: [
      { id: 10, project_uuid: '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10', name: 'Shop bot' },
      { id: 20, project_uuid: '5a2b3c4d-1111-4c1e-9a55-0b6f3d2e1a11', name: 'Bob bot' },
    ],
  };
}

/** Alice's contact Ann in her bot 10. */
export const ANN = { id: 100, bot_id: 10, messenger: 'telegram', name: 'Ann', telegram_id: '5001' } as const;

/**
 * The base world with Ann and her accounts: by default USD account 500 of 10.00; `accounts`
 * (without contact_id) replaces them.
 */
export function accountFixture(
  accounts: Array<{ id: number; currency: string; amount: number }> = [{ id: 500, currency: 'USD', amount: 1000 }],
): Fixture {
  return {
    ...baseFixture(),
    contacts: [{ ...ANN }],
    accounts: accounts.map((a) => ({ ...a, contact_id: ANN.id })),
  };
}

/** A database file `name` in `dir` (by default a new temp folder), seeded with `fixture`; returns its path. */
export function seedDb(fixture: Fixture, name = 'workspace.db', dir = tempDir()): string {
  const dbFile = join(dir, name);
  const store = Store.open(dbFile);
  try {
    loadFixture(store, fixture);
  } finally {
    store.close();
  }
  return dbFile;
}

export interface WorldOptions {
  /** Requests per minute per owner; 0 (the default here) is no limit. */
  rateLimit?: number;
  now?: () => Date;
}

/** The service as the suite runs it: fixed secrets, and no rate limit unless asked for. */
export function testService(store: StoreApi, opts: WorldOptions = {}): Service {
  const o: ServiceOptions = { rateLimit: opts.rateLimit ?? 0, secrets: deriveSecrets(Buffer.alloc(32, 7)), now: opts.now };
  return new Service(store, o);
}

export class World {
  constructor(
    readonly dir: string,
    /** The `--db` value: a file path, or a PostgreSQL URL. */
    readonly dbFile: string,
    readonly store: StoreApi,
    readonly service: Service,
    readonly server: Server,
    readonly baseUrl: string,
    /** Whether closing removes `dir` (a world over another's file leaves it). */
    private readonly ownsDir: boolean,
  ) {}

  /** The store as SQLite, for a check that is about the file itself: refused on PostgreSQL. */
  get sqlite(): Store {
    return sqliteOf(this.store);
  }

  /** Call a method over HTTP as `key` (default alice-key). GET puts params in the query. */
  call(method: string, params: Record<string, unknown> = {}, o: CallOptions = {}): Promise<CallResult> {
    return callApi(this.baseUrl, method, params, o);
  }

  async close(): Promise<void> {
    await new Promise<void>((r) => {
      this.server.close(() => r());
      this.server.closeAllConnections();
    });
    this.store.close();
    if (this.ownsDir) removeStore(this.dbFile);
  }
}

/** Serve an existing database (a second process's view of it, say) on an ephemeral port. */
export async function serveDb(dbFile: string, opts: WorldOptions = {}, ownsDir = false): Promise<World> {
  const store = openStore(dbFile);
  const service = testService(store, opts);
  const { server, baseUrl } = await listen(service, '127.0.0.1', 0);
  return new World(folderOf(dbFile), dbFile, store, service, server, baseUrl, ownsDir);
}

/** Seed `fixture` into a fresh database of the test project's store and serve it on an ephemeral port. */
export function startWorld(fixture: Fixture = baseFixture(), opts: WorldOptions = {}): Promise<World> {
  return serveDb(seedStore(fixture), opts, true);
}

/**
 * One world for the whole suite (the file, or the describe block it is called in): started in
 * beforeAll, closed in afterAll. The returned object stands for that world: use it inside tests
 * and hooks, where it forwards to the running world.
 */
export function useWorld(fixture: Fixture | (() => Fixture) = baseFixture, opts: WorldOptions = {}): World {
  let current: World | undefined;
  beforeAll(async () => {
    current = await startWorld(typeof fixture === 'function' ? fixture() : fixture, opts);
  });
  afterAll(async () => {
    await current?.close();
    current = undefined;
  });
  return new Proxy({} as World, {
    get(_, prop) {
      if (!current) throw new Error(`useWorld: no running world (read .${String(prop)} inside a test or hook)`);
      const v: unknown = Reflect.get(current, prop, current);
      return typeof v === 'function' ? v.bind(current) : v;
    },
  });
}
