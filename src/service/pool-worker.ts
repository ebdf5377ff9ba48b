/**
 * One service thread of a `ServicePool` (pool.ts): its own PostgreSQL connection and its own
 * Service, answering the requests the pool posts, one at a time (each waits on its queries as
 * a PHP-FPM worker does, while the other threads and the HTTP thread go on).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { AdmitOptions, ApiResponse, AuditEntry } from '../api/backend.js';
import { fromCloneable, toCloneable } from '../common/ordered.js';
import { flushLog, log } from '../common/log.js';
import { StoreUnavailable } from '../store/store-api.js';
import { PgStore } from '../store/pg/index.js';
import {
  ADMIT,
  crossingError,
  unanswered,
  notCarriedOut,
  type JobAnswer,
  type PoolAnswer,
  type PoolJob,
  type PoolRequest,
  type PoolSetup,
} from './pool.js';
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
/** The jobs of `PoolSetup.jobs`, loaded before the thread says it is ready (so it answers in the order posted). */
const handle = setup.jobs
  ? ((await import(setup.jobs)) as { jobHandler: (store: PgStore, service: Service) => (job: unknown) => unknown }).jobHandler(
      store,
      service,
    )
  : undefined;

/** Run job `m` and post what it answered, or the error it threw (the store's own, made again on the other side). */
async function runJob(m: PoolJob): Promise<void> {
  let answer: JobAnswer;
  try {
    const job = m.ordered ? fromCloneable(m.job) : m.job;
    const admit = (job as { [ADMIT]?: { as: Pick<ApiRequest, 'keyHash' | 'asOwner'>; o?: AdmitOptions } })[ADMIT];
    if (!admit && !handle) throw new Error('this service thread takes no jobs');
    // A search's promise settles within this turn: its work is all on this thread's connection.
    const value = admit ? service.admit(admit.as, admit.o) : await handle!(job);
    const v = toCloneable(value);
    answer = { id: m.id, value: v, ...(v !== value ? { ordered: true } : {}) };
  } catch (e) {
    answer = { id: m.id, error: crossingError(e) };
  }
  try {
    port.postMessage(answer);
  } catch (e) {
    log.error({ err: e }, 'a service thread could not send what a job answered');
    port.postMessage({ id: m.id, error: crossingError(e) } satisfies JobAnswer);
  }
}

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

port.on('message', (m: PoolRequest | PoolJob | { close: true }) => {
  if ('close' in m) {
    store.close();
    port.close();
    return;
  }
  if ('job' in m) return void runJob(m);
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
