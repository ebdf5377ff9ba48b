/**
 * One service thread of a `ServicePool` (pool.ts): its own PostgreSQL connection and its own
 * Service, answering the requests the pool posts, one at a time (each waits on its queries as
 * a PHP-FPM worker does, while the other threads and the HTTP thread go on).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { log } from '../log.js';
import { StoreUnavailable } from '../store/contract.js';
import { PgStore } from '../store/pg/index.js';
import { unavailable, type PoolRequest, type PoolSetup } from './pool.js';
import { answerAudited } from './backend.js';
import { Service, unavailableAnswer } from './pipeline.js';

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
  let res;
  try {
    res = answerAudited(service, m.req, m.audit);
  } catch (e) {
    // The service answers its own failures; what escapes it (the audit row's transaction lost
    // with its connection) rolled back whole, or its COMMIT's outcome is unknown: a 503 (that
    // says which), not a dead thread.
    log.error({ err: e }, 'a service thread could not answer');
    res = e instanceof StoreUnavailable ? unavailableAnswer(e, {}, m.req.method) : unavailable();
  }
  port.postMessage({ id: m.id, res });
});
port.postMessage({ ready: true });
