/**
 * Opening the service over a database file for a server's start. Everything is checked before
 * anything is created or changed: the folder, the file (ours, writable, not locked), the secret
 * (it opens the database's encrypted values), and for the MCP server the owner it acts as (a
 * key that is no one's, a Free-plan or blocked owner: every tool would answer 401/402/403). A
 * check that fails is a StartError naming the problem and the fix; the file is left as it was.
 * A database with no owner gets the default owner, project and bot, whose key is shown once.
 */
import { accessSync, constants, existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DbProblem } from '../store/db.js';
import type { OwnerRow } from '../store/owners.js';
import { DEFAULT_OWNER_SETTING } from '../store/settings.js';
import { Store } from '../store/index.js';
import { StoreUnavailable, type StoreApi } from '../store/store-api.js';
import {
  deriveSecrets,
  envSecret,
  findSecret,
  opens,
  saveSecret,
  sealCheck,
  SECRET_CHECK_SETTING,
  secretFileOf,
  SecretError,
  type SecretSource,
} from '../service/secrets.js';
import type { Secrets } from '../service/context.js';
import type { Logger } from '../common/log.js';
import type { Service } from '../service/pipeline.js';
import type { DbLocation } from './paths.js';
import { pgEnv } from './pg-env.js';
import { StartError } from './start-error.js';

/** How long start-up waits for another program's write lock before calling the file locked. */
const LOCK_WAIT_MS = 5_000;

export interface OpenOptions {
  rateLimit?: number;
  logger?: Logger;
  /**
   * The MCP server acts as one owner: the one of `apiKey` (from `$WORKSPACE_API_KEY`, checked
   * here), else the database's default owner. `serve` answers every owner: no identity.
   */
  actAs?: { apiKey: string | undefined };
  /**
   * A further check of the caller's (the MCP server's configured bot), made inside the opening
   * transaction: when it throws, the database is left as it was, and a new one is not kept.
   */
  check?: (store: StoreApi, owner: OwnerSummary | undefined) => void;
}

export interface OwnerSummary {
  id: number;
  name: string;
  /** The owner's first project, when it has one. */
  project?: string;
  /** The owner's live bots (getWorkspace's default bot is the only one, unless one is configured). */
  bots?: number[];
}

/** A database that passed every start-up check, its service not made yet (see `serviceOver`). */
export interface Checked {
  store: StoreApi;
  /** Open the database's encrypted values. */
  secrets: Secrets;
  file: string;
  /** The database was made by this start. */
  created: boolean;
  /** The default owner's key, on the start that made it only. */
  newKey?: string;
  /** Who the MCP server acts as (with a key, or the default owner); for `serve`, the default owner. */
  owner?: OwnerSummary;
  /** What the MCP server's local backend sends: the key, or the owner to act as without one. */
  identity: { apiKey: string } | { ownerId: number };
}

/** The service opened over a checked database; its secrets stay (a pool of service threads needs them too). */
export interface Opened extends Omit<Checked, 'store'> {
  service: Service;
}

/** Create the default owner, project and bot if the database has no owner at all; its key. */
export function bootstrap(store: StoreApi): string | undefined {
  return store.tx(() => {
    if (store.owners.count() > 0) return undefined;
    const ownerId = store.owners.insert({ name: 'Default owner', plan: 'pro' });
    const project = store.projects.insert({ owner_id: ownerId, name: 'Default project' });
    store.projects.insertBot({ project_uuid: project, name: 'Default bot' });
    store.settings.set(DEFAULT_OWNER_SETTING, String(ownerId));
    return store.owners.regenerateKey(ownerId);
  });
}

/** The owner a key-less MCP server acts as: the one a new database was given, else the first. */
function defaultOwner(store: StoreApi): OwnerRow | undefined {
  const setting = store.settings.get(DEFAULT_OWNER_SETTING);
  return (setting !== undefined ? store.owners.get(Number(setting)) : undefined) ?? store.owners.first();
}

function can(path: string, mode: number): boolean {
  try {
    accessSync(path, mode);
    return true;
  } catch {
    return false;
  }
}

/** Check the path can hold the database, creating nothing; returns whether the file exists. */
function checkPath(loc: DbLocation): boolean {
  const { file } = loc;
  const dir = dirname(file);
  const named = loc.source === 'default' ? 'the database' : `${loc.source} ${file}`;
  if (existsSync(file)) {
    if (statSync(file).isDirectory())
      throw new StartError(`${named} is a folder: give the database file's path, e.g. ${join(file, 'workspace.db')}`);
    if (!can(file, constants.R_OK | constants.W_OK))
      throw new StartError(`the database ${file} is read-only for this user: make it writable (chmod u+rw) or give --db another file`);
  } else if (!existsSync(dir)) {
    // The default data folder is ours to make; a folder the user named is not (a typo would
    // otherwise leave a new empty database somewhere unexpected).
    if (loc.source !== 'default')
      throw new StartError(`the folder of ${named} does not exist: create ${dir} first, or give a file in an existing folder`);
    return false;
  }
  if (!statSync(dir).isDirectory()) throw new StartError(`${dir} is not a folder, so ${named} cannot be there: give another path`);
  const exists = existsSync(file);
  // SQLite writes the -wal and -shm files beside the database.
  if (!can(dir, constants.W_OK | constants.X_OK))
    throw new StartError(
      `the folder ${dir} is read-only for this user, so ${exists ? `the database cannot write its journal beside ${file}` : `no database can be made at ${file}`}: make the folder writable or give --db a file elsewhere`,
    );
  return exists;
}

/** Make the default data folder (owner-only), or say why it cannot be made. */
export function makeDataDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw new StartError(
      `cannot make the data folder ${dir} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): give --db (or WORKSPACE_DB) a file in a folder you can write`,
    );
  }
}

function problemLine(p: DbProblem, file: string): string {
  switch (p.kind) {
    case 'not-a-database':
      return `${file} is not a SQLite database: give --db a database made by workspace-mcp, or the name of a new file`;
    case 'foreign':
      return `${file} is a SQLite database of another program: give --db a database made by workspace-mcp, or the name of a new file`;
    case 'newer':
      return `${file} was ${p.message}: upgrade workspace-mcp to open it`;
    case 'locked':
      return `the database ${file} is ${p.message}: close the program that holds it, then start again`;
    case 'read-only':
      return `the database ${file} cannot be written: make it and its folder writable, or give --db another file`;
  }
}

/** Refuse an owner every call would refuse (402 Free plan, 403 blocked), saying how to mend it. */
function checkOwner(owner: OwnerRow, who: string, file: string, otherwise: string): void {
  const name = `${who} (owner ${owner.id}, ${owner.name})`;
  const run = (command: string) => `run "workspace-mcp admin ${command} --owner ${owner.id} --db ${file}", ${otherwise}`;
  if (owner.plan !== 'pro')
    throw new StartError(
      `${name} is on the Free plan and the API needs Pro, so every tool would answer 402: ${run('set-plan --plan pro')}`,
    );
  if (owner.blocked_at) throw new StartError(`${name} is blocked, so every tool would answer 403: ${run('unblock-owner')}`);
}

/**
 * The secrets that open this database's encrypted values; refuses a secret that does not. A
 * SQLite file's is found beside it (or in WORKSPACE_SECRET); a PostgreSQL database's is given.
 */
function checkSecrets(store: StoreApi, file: string, given?: SecretSource): { secrets: Secrets; saved?: string } {
  let source: SecretSource;
  try {
    source = given ?? findSecret(file);
  } catch (e) {
    if (e instanceof SecretError) throw new StartError(e.message);
    throw e;
  }
  if (source.kind === 'memory') return { secrets: deriveSecrets(source.master) };
  const check = store.settings.get(SECRET_CHECK_SETTING);
  const sample = check === undefined ? store.lists.oneEncryptedValue() : undefined;
  if (source.kind === 'new') {
    if (check !== undefined || sample)
      throw new StartError(
        `the secret of the database ${file} is missing (its file ${source.file}; the encrypted list values need it): put that file back beside the database, or set WORKSPACE_SECRET to the secret it held`,
      );
    const master = saveSecret(source);
    const secrets = deriveSecrets(master);
    store.settings.set(SECRET_CHECK_SETTING, sealCheck(secrets));
    // Another start that linked its file first is using it: only a file this start wrote is its to remove.
    return { secrets, saved: master === source.master ? source.file : undefined };
  }
  const secrets = deriveSecrets(source.master);
  const ok =
    check !== undefined
      ? opens(secrets, check)
      : !sample || opens(secrets, sample.value, { recordId: sample.record_id, slug: sample.slug });
  if (!ok)
    throw new StartError(
      source.kind === 'env'
        ? `WORKSPACE_SECRET does not open the encrypted values of ${file}: ${
            // A PostgreSQL database's secret is given (no file beside it): the other instances have it.
            given
              ? 'set it to the secret the database was made with, the one the other instances on it have'
              : existsSync(secretFileOf(file))
                ? `unset it to use the database's own ${secretFileOf(file)}, or set it to that file's secret: WORKSPACE_SECRET=$(cat ${secretFileOf(file)})`
                : 'set it to the secret the database was made with'
          }`
        : `${source.file} does not open the encrypted values of ${file} (is it another database's?): put the database's own secret file back, or set WORKSPACE_SECRET to its secret`,
    );
  if (check === undefined) store.settings.set(SECRET_CHECK_SETTING, sealCheck(secrets));
  return { secrets };
}

function summary(store: StoreApi, owner: OwnerRow): OwnerSummary {
  const p = store.projects.firstProject(owner.id);
  return { id: owner.id, name: owner.name, ...(p ? { project: p.uuid } : {}), bots: store.projects.ownerBotIds(owner.id) };
}

/** Map a file the store will not open to the line that says why and what to do. */
function openCheckedStore<T>(file: string, create: boolean, check: (store: Store) => T): { store: Store; result: T } {
  try {
    return Store.openChecked(file, { create, lockWaitMs: LOCK_WAIT_MS }, check);
  } catch (e) {
    if (e instanceof DbProblem) throw new StartError(problemLine(e, file));
    // A path the checks let through that the system still refuses (/proc/…, a file system gone read-only).
    const { code, syscall } = e as NodeJS.ErrnoException;
    if (syscall !== undefined || code === 'SQLITE_CANTOPEN')
      throw new StartError(
        `${create ? 'no database can be made' : 'the database cannot be opened'} at ${file} (${code ?? (e as Error).message}): give --db a file in a folder of your own`,
      );
    throw e;
  }
}

/**
 * The store for `seed` and `admin`, with the same checks of the folder and file as a server's
 * start (no owner or secret). Only `seed` (`create`) may make a new database. A PostgreSQL
 * database is connected to and migrated; one that cannot be reached, or is not ours, is a
 * StartError.
 */
export async function openStore(loc: DbLocation, opts: { create: boolean }): Promise<StoreApi> {
  if (loc.url !== undefined) return openPgStore({ ...loc, url: loc.url });
  const exists = checkPath(loc);
  if (!exists && !opts.create)
    throw new StartError(
      `there is no database at ${loc.file}: give --db an existing database (a server's first start or "workspace-mcp seed" makes one)`,
    );
  if (!exists && loc.source === 'default') makeDataDir(dirname(loc.file));
  return openCheckedStore(loc.file, !exists, () => undefined).store;
}

/** The PostgreSQL store's code is loaded only for a URL: a start on a file never pays for it. */
async function openPgStore(loc: DbLocation & { url: string }): Promise<StoreApi> {
  // Checked before connecting (the pool size too): a bad setting is a usage error, not a refused database.
  const { statementTimeoutMs } = pgEnv();
  const [{ PgError }, { PgStore }, { PgSchemaProblem }] = await Promise.all([
    import('../store/pg/connection.js'),
    import('../store/pg/index.js'),
    import('../store/pg/migrations.js'),
  ]);
  try {
    return PgStore.open(loc.url, { statementTimeoutMs });
  } catch (e) {
    if (e instanceof PgSchemaProblem)
      throw new StartError(
        `${loc.source} ${loc.file} is ${e.message}: give ${loc.source} a database made by workspace-mcp, or an empty one`,
      );
    if (e instanceof StoreUnavailable || e instanceof PgError)
      throw new StartError(
        `cannot open the PostgreSQL database ${loc.file} (${e.message}): check that it runs and that ${loc.source} is right`,
      );
    throw e;
  }
}

/**
 * The checks of a server's start, in the store's opening transaction: the default world made if
 * the database has none, the owner the MCP server acts as, and the secret.
 */
function checkStart(store: StoreApi, file: string, apiKey: string | undefined, opts: OpenOptions, secret?: SecretSource) {
  const newKey = bootstrap(store);
  let owner: OwnerRow | undefined;
  let identity: Opened['identity'] | undefined;
  if (apiKey !== undefined) {
    owner = store.owners.byKey(apiKey);
    if (!owner)
      throw new StartError(
        `WORKSPACE_API_KEY is no owner's key in ${file}: use the key shown when the database was made, or make a new one with "workspace-mcp admin regenerate-key --owner ID --db ${file}"`,
      );
    checkOwner(owner, 'the owner of WORKSPACE_API_KEY', file, "or use a Pro owner's key");
    identity = { apiKey };
  } else {
    owner = defaultOwner(store);
    if (opts.actAs) {
      if (!owner) throw new StartError(`the database ${file} has no owner: seed one ("workspace-mcp seed FIXTURE.json --db ${file}")`);
      checkOwner(owner, "the database's default owner", file, "or set WORKSPACE_API_KEY to a Pro owner's key");
    }
    identity = { ownerId: owner?.id ?? 0 };
  }
  const shown = owner && summary(store, owner);
  // Before a secret file is made: refused, the start leaves none behind.
  opts.check?.(store, shown);
  const { secrets, saved } = checkSecrets(store, file, secret);
  return { newKey, owner: shown, identity, secrets, saved };
}

/** Check everything, then open the service over the database at `loc`. Throws StartError. */
export async function openService(loc: DbLocation, opts: OpenOptions = {}): Promise<Opened> {
  const { store, ...rest } = await openChecked(loc, opts);
  return { ...rest, service: await serviceOver({ store, secrets: rest.secrets }, opts) };
}

/**
 * The service over a checked database. Its code (the pipeline, every handler) is loaded here:
 * the MCP server over stdio answers its first message before it needs it.
 */
export async function serviceOver(checked: Pick<Checked, 'store' | 'secrets'>, opts: OpenOptions = {}): Promise<Service> {
  const { Service } = await import('../service/pipeline.js');
  return new Service(checked.store, { rateLimit: opts.rateLimit, secrets: checked.secrets, logger: opts.logger });
}

/** Check everything and open the database at `loc`, without its service. Throws StartError. */
export async function openChecked(loc: DbLocation, opts: OpenOptions = {}): Promise<Checked> {
  const { file } = loc;
  // What needs no file comes first: a bad value must not leave a new database behind.
  try {
    envSecret();
  } catch (e) {
    if (e instanceof SecretError) throw new StartError(e.message);
    throw e;
  }
  const apiKey = opts.actAs?.apiKey;
  if (apiKey === '')
    throw new StartError(
      "WORKSPACE_API_KEY is set but empty: put an owner's key in it, or unset it to act as the database's default owner",
    );
  if (loc.url !== undefined) return openPgChecked({ ...loc, url: loc.url }, apiKey, opts);
  const exists = checkPath(loc);
  if (!exists && apiKey !== undefined)
    throw new StartError(
      `WORKSPACE_API_KEY is set, but the database ${file} does not exist yet, so no owner has that key: unset it for the first run (a new database makes its own owner and key), or seed the database first ("workspace-mcp seed FIXTURE.json --db ${file}")`,
    );
  if (!exists && loc.source === 'default') makeDataDir(dirname(file));

  let savedSecret: string | undefined;
  try {
    const { store, result } = openCheckedStore(file, !exists, (store) => {
      const checked = checkStart(store, file, apiKey, opts);
      savedSecret = checked.saved;
      return checked;
    });
    return {
      store,
      secrets: result.secrets,
      file,
      created: !exists,
      newKey: result.newKey,
      owner: result.owner,
      identity: result.identity,
    };
  } catch (e) {
    // The secret file belongs to a database this start did not keep.
    if (savedSecret) rmSync(savedSecret, { force: true });
    throw e;
  }
}

/**
 * The service over a PostgreSQL database: the same checks in one transaction. Every instance
 * on the database must open the same encrypted values and sign links alike, so the secret is
 * WORKSPACE_SECRET, the same on each; there is no file beside the database to keep one in.
 */
async function openPgChecked(loc: DbLocation & { url: string }, apiKey: string | undefined, opts: OpenOptions): Promise<Checked> {
  const master = envSecret();
  if (!master)
    throw new StartError(
      `a PostgreSQL database needs WORKSPACE_SECRET (it opens the encrypted list values and signs links, so every instance on the database must have the same one): set it, e.g. to the output of "openssl rand -hex 32"`,
    );
  const store = await openPgStore(loc);
  try {
    const result = store.tx(() => checkStart(store, loc.file, apiKey, opts, { kind: 'env', master }));
    return {
      store,
      secrets: result.secrets,
      file: loc.file,
      created: false,
      newKey: result.newKey,
      owner: result.owner,
      identity: result.identity,
    };
  } catch (e) {
    store.close();
    throw e;
  }
}
