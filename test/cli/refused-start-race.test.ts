/**
 * Two starts at once on one new database and one port: the port is taken before anything is
 * made, so the start refused for it has made nothing and removes nothing; the other's database
 * and secret stay whole. And what a server answers between taking its port and being ready.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseFixture, seedDb } from '../helpers/world.js';
import { CLI, cliEnv, collect, spawnAnnounced, spawnServe } from '../helpers/cli.js';
import { stop, tempDir, track } from '../helpers/temp.js';

/** A port free a moment ago: both starts are given it. */
function freePort(): Promise<number> {
  const s = createServer();
  return new Promise((resolve) =>
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    }),
  );
}

interface Start {
  proc: ReturnType<typeof spawn>;
  stderr: () => string;
  /** The base URL it announced, or its exit status if it ended first. */
  outcome: Promise<{ url: string } | { status: number | null }>;
}

function start(args: string[], extra: Record<string, string> = {}): Start {
  const proc = track(spawn(process.execPath, [CLI, ...args], { env: cliEnv(extra), stdio: ['ignore', 'pipe', 'pipe'] }));
  const out = collect(proc.stdout!);
  const err = collect(proc.stderr!);
  const outcome = new Promise<{ url: string } | { status: number | null }>((resolve) => {
    out.wait(/(http:\/\/\S+\/(?:api\/v1|mcp))\n/).then(
      (m) => resolve({ url: m[1]! }),
      () => undefined,
    );
    proc.once('exit', (status) => resolve({ status }));
  });
  return { proc, stderr: err.text, outcome };
}

/** The new default owner's key, as the banner shows it once. */
function newKey(stderr: string): string {
  const m = /\n {2}API key +(\S+) \(the new default owner's; shown this once\)/.exec(stderr);
  if (!m) throw new Error(`no new key in: ${stderr}`);
  return m[1]!;
}

async function getMe(baseUrl: string, key: string): Promise<{ status: number; body: { data?: { id?: number } } }> {
  const r = await fetch(`${baseUrl}/getMe`, { headers: { Accept: 'application/json', Authorization: `Bearer ${key}` } });
  return { status: r.status, body: (await r.json()) as { data?: { id?: number } } };
}

describe('two serve starts at once on one new database and one port', () => {
  for (const round of [1, 2, 3])
    it(`exactly one serves, the other exits 2 and leaves the served database and secret whole (round ${round})`, async () => {
      const dir = tempDir();
      const file = join(dir, 'workspace.db');
      const port = String(await freePort());
      const both = [start(['serve', '--db', file, '--port', port]), start(['serve', '--db', file, '--port', port])];
      try {
        const outcomes = await Promise.all(both.map((s) => s.outcome));
        const served = outcomes.findIndex((o) => 'url' in o);
        expect(served, `neither served: ${both.map((s) => s.stderr()).join('\n')}`).not.toBe(-1);
        const refused = both[1 - served]!;
        expect(outcomes[1 - served]).toEqual({ status: 2 });
        expect(refused.stderr()).toBe(
          `workspace-mcp: port ${port} on 127.0.0.1 is in use: give --port another number (0: any free port)\n`,
        );

        // The served one's database and secret are there and in use, after the other start ended.
        const baseUrl = (outcomes[served] as { url: string }).url;
        const key = newKey(both[served]!.stderr());
        expect(readdirSync(dir)).toEqual(expect.arrayContaining(['workspace.db', 'workspace.db.secret']));
        expect((await getMe(baseUrl, key)).status).toBe(200);
        await stop(both[served]!.proc);

        // A restart opens the same database with the same secret: not new, the same key answers.
        const again = await spawnAnnounced(['serve', '--db', file, '--port', '0'], /(http:\/\/\S+\/api\/v1)/);
        try {
          expect(again.stderr()).not.toContain('(new, empty: ');
          expect(again.stderr()).not.toContain('shown this once');
          const me = await getMe(again.url, key);
          expect(me.status).toBe(200);
          expect(me.body.data?.id).toBe(1);
        } finally {
          await stop(again.proc);
        }
      } finally {
        await Promise.all(both.map((s) => stop(s.proc)));
      }
    }, 60_000);
});

it('a start refused for its port leaves a dangling symlink where the database would be as it was', async () => {
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
  const port = String((taken.address() as { port: number }).port);
  try {
    const dir = tempDir();
    const { symlinkSync, readlinkSync } = await import('node:fs');
    symlinkSync(join(dir, 'elsewhere.db'), join(dir, 'workspace.db'));
    const s = start(['serve', '--db', join(dir, 'workspace.db'), '--port', port]);
    expect(await s.outcome).toEqual({ status: 2 });
    expect(readlinkSync(join(dir, 'workspace.db'))).toBe(join(dir, 'elsewhere.db'));
    expect(existsSync(join(dir, 'elsewhere.db'))).toBe(false);
    expect(readdirSync(dir)).toEqual(['workspace.db']);
  } finally {
    await new Promise<void>((r) => taken.close(() => r()));
  }
});

/** Poll `url` until it answers (the port is taken), within `ms`. */
async function firstAnswer(url: string, ms = 20_000): Promise<Response> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return await fetch(url);
    } catch (e) {
      if (Date.now() > until) throw e;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

/** The probes of a server between taking its port and being ready, and a request it refuses then; all sent at once. */
async function expectStarting(base: string, path: string, refusal: RegExp): Promise<void> {
  const [live, ready, health, other] = await Promise.all([
    fetch(`${base}/livez`),
    fetch(`${base}/readyz`),
    fetch(`${base}/healthz`),
    fetch(`${base}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' }),
  ]);
  expect(live.status).toBe(200);
  expect([ready.status, await ready.json()]).toEqual([503, { status: 'starting' }]);
  const said = (await health.json()) as { status: string; draining: boolean };
  expect([health.status, said.status, said.draining]).toEqual([200, 'starting', false]);
  expect(other.status).toBe(503);
  expect(other.headers.get('retry-after')).toBe('1');
  expect(other.headers.get('content-type')).toMatch(/application\/json/);
  expect(await other.text()).toMatch(refusal);
}

const STARTING = /"message":"The server is starting; send the request again in a moment\."/;

describe('between taking its port and being ready', () => {
  it('serve, its PostgreSQL database not answering yet: its port is taken already, so a second start on it makes nothing; when the first fails, exit 2 and the port let go', async () => {
    // A PostgreSQL server that takes the connection and says nothing: the start waits on it
    // (the store's connection is opened synchronously: the probes are not answered meanwhile).
    const held: Socket[] = [];
    let reached!: () => void;
    const connected = new Promise<void>((r) => (reached = r));
    const silent = createServer((socket) => {
      held.push(socket);
      reached();
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const pgPort = (silent.address() as { port: number }).port;
    const port = String(await freePort());
    const s = start(['serve', '--db', `postgres://u:p@127.0.0.1:${pgPort}/w`, '--port', port], { WORKSPACE_SECRET: 'ab'.repeat(32) });
    try {
      // It connects once its port is taken.
      await connected;
      const dir = tempDir();
      const second = start(['serve', '--db', join(dir, 'workspace.db'), '--port', port]);
      expect(await second.outcome).toEqual({ status: 2 });
      expect(second.stderr()).toBe(`workspace-mcp: port ${port} on 127.0.0.1 is in use: give --port another number (0: any free port)\n`);
      expect(readdirSync(dir)).toEqual([]);
      for (const socket of held) socket.destroy();
      expect(await s.outcome).toEqual({ status: 2 });
      expect(s.stderr()).toMatch(/^workspace-mcp: .*\n$/);
      // The port is free again.
      const again = createServer();
      await new Promise<void>((resolve, reject) => {
        again.once('error', reject);
        again.listen(Number(port), '127.0.0.1', resolve);
      });
      await new Promise<void>((r) => again.close(() => r()));
    } finally {
      for (const socket of held) socket.destroy();
      silent.close();
      await stop(s.proc);
    }
  }, 60_000);

  it('mcp --http, its remote API not answering yet: "starting" in the MCP error shape; then ready', async () => {
    const api = await spawnServe(['--db', seedDb(baseFixture())]);
    // The remote API behind a door that holds each request until let through.
    let open!: () => void;
    const opened = new Promise<void>((r) => (open = r));
    const door = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void opened
          .then(() =>
            fetch(`${api.baseUrl}${req.url!.replace(/^\/api\/v1/, '')}`, {
              method: req.method,
              headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'connection')) as Record<
                string,
                string
              >,
              ...(req.method === 'GET' || req.method === 'HEAD' ? {} : { body: Buffer.concat(chunks) }),
            }),
          )
          .then(async (r) => {
            res.writeHead(r.status, Object.fromEntries(r.headers));
            res.end(Buffer.from(await r.arrayBuffer()));
          });
      });
    });
    await new Promise<void>((r) => door.listen(0, '127.0.0.1', r));
    const remote = `http://127.0.0.1:${(door.address() as { port: number }).port}/api/v1`;
    const port = String(await freePort());
    const s = start(['mcp', '--http', '--remote', remote, '--port', port], { WORKSPACE_API_KEY: 'alice-key' });
    try {
      const base = `http://127.0.0.1:${port}`;
      await firstAnswer(`${base}/livez`);
      await expectStarting(base, '/mcp', STARTING);
      open();
      expect(await s.outcome, s.stderr()).toEqual({ url: `${base}/mcp` });
      const now = await fetch(`${base}/readyz`);
      expect([now.status, await now.json()]).toEqual([200, { status: 'ok' }]);
    } finally {
      await stop(s.proc);
      await stop(api.proc);
      door.closeAllConnections();
      door.close();
    }
  }, 60_000);
});
