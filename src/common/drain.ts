/**
 * What both HTTP servers (`serve`, `mcp --http`) share to run as operators run services: the
 * probes (`/livez`, `/readyz`, `/healthz`, answered at once, with nothing of anyone's data) and
 * the drain on SIGTERM or SIGINT: readiness fails at once, every new request is refused with 503
 * and Retry-After (in the server's own error shape), the requests in hand finish, idle keep-alive
 * connections are closed, and the process exits 0 once they are done or `--drain-timeout` has
 * passed; a second signal exits at once.
 */
import { createServer, type RequestListener, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import { log } from './log.js';

/** The seconds a refused request is told to wait: another instance answers it sooner, this one never will. */
const RETRY_AFTER = '5';
/** The seconds a request that came while the server starts is told to wait. */
const RETRY_STARTING = '1';

/** A refusal's status, headers and body, as each server writes its errors. */
export interface Refusal {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export class Drain {
  private readonly started = Date.now();
  private readonly inHand = new Set<ServerResponse>();
  /** Follow-ups let in while draining (`admit`): refused once read if they carry a new request. */
  private readonly late = new WeakSet<ServerResponse>();
  private readonly aborts = new AbortController();
  private whenIdle: (() => void) | undefined;
  /** Start-up work still under way (the remote URL's first check, the database's connections): not ready yet. */
  private starting = 0;

  /** `version`: the package's; `refusal`: a request refused while draining, in the server's error shape. */
  constructor(
    private readonly version: string,
    private readonly refusal: (message: string, headers: Record<string, string>) => Refusal,
  ) {}

  /** Aborted when the drain begins: long work (a bulk run) stops between its steps. */
  get signal(): AbortSignal {
    return this.aborts.signal;
  }

  get draining(): boolean {
    return this.aborts.signal.aborted;
  }

  /**
   * `/readyz` answers 503 until `work` (start-up that goes on once the server listens) has
   * resolved; if it fails, the reason is logged and the server never becomes ready.
   */
  notReadyUntil(work: Promise<unknown>): void {
    this.starting++;
    work.then(
      () => this.starting--,
      (e: unknown) => log.error({ err: e }, 'start-up did not finish: /readyz stays 503'),
    );
  }

  /**
   * A probe at `path` answered (true), or a request refused because the server drains (true),
   * or a request now in hand until its response closes (false: the server answers it). A stream
   * (`stream`: a GET stream, a subscription) is not waited for: the server's close ends it. A
   * `followUp` (a message on a session, which may answer a question that a call in hand asked,
   * or cancel it) is let in while draining too: the server `refuse`s it once read if it came
   * `late` and turns out to be a new request.
   */
  admit(res: ServerResponse, path: string, stream = false, followUp = false): boolean {
    if (path === '/livez' || path === '/readyz' || path === '/healthz') {
      this.probe(res, path);
      return true;
    }
    if (this.draining) {
      if (!followUp) {
        this.refuse(res);
        return true;
      }
      this.late.add(res);
    }
    if (stream) return false;
    this.inHand.add(res);
    res.once('close', () => {
      this.inHand.delete(res);
      if (this.inHand.size === 0) this.whenIdle?.();
    });
    return false;
  }

  /** Whether `res` is of a follow-up let in while draining (`admit`). */
  cameLate(res: ServerResponse): boolean {
    return this.late.has(res);
  }

  /**
   * Before the server's own handler is installed (`bindFirst`): a probe at `path` answered (the
   * server is starting), any other request refused with 503 and Retry-After.
   */
  whileStarting(res: ServerResponse, path: string): void {
    if (path === '/livez' || path === '/readyz' || path === '/healthz') return this.probe(res, path);
    const r = this.refusal('The server is starting; send the request again in a moment.', { 'Retry-After': RETRY_STARTING });
    res.writeHead(r.status, r.headers);
    res.end(r.body);
  }

  /** Answer `res` with the refusal of a request that came while draining: 503, Retry-After. */
  refuse(res: ServerResponse): void {
    const r = this.refusal('The server is shutting down; send the request again (another instance may answer it).', {
      'Retry-After': RETRY_AFTER,
      Connection: 'close',
    });
    res.writeHead(r.status, r.headers);
    res.end(r.body);
  }

  private probe(res: ServerResponse, path: string): void {
    const draining = this.draining;
    // Draining first: a server that drains while still starting is on its way out.
    const status = draining ? 'draining' : this.starting > 0 ? 'starting' : 'ok';
    const body =
      path === '/healthz'
        ? { status, version: this.version, uptime_s: Math.floor((Date.now() - this.started) / 1000), draining }
        : { status: path === '/readyz' ? status : 'ok' };
    const text = JSON.stringify(body);
    res.writeHead(path === '/readyz' && status !== 'ok' ? 503 : 200, {
      'Content-Type': 'application/json',
      'Content-Length': String(Buffer.byteLength(text)),
      'Cache-Control': 'no-store',
    });
    res.end(text);
  }

  /**
   * Drain `server`: refuse new requests (the listener stays open), close idle keep-alive
   * connections (those of answered requests too, as they go idle), and wait for the requests in
   * hand and for `work` (what runs outside a request), at most `timeoutMs`. Resolves with how
   * many requests were still in hand (0: none was cut).
   */
  async drain(server: Server, timeoutMs: number, work: Promise<unknown> = Promise.resolve()): Promise<number> {
    this.aborts.abort();
    for (const res of this.inHand) if (!res.headersSent) res.setHeader('Connection', 'close');
    server.closeIdleConnections();
    const sweep = setInterval(() => server.closeIdleConnections(), 100);
    let timer: NodeJS.Timeout | undefined;
    try {
      const requests = new Promise<void>((done) => {
        this.whenIdle = done;
        if (this.inHand.size === 0) done();
      });
      await Promise.race([Promise.all([requests, work]), new Promise((done) => (timer = setTimeout(done, timeoutMs)))]);
    } finally {
      clearInterval(sweep);
      clearTimeout(timer);
    }
    return this.inHand.size;
  }
}

/** A server listening on its port before the rest of its start is done (`bindFirst`). */
export interface Bound {
  server: Server;
  /** The probes' state: "starting" until `serve`. */
  drain: Drain;
  /** Install the server's own handler: from now on it answers every request, the probes too. */
  serve(handler: RequestListener): void;
  /** Stop listening: a start that failed after its port was taken. */
  close(): Promise<void>;
}

/**
 * Take `port` on `host` before anything else of a start is done (a database made, a state file
 * opened): a port that is taken refuses the start (the listen error, EADDRINUSE) with nothing
 * made, and of two starts on one port only the one that got it goes on. Until `serve`, the
 * probes say "starting" (`drain`) and every other request is refused with 503 and Retry-After.
 * `prepare` sets the server up (its timeouts, its error answers) before it listens.
 */
export async function bindFirst(
  host: string,
  port: number,
  drain: Drain,
  options: ServerOptions,
  prepare?: (server: Server) => void,
): Promise<Bound> {
  let ready = (): void => {};
  drain.notReadyUntil(new Promise<void>((resolve) => (ready = resolve)));
  let handler: RequestListener = (req, res) => {
    let path = '/';
    try {
      path = new URL(req.url ?? '/', 'http://x').pathname;
    } catch {
      // Not a path: refused as any request is while starting.
    }
    drain.whileStarting(res, path);
  };
  const server = createServer(options, (req, res) => handler(req, res));
  prepare?.(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    drain,
    serve(own) {
      handler = own;
      ready();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * On SIGTERM or SIGINT, `drain` (which resolves with the requests it had to cut) and then exit 0;
 * a second signal during the drain exits at once, with status 1 (work may have been cut).
 */
export function drainOnSignals(drain: () => Promise<number>): void {
  let draining = false;
  const stop = (signal: NodeJS.Signals) => {
    if (draining) {
      log.warn({ signal }, 'a second signal during the drain: exiting now');
      process.exit(1);
    }
    draining = true;
    log.info({ signal }, 'draining: new requests are refused, those in hand finish');
    void drain()
      .then((cut) => {
        if (cut > 0) log.warn({ cut }, 'the drain timeout passed with requests in hand: they were cut');
      })
      .catch((e: unknown) => log.error({ err: e }, 'the drain failed'))
      .finally(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
