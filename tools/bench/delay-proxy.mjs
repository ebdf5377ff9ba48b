// A TCP proxy that holds each chunk `ms` before passing it on, both ways: a database a network
// hop away (mcp-oauth.mjs puts it in front of PostgreSQL). Chunks keep their order (timers of
// one duration fire in the order set).
import { createServer, connect } from 'node:net';

/** Listens on 127.0.0.1 (a free port) in front of `port`; { port, close() }. */
export function delayProxy(port, ms) {
  const sockets = new Set();
  const pass = (from, to) => {
    from.on('data', (chunk) => setTimeout(() => to.destroyed || to.write(chunk), ms));
    from.on('end', () => setTimeout(() => to.end(), ms));
    from.on('error', () => to.destroy());
    from.on('close', () => setTimeout(() => to.destroy(), ms));
  };
  const server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.setNoDelay(true);
      s.once('close', () => sockets.delete(s));
    }
    pass(client, upstream);
    pass(upstream, client);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: server.address().port,
        close() {
          for (const s of sockets) s.destroy();
          return new Promise((r) => server.close(() => r()));
        },
      }),
    ),
  );
}
