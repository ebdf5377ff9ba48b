/**
 * One service thread of a `ServicePool` (pool.ts): its own PostgreSQL connection and its own
 * Service, answering the requests the pool posts, one at a time (each waits on its queries as
 * a PHP-FPM worker does, while the other threads and the HTTP thread go on).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { ApiResponse, AuditEntry } from '../api/backend.js';
import { fromCloneable, toCloneable } from '../common/ordered.js';
import { flushLog, log } from '../common/log.js';
import { StoreUnavailable } from '../store/store-api.js';
import { PgStore } from '../store/pg/index.js';
import { unanswered, notCarriedOut, type PoolAnswer, type PoolRequest, type PoolSetup } from './pool.js';
import { answerAudited } from './backend.js';
import { Service, unavailableAnswer, type ApiRequest } from './pipeline.js';

// What nothing else caught ends the thread, logged here with its stack: across to the pool an
// error that is not an Error (a DOMException) would arrive as `{}`.
process.on('uncaughtException', (e) => {
  log.error({ err: e }, 'a service thread failed');
  // A worker's exit does not wait for the logger's writes: this line, the real cause, would be lost.
  flushLog();
  process.exit(1);
});

const setup = workerData as PoolSetup;
const store = PgStore.open(setup.url, { statementTimeoutMs: setup.statementTimeoutMs });
const service = new Service(store, {
  rateLimit: setup.rateLimit,
  secrets: { encryptionKey: Buffer.from(setup.encryptionKey), signingKey: Buffer.from(setup.signingKey) },
  logger: log,
});
const port = parentPort!;

/** Post the answer to request `m`; one that cannot be sent is logged and answered as lost. */
function send(m: PoolRequest, res: ApiResponse): void {
  try {
    const r = toCloneable(res) as ApiResponse;
    port.postMessage({ id: m.id, res: r, ...(r !== res ? { ordered: true } : {}) } satisfies PoolAnswer);
  } catch (e) {
    // The request was carried out: a change that succeeded was committed, and its answer says
    // it may have been made.
    log.error({ err: e, method: m.req.method }, 'a service thread could not send its answer');
    port.postMessage({ id: m.id, res: unanswered(m.req.method, res.status < 300) } satisfies PoolAnswer);
  }
}

port.on('message', (m: PoolRequest | { close: true }) => {
  if ('close' in m) {
    store.close();
    port.close();
    return;
  }
  let res;
  try {
    const req = m.ordered ? (fromCloneable(m.req) as ApiRequest) : m.req;
    const audit = m.ordered && m.audit ? (fromCloneable(m.audit) as AuditEntry) : m.audit;
    res = answerAudited(service, req, audit);
  } catch (e) {
    // The service answers its own failures; what escapes it (the audit row's transaction lost
    // with its connection) rolled back whole, or its COMMIT's outcome is unknown: a 503 (that
    // says which), not a dead thread.
    log.error({ err: e }, 'a service thread could not answer');
    res = e instanceof StoreUnavailable ? unavailableAnswer(e, {}, m.req.method) : notCarriedOut();
  }
  send(m, res);
});
port.postMessage({ ready: true });
