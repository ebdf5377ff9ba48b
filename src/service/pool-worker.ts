/**
 * One service thread of a `ServicePool` (pool.ts): its own PostgreSQL connection and its own
 * Service, answering the requests the pool posts, one at a time (each waits on its queries as
 * a PHP-FPM worker does, while the other threads and the HTTP thread go on).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { log } from '../log.js';
import { PgStore } from '../store/pg/index.js';
import type { PoolRequest, PoolSetup } from './pool.js';
import { Service } from './pipeline.js';

const setup = workerData as PoolSetup;
const store = PgStore.open(setup.url, { statementTimeoutMs: setup.statementTimeoutMs });
const service = new Service(store, {
  rateLimit: setup.rateLimit,
  secrets: { encryptionKey: Buffer.from(setup.encryptionKey), signingKey: Buffer.from(setup.signingKey) },
  logger: log,
});
const port = parentPort!;
port.on('message', (m: PoolRequest | { close: true }) => {
  if ('close' in m) {
    store.close();
    port.close();
    return;
  }
  port.postMessage({ id: m.id, res: service.call(m.req) });
});
port.postMessage({ ready: true });
