/**
 * Opening the backend the MCP server runs over, with what goes with it (its scope, data folder,
 * audit trail, search, banner lines): the built-in service over a SQLite file or a PostgreSQL
 * database (`openLocal`), or a remote Workspace API (`openRemote`, mcp-remote.ts). Every start-up check of the
 * database, the key and the URL is made here: over HTTP before the server listens, over stdio
 * right after its first answer (which needs none of this), before any other request is served.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { openChecked, serviceOver, type Checked, type OwnerSummary } from './open.js';
import { StartError } from './start-error.js';
import { defaultDataDir, expandHome, locateDb } from './paths.js';
import { SeenIds } from '../mcp/seen.js';
import type { AuditTrail } from '../mcp/state.js';
import type { Backend } from '../api/backend.js';
import { log } from '../common/log.js';
import type { PgStore } from '../store/pg/index.js';
import type { StoreApi } from '../store/store-api.js';
import type { Service } from '../service/pipeline.js';
import { UsageError } from './args.js';
import { createdEmptyHint, createdEmptyWarning, newKeyInfo, type BannerInfo } from './banner.js';
import { pgEnv } from './pg-env.js';
import type { KeyOwner, KeyOwners } from '../mcp/auth/callers.js';
import { hashKey } from '../store/keys.js';
import type { SearchParts } from './search-wiring.js';
import type { McpState } from '../state/mcp-state.js';
import { promised } from '../state/async.js';

/** What a backend needs besides itself: who it acts for, search, where the server's files go, how to close. */
export interface BackendSetup {
  /**
   * Who the server acts for, resolved once at start-up, never by a call: idempotency keys are
   * kept per scope. Local: the database and its owner; remote: the base URL and the key (hashed).
   */
  scope: string;
  /** The owner the backend acts as, when start-up learnt it (remote: unknown once getMe is switched off). */
  ownerId?: number;
  dataDir: string;
  /**
   * The backend, its audit trail and search, made once: the local service's code is loaded by
   * the first call (over stdio, after the first answer); the remote client is made at start-up.
   */
  wire(): Promise<Wired>;
  /**
   * Start-up that goes on once the server listens (`--auth key` and `--auth oauth`, which make
   * nothing of a person's until asked): `/readyz` answers 503 until it is done.
   */
  ready?(): Promise<unknown>;
  close(): Promise<void>;
  /** For the start-up banner. */
  banner: Pick<BannerInfo, 'database' | 'remote' | 'owner' | 'newKey' | 'money' | 'createdEmpty'>;
  /** What the model must be told from start-up (the database was created empty), in tool results' warnings. */
  startNote?: string;
  /** The server's own state, when the backend keeps it (PostgreSQL); else a file in `dataDir`. */
  state?: McpState;
  /** On PostgreSQL: what every instance must share beside the database, for questions sealed by one to be answered through another. */
  shared?: { questionKey: Uint8Array };
  /** `--auth key`: who each request is, and what is each owner's (then `scope`, `ownerId` and `wire()`'s search are no one's). */
  keyed?: Keyed;
}

/**
 * What `--auth key` needs of a backend: who a key is (src/mcp/auth/callers.ts; the built-in
 * service answers with the key's hash, which the owner's context acts by: `Wired.ownedBy`), and
 * what is each owner's.
 */
export interface Keyed extends KeyOwners {
  /** The scope of an owner's idempotency keys and money window. */
  scopeOf(ownerId: number): string;
  /** An owner's own search and directory, when the backend keeps them per owner (remote); else each key's (`Wired.ownedBy`). */
  searchOf?(ownerId: number): SearchParts & { seen: SeenIds; close(): Promise<void> };
}

/** A backend and what goes with it. */
export interface Wired extends SearchParts {
  backend: Backend;
  /**
   * `--auth key` on the built-in service: a backend, search and directory acting by one owner's
   * key (its hash, checked at each call), for the context of that owner and key (the shared
   * `backend` then acts as no one).
   */
  ownedBy?(keyHash: string): SearchParts & { backend: Backend };
  /** `--auth key` on the built-in service: the owner of a key's hash, with the pipeline's own checks (LocalBackend.ownerOf). */
  ownerOf?(keyHash: string): KeyOwner | Promise<KeyOwner>;
  /** The audit trail of data-changing calls: the database's (local), a JSON-lines file (remote). */
  audit: AuditTrail;
  /** Who holds an account, read from the database (PostgreSQL: another instance may have shown it). */
  accountHolder?: (accountId: number) => Promise<number | undefined>;
}

/** What the user told getWorkspace and the default bot: `--bot`, `--project` or their env. */
export interface Configured {
  botId?: number;
  /** Where botId came from, for messages. */
  botSource?: string;
  projectUuid?: string;
}

/** The MCP server's own state (idempotency keys, money window, OAuth grants) on SQLite: a file in its data folder. */
export const MCP_STATE_FILE = 'mcp-state.sqlite';

/**
 * The data folder of the MCP server's own files (exports, its state file), absolute.
 * `$WORKSPACE_DATA_DIR` must exist; the default one is made (owner-only) when first needed.
 */
export function dataDirFor(dbFile: string | undefined): string {
  const named = process.env.WORKSPACE_DATA_DIR;
  if (named) {
    const dir = resolve(expandHome(named));
    if (!existsSync(dir) || !statSync(dir).isDirectory())
      throw new StartError(
        `WORKSPACE_DATA_DIR ${dir} is not an existing folder: create it first, or unset it to use ${dbFile ? dirname(dbFile) : defaultDataDir()}`,
      );
    return dir;
  }
  return dbFile ? dirname(dbFile) : defaultDataDir();
}

/** The configured bot (`--bot`, WORKSPACE_BOT_ID) is one of `owner`'s live bots; else the start error that lists them. */
function checkBot(store: StoreApi, owner: OwnerSummary | undefined, configured: Configured): void {
  const bot = store.projects.bot(configured.botId!);
  if (bot && !bot.deleted_at && (owner === undefined || bot.owner_id === owner.id)) return;
  const bots = owner ? store.directory.bots(owner.id).map((b) => `${b.id} (${b.name ?? 'no name'})`) : [];
  const whose = owner ? `owner ${owner.id}` : 'this owner';
  throw new StartError(
    `${configured.botSource} ${configured.botId} is not a bot of ${whose}: ${bots.length ? `give one of its bots: ${bots.join(', ')}` : `${whose} has no bot`}`,
  );
}

/** The built-in service over the SQLite file or PostgreSQL database `--db` names (else the default file), checked and opened. */
export async function openLocal(
  dbFlag: string | undefined,
  rateLimit: number,
  configured: Configured,
  keyed = false,
): Promise<BackendSetup> {
  if (dbFlag === '') throw new UsageError('--db needs a file path or a postgres:// URL');
  const loc = locateDb(dbFlag);
  const pgUrl = loc.url;
  // On PostgreSQL there is no database file to keep the server's files beside.
  const dataDir = dataDirFor(pgUrl === undefined ? loc.file : undefined);
  // `--auth key` acts as no one of its own: each request as its key's owner. The configured bot
  // is checked in the opening itself: refused, the database is left as it was (a new one not made).
  const opened = await openChecked(loc, {
    rateLimit,
    logger: log,
    ...(keyed ? {} : { actAs: { apiKey: process.env.WORKSPACE_API_KEY } }),
    ...(configured.botId !== undefined ? { check: (store, owner) => checkBot(store, owner, configured) } : {}),
  });
  const store = opened.store;
  // The default bot as getWorkspace answers it (McpContext.defaultBot): the configured one, else the owner's only bot.
  const bots = opened.owner?.bots ?? [];
  const defaultBot = configured.botId ?? (bots.length === 1 ? bots[0]! : null);
  const owner: (OwnerSummary & { via?: string; defaultBot?: number | null }) | undefined = opened.owner && {
    ...opened.owner,
    ...('apiKey' in opened.identity ? { via: 'WORKSPACE_API_KEY' } : {}),
    defaultBot,
  };
  // A start that made the database (a first run, or a mistyped --db) says so where the model looks too.
  const created = opened.created || (pgUrl !== undefined && opened.newKey !== undefined);
  const ownerId = opened.owner?.id ?? ('ownerId' in opened.identity ? opened.identity.ownerId : 0);
  // PostgreSQL: service threads as `serve` has (WORKSPACE_PG_POOL, checked when the database
  // was opened): each API call, and each read or write of the server's state and search, waits
  // on its own thread's connection, so the serving thread never waits on the database and one
  // slow transaction never stalls the other sessions. Made by the first call that needs them.
  let pool: Promise<import('../service/pool.js').ServicePool> | undefined;
  const threads = () =>
    (pool ??= import('../service/pool.js').then(async ({ ServicePool }) => {
      const { poolSize, statementTimeoutMs } = pgEnv();
      const jobs = new URL('./mcp-thread-jobs.js', import.meta.url).href;
      const p = new ServicePool({ url: pgUrl!, rateLimit, secrets: opened.secrets, statementTimeoutMs, jobs }, poolSize, log);
      await p.ready();
      return p;
    }));
  // The state in the database every instance shares, its code loaded only here (as the pool's).
  const pg = pgUrl !== undefined ? await postgresParts(store, threads) : undefined;
  let wired: Promise<Wired> | undefined;
  const setup: BackendSetup = {
    // The PostgreSQL scope names no URL: instances may reach the one database by other names.
    scope: pgUrl !== undefined ? `postgres owner ${ownerId}` : `local ${opened.file} owner ${ownerId}`,
    ownerId: opened.owner?.id,
    dataDir,
    wire: () =>
      (wired ??= (async () => {
        const [service, { LocalBackend }, { localSearch }, onThreads, serviceThreads] = await Promise.all([
          serviceOver(opened, { rateLimit, logger: log }),
          import('../service/backend.js'),
          import('./search-wiring.js'),
          pgUrl !== undefined ? import('./mcp-thread-jobs.js') : undefined,
          pgUrl !== undefined ? threads() : undefined,
        ]);
        const backend = new LocalBackend(service, keyed ? { keyHash: '' } : opened.identity, serviceThreads);
        // PostgreSQL: search and directory on the service threads, acting as the backend does.
        const search = (b: InstanceType<typeof LocalBackend>) =>
          onThreads && serviceThreads ? onThreads.threadedSearch(serviceThreads, b.identity) : localSearch(store, b);
        const ownedBy = (keyHash: string) => {
          const own = backend.byKeyHash(keyHash);
          return { backend: own, ...search(own) };
        };
        // Start-up is done: from here a statement on the serving thread's own connection is logged (PgConnection.watchServing).
        if (pg) (store as PgStore).conn.watchServing();
        return {
          backend,
          // PostgreSQL: written and read on the service threads.
          audit: onThreads && serviceThreads ? onThreads.threadedAudit(serviceThreads) : promised<AuditTrail>(store.audit),
          ...search(backend),
          ...(keyed ? { ownedBy, ownerOf: ownersOf(service, pg ? (store as PgStore) : undefined) } : {}),
          ...(onThreads && serviceThreads ? { accountHolder: onThreads.threadedHolder(serviceThreads) } : {}),
        };
      })()),
    // The backend's close is the store's; the pool's threads hold their own connections.
    close: async () => {
      if (pg) await (await import('../store/pg/async-reads.js')).closeAsyncReads((store as PgStore).conn);
      store.close();
      await (await pool)?.close();
    },
    ...(keyed
      ? {
          keyed: localKeyed(() => setup.wire(), pgUrl === undefined ? `local ${opened.file}` : 'postgres'),
          // The service (on PostgreSQL its threads' connections) made before the server is ready, not by the first person.
          ready: () => setup.wire(),
        }
      : {}),
    banner: {
      database: { file: opened.file, created },
      ...(keyed ? {} : { owner }),
      newKey: newKeyInfo(opened.newKey, opened.owner?.id, opened.file),
      ...(created ? { createdEmpty: createdEmptyHint(loc.source) } : {}),
    },
    ...(created ? { startNote: createdEmptyWarning(opened.file, loc.source) } : {}),
    ...(pg ?? {}),
  };
  return setup;
}

/**
 * `--auth key` on the built-in service: the owner of the request's key, found by its hash, with
 * the pipeline's owner checks (an unknown key 401, a lapsed plan 402, a blocked owner 403).
 */
function localKeyed(wire: () => Promise<Wired>, site: string): Keyed {
  return {
    owner: async (key) => (await wire()).ownerOf!(hashKey(key)),
    scopeOf: (ownerId) => `${site} owner ${ownerId}`,
  };
}

/**
 * The owner of a key's hash as the pipeline checks it: on PostgreSQL read on the async pool
 * (store/pg/async-reads.ts), so that the serving thread never waits on the database for it.
 */
function ownersOf(service: Service, pg: PgStore | undefined): (keyHash: string) => KeyOwner | Promise<KeyOwner> {
  if (!pg) return (keyHash) => keyOwner(service.ownerOf(keyHash), keyHash);
  const reads = import('../store/pg/async-reads.js').then(({ asyncReadsOf }) => asyncReadsOf(pg.conn));
  return async (keyHash) => keyOwner(await service.ownerOfAsync(keyHash, async (h) => (await reads).ownerByHash(h)), keyHash);
}

/** The owner the pipeline checked, or its refusal's status and message. */
function keyOwner(who: ReturnType<Service['ownerOf']>, keyHash: string): KeyOwner {
  if (!('status' in who)) return { id: who.id, keyHash };
  // The spec's refusals carry their text as `error` (401, 402, 403) or `message` (503).
  const body = who.body as { error?: unknown; message?: unknown } | undefined;
  const message = typeof body?.error === 'string' ? body.error : body?.message;
  return { status: who.status, message: typeof message === 'string' ? message : `status ${who.status}` };
}

/** The MCP server's state and shared question key on PostgreSQL (its code loaded only for a PostgreSQL database). */
async function postgresParts(
  store: Checked['store'],
  threads: () => Promise<import('../service/pool.js').ServicePool>,
): Promise<Pick<BackendSetup, 'state' | 'shared'>> {
  const [{ migratePgState }, { threadedState }, { envSecret, questionKey }] = await Promise.all([
    import('../state/pg/mcp-state.js'),
    import('./mcp-thread-jobs.js'),
    import('../service/secrets.js'),
  ]);
  let state: McpState;
  try {
    // Its tables brought up to date first (their own migrations, after the store's); read and
    // written on the service threads.
    migratePgState((store as PgStore).conn);
    state = threadedState(threads, store as PgStore);
  } catch (e) {
    store.close();
    throw new StartError(`the MCP server's state in the PostgreSQL database cannot be opened: ${(e as Error).message}`);
  }
  // openChecked refused a PostgreSQL database without WORKSPACE_SECRET.
  return { state, shared: { questionKey: questionKey(envSecret()!) } };
}
