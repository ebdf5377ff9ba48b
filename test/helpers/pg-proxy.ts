/**
 * A TCP proxy between the store and a test PostgreSQL that forwards everything, and once told,
 * cuts one transaction's connection at its COMMIT: a network failure at the worst moment, made
 * to order. It reads the client's side of the wire protocol (a length-first startup message,
 * then messages of a type byte and a length) so that it can tell the COMMIT from the rest: the
 * `pg` driver sends a statement without parameters as a simple Query ('Q'), its text
 * NUL-terminated.
 */
import { createServer, Socket, type AddressInfo, type Server } from 'node:net';

interface CommitCut {
  /**
   * `answer-lost`: the COMMIT goes to the server, then the client's socket is destroyed before
   * any answer passes (the server commits; the client never hears so). `before-commit`: the
   * client's socket is destroyed and the server's closed without the COMMIT, so the server
   * rolls the transaction back. `stalled`: the client's socket is destroyed, the COMMIT not
   * sent, and the server's socket kept open until `release()`, so the server holds the
   * transaction open (a client gone where the server cannot see it).
   */
  mode: 'answer-lost' | 'before-commit' | 'stalled';
  /** Only a COMMIT on a connection that has sent this text since the cut was asked for (the transaction's own statements). */
  after: string;
  /** Refuse new connections from the cut on, until `accept()` (the store cannot ask anything afterwards). */
  refuseAfter?: boolean;
}

export interface PgProxy {
  /** The URL of `target` with the host and port of the proxy in it. */
  url(target: string): string;
  /** Run `during` with the next COMMIT that matches cut: its answer, once the COMMIT is cut. */
  cut<T>(c: CommitCut, during: () => Promise<T>): Promise<T>;
  /** Connections the proxy has accepted and forwarded so far. */
  connections(): number;
  /** Forward new connections again (after `refuseAfter`). */
  accept(): void;
  /** Close the server's side of stalled connections: the server rolls their transactions back. */
  release(): void;
  close(): Promise<void>;
}

const COMMIT = /^\s*COMMIT\s*;?\s*$/i;

export async function startPgProxy(pgPort: number): Promise<PgProxy> {
  let armed: (CommitCut & { done: () => void }) | undefined;
  let refusing = false;
  let accepted = 0;
  const sockets = new Set<Socket>();
  const stalled: Socket[] = [];

  const server: Server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    accepted++;
    const upstream = new Socket();
    // Each message is written as it is read: without Nagle's wait, a round trip costs no extra 40 ms.
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    sockets.add(client).add(upstream);
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
    upstream.connect(pgPort, '127.0.0.1');
    let cutOff = false;
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', () => cutOff || upstream.end());
    // (A stalled connection's server side is closed by `release` or `close` only.)
    upstream.on('close', () => client.destroy());
    upstream.on('data', (d) => {
      if (!cutOff) client.write(d);
    });

    let pending = Buffer.alloc(0);
    let started = false;
    /** Whether this connection has sent the armed cut's `after` text since it was armed. */
    let seen = false;
    let armedAs: CommitCut | undefined;
    client.on('data', (d: Buffer) => {
      if (cutOff) return;
      pending = Buffer.concat([pending, d]);
      for (;;) {
        // The startup message (and an SSL request) has no type byte: its length comes first.
        const head = started ? 1 : 0;
        if (pending.length < head + 4) return;
        const size = head + pending.readInt32BE(head);
        if (pending.length < size) return;
        const message = pending.subarray(0, size);
        pending = pending.subarray(size);
        if (!started) {
          // An SSLRequest (code 80877103) is refused by the server with one byte 'N', and the startup follows.
          started = message.readInt32BE(4) !== 80877103;
          upstream.write(message);
          continue;
        }
        if (armed !== armedAs) {
          armedAs = armed;
          seen = false;
        }
        const text = message.subarray(5).toString('utf8');
        if (armed && seen && message[0] === 0x51 && COMMIT.test(text.replace(/\0$/, ''))) {
          const cut = armed;
          armed = undefined;
          cutOff = true;
          if (cut.refuseAfter) refusing = true;
          if (cut.mode === 'answer-lost') upstream.write(message);
          client.destroy();
          // The COMMIT (if sent) goes first, then the end of the stream: the server reads both in order.
          if (cut.mode === 'stalled') stalled.push(upstream);
          else upstream.end();
          cut.done();
          return;
        }
        if (armed && text.includes(armed.after)) seen = true;
        upstream.write(message);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url(target) {
      const u = new URL(target);
      u.host = `127.0.0.1:${port}`;
      return u.toString();
    },
    async cut(c, during) {
      const cut = new Promise<void>((resolve) => {
        armed = { ...c, done: resolve };
      });
      const answer = await during();
      await cut;
      return answer;
    },
    connections: () => accepted,
    accept() {
      refusing = false;
    },
    release() {
      for (const s of stalled.splice(0)) s.end();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
