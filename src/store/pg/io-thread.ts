/**
 * The source of the I/O thread behind a `PgConnection` (connection.ts). It holds one `pg`
 * client, runs each query its caller posts, posts the answer back and then wakes the caller,
 * which sleeps in `Atomics.wait` until then. A lost connection is reported as such and the next
 * query connects again. Kept as plain JavaScript evaluated by the Worker (`eval: true`), so the
 * same thread starts from the built package and from the TypeScript sources under test
 * (`process.getBuiltinModule` needs Node 20.16; the package asks for 20.18).
 */
export const IO_THREAD_SOURCE = `
// Evaluated as a script or as a module (the worker inherits --input-type): no require() here.
const { workerData } = process.getBuiltinModule('node:worker_threads');
// A thread that cannot load pg answers every query with why, rather than leave its caller waiting.
let pg = null;
let broken = null;
try {
  pg = process.getBuiltinModule('node:module').createRequire(workerData.pgPath)(workerData.pgPath);
  // 64-bit integers (count(*), bigint columns) as numbers, as SQLite gives them: ours stay
  // far below 2^53.
  pg.types.setTypeParser(20, (v) => Number(v));
} catch (e) {
  broken = String(e && e.message);
}
const { port, flag, url, statementTimeoutMs, genericPlans } = workerData;
let client = null;
let connecting = null;
// Which connection this is: a transaction's statements name the one it began on, and are
// refused rather than run on a new one when that one was lost.
let generation = 0;

function connect() {
  if (client) return Promise.resolve(client);
  if (!connecting) {
    const c = new pg.Client({ connectionString: url, statement_timeout: statementTimeoutMs, connectionTimeoutMillis: 5000, options: genericPlans ? '-c plan_cache_mode=force_generic_plan' : undefined });
    // A connection that fails between queries: forget it, the next query connects again.
    c.on('error', () => { if (client === c) client = null; });
    c.on('end', () => { if (client === c) client = null; });
    connecting = c.connect().then(() => { client = c; generation++; connecting = null; return c; }, (e) => { connecting = null; throw e; });
  }
  return connecting;
}

function reply(msg) {
  port.postMessage(msg);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}

// A prepared statement's name: its text's hash, so that the same text is prepared once per connection.
const { createHash } = process.getBuiltinModule('node:crypto');
const names = new Map();
function statementName(sql) {
  let name = names.get(sql);
  if (name === undefined) names.set(sql, (name = 's' + createHash('sha256').update(sql).digest('hex').slice(0, 24)));
  return name;
}

let queue = Promise.resolve();
port.on('message', (m) => {
  // Every answer carries the id of its query, so the caller can tell it from a late one.
  const answer = (msg) => reply({ ...msg, id: m.id });
  queue = queue.then(async () => {
    if (m.close) {
      const c = client;
      client = null;
      try { if (c) await c.end(); } catch {}
      answer({ closed: true });
      port.close();
      return;
    }
    if (broken) {
      answer({ error: { message: 'the PostgreSQL client cannot load: ' + broken, lost: false } });
      return;
    }
    if (m.generation !== undefined && (!client || generation !== m.generation)) {
      answer({ error: { message: 'the connection of this transaction was lost', lost: true } });
      return;
    }
    try {
      const c = await connect();
      const r = await c.query({ text: m.sql, values: m.params, rowMode: m.array ? 'array' : undefined, name: m.prepared ? statementName(m.sql) : undefined });
      answer({ rows: r.rows, rowCount: r.rowCount ?? 0, generation });
    } catch (e) {
      // Not a SQLSTATE (a socket's ECONNREFUSED, a terminated connection), or a connection class one.
      const lost = !/^[0-9A-Z]{5}$/.test(String(e.code)) || /^(08|57P)/.test(String(e.code));
      if (lost && client) { const c = client; client = null; c.end().catch(() => {}); }
      answer({ error: { message: String(e.message), code: e.code === undefined ? undefined : String(e.code), lost } });
    }
  });
});
`;
