/**
 * Opening the service over a database file: store, secrets, and on a database with no owner
 * yet, the default owner with a project and a bot, whose key is printed to stderr once.
 */
import { DEFAULT_OWNER_SETTING } from '../store/core.js';
import { Store } from '../store/index.js';
import { loadSecrets } from '../service/secrets.js';
import { Service, type Logger } from '../service/pipeline.js';

export { DEFAULT_OWNER_SETTING } from '../store/core.js';

export interface OpenOptions {
  rateLimit?: number;
  logger?: Logger;
  /** Where to announce the default owner's key (stderr). */
  announce?: (line: string) => void;
}

/** Create the default owner, project and bot if the database has no owner at all. */
export function bootstrap(store: Store, announce: (line: string) => void): void {
  const key = store.tx(() => {
    if (store.core.ownerCount() > 0) return undefined;
    const ownerId = store.core.insertOwner({ name: 'Default owner', plan: 'pro' });
    const project = store.core.insertProject({ owner_id: ownerId, name: 'Default project' });
    store.core.insertBot({ project_uuid: project, name: 'Default bot' });
    store.core.setSetting(DEFAULT_OWNER_SETTING, String(ownerId));
    return store.core.regenerateKey(ownerId);
  });
  if (key) announce(`workspace-mcp: new database; the default owner's API key is ${key} (shown once)`);
}

export function openService(dbFile: string, opts: OpenOptions = {}): Service {
  const store = Store.open(dbFile);
  bootstrap(store, opts.announce ?? ((l) => process.stderr.write(l + '\n')));
  return new Service(store, { rateLimit: opts.rateLimit, secrets: loadSecrets(dbFile), logger: opts.logger });
}
