/**
 * The owners, deprecations and list schemas the pipeline keeps in memory between requests are
 * never stale:
 * a change made by another process, another connection in this one, or any statement on the
 * same connection shows on the very next request, however warm the cache was.
 */
import { connect } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { arrived } from '../../src/service/pipeline.js';
import { Store } from '../../src/store/index.js';
import { runCli, spawnServe } from '../helpers/cli.js';
import { accountFixture, baseFixture, seedDb, useWorld } from '../helpers/world.js';

async function getMe(baseUrl: string, key: string) {
  const res = await fetch(`${baseUrl}/getMe`, { headers: { Accept: 'application/json', Authorization: `Bearer ${key}` } });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

/** Enough requests that every lookup of the key and the method comes from the cache. */
async function warm(baseUrl: string, key: string) {
  for (let i = 0; i < 20; i++) expect((await getMe(baseUrl, key)).status).toBe(200);
}

describe('changes by the admin command, another process, show on the very next request', () => {
  let db: string;
  let server: Awaited<ReturnType<typeof spawnServe>>;
  beforeAll(async () => {
    db = seedDb(baseFixture(), 'fresh.db');
    server = await spawnServe(['--db', db, '--rate-limit', '0']);
  });

  it('"Regenerating the key invalidates the old one immediately": 401 for the old key, the new one works', async () => {
    await warm(server.baseUrl, 'alice-key');
    const r = runCli(['admin', 'regenerate-key', '--owner', '1', '--db', db]);
    expect(r.status).toBe(0);
    expect((await getMe(server.baseUrl, 'alice-key')).status).toBe(401);
    const fresh = r.stdout.trim();
    await warm(server.baseUrl, fresh);
    expect((await getMe(server.baseUrl, fresh)).body.data.id).toBe(1);
  });

  it('the plan and the block come from the owner row as it is now: 402 and 403 at once, and back', async () => {
    await warm(server.baseUrl, 'bob-key');
    runCli(['admin', 'set-plan', '--owner', '2', '--plan', 'free', '--db', db]);
    expect((await getMe(server.baseUrl, 'bob-key')).status).toBe(402);
    runCli(['admin', 'set-plan', '--owner', '2', '--plan', 'pro', '--db', db]);
    await warm(server.baseUrl, 'bob-key');
    runCli(['admin', 'block-owner', '--owner', '2', '--db', db]);
    expect((await getMe(server.baseUrl, 'bob-key')).status).toBe(403);
    runCli(['admin', 'unblock-owner', '--owner', '2', '--db', db]);
    expect((await getMe(server.baseUrl, 'bob-key')).status).toBe(200);
  });

  it('"every response from it carries Deprecation: true and a Sunset header"; after the sunset 410, at once', async () => {
    await warm(server.baseUrl, 'bob-key');
    expect((await getMe(server.baseUrl, 'bob-key')).headers.get('deprecation')).toBeNull();
    runCli(['admin', 'deprecate', '--method', 'getMe', '--sunset', '2999-01-01T00:00:00Z', '--db', db]);
    const live = await getMe(server.baseUrl, 'bob-key');
    expect(live.headers.get('deprecation')).toBe('true');
    expect(live.headers.get('sunset')).toBe('Tue, 01 Jan 2999 00:00:00 GMT');
    await warm(server.baseUrl, 'bob-key');
    runCli(['admin', 'deprecate', '--method', 'getMe', '--sunset', '2020-01-01T00:00:00Z', '--db', db]);
    const gone = await getMe(server.baseUrl, 'bob-key');
    expect(gone.status).toBe(410);
    expect(gone.body.code).toBe('method_removed');
  });
});

describe('changes inside this process', () => {
  const w = useWorld(accountFixture);

  it('another connection to the same file: a new key and a deprecation show on the next request', async () => {
    await warm(w.baseUrl, 'alice-key');
    const other = Store.open(w.dbFile);
    try {
      const key = other.owners.regenerateKey(1)!;
      expect((await getMe(w.baseUrl, 'alice-key')).status).toBe(401);
      await warm(w.baseUrl, key);
      other.settings.setDeprecation('getMe', '2999-01-01T00:00:00+00:00');
      expect((await getMe(w.baseUrl, key)).headers.get('deprecation')).toBe('true');
      other.db.prepare("DELETE FROM deprecations WHERE method = 'getMe'").run();
      expect((await getMe(w.baseUrl, key)).headers.get('deprecation')).toBeNull();
    } finally {
      other.close();
    }
  });

  it("getMe's answer, kept with the cached owner, shows a rename by another connection on the next request", async () => {
    await warm(w.baseUrl, 'bob-key');
    const before = (await getMe(w.baseUrl, 'bob-key')).body.data;
    const other = Store.open(w.dbFile);
    try {
      other.db.prepare("UPDATE owners SET name = 'Roberta' WHERE id = 2").run();
      expect((await getMe(w.baseUrl, 'bob-key')).body.data).toEqual({ ...before, name: 'Roberta' });
      other.db.prepare('UPDATE owners SET name = ? WHERE id = 2').run(before.name);
      expect((await getMe(w.baseUrl, 'bob-key')).body.data).toEqual(before);
    } finally {
      other.close();
    }
  });

  it('any statement on the same connection, not only the store methods, drops what it changed', async () => {
    await warm(w.baseUrl, 'bob-key');
    w.sqlite.db.prepare("UPDATE owners SET plan = 'free' WHERE id = 2").run();
    expect((await getMe(w.baseUrl, 'bob-key')).status).toBe(402);
    w.sqlite.db.prepare("UPDATE owners SET plan = 'pro' WHERE id = 2").run();
    expect((await getMe(w.baseUrl, 'bob-key')).status).toBe(200);
    w.sqlite.db.prepare("UPDATE owners SET name = 'Robert' WHERE id = 2").run();
    expect((await getMe(w.baseUrl, 'bob-key')).body.data.name).toBe('Robert');
  });

  it('a list schema: a field added or the list deleted by another connection, its project given away on this one, show on the next request', async () => {
    const call = async (method: string, init: { query?: string; body?: unknown }) => {
      const res = await fetch(`${w.baseUrl}/${method}${init.query ? `?${init.query}` : ''}`, {
        method: init.body === undefined ? 'GET' : 'POST',
        headers: { Accept: 'application/json', Authorization: 'Bearer bob-key', 'Content-Type': 'application/json' },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const made = await call('createListSchema', {
      body: {
        name: 'Orders',
        project_uuid: '5a2b3c4d-1111-4c1e-9a55-0b6f3d2e1a11',
        fields: [{ name: 'Title', slug: 'title', type: 'string' }],
      },
    });
    expect(made.status).toBe(201);
    const id = made.body.data.id as string;
    const read = () => call('getListSchema', { query: `schema_id=${id}` });
    for (let i = 0; i < 5; i++) expect(Object.keys((await read()).body.data.fields)).toEqual(['title']);
    const other = Store.open(w.dbFile);
    try {
      const row = other.lists.byId(id)!;
      other.lists.setFields(
        row.seq,
        [
          ...JSON.parse(row.fields),
          { slug: 'qty', name: 'Qty', type: 'number', is_required: false, is_hidden: false, is_encryptable: false },
        ],
        '2030-01-01T00:00:00+00:00',
      );
      const after = await read();
      expect(Object.keys(after.body.data.fields)).toEqual(['title', 'qty']);
      expect(after.body.data.updated_at).toBe('2030-01-01T00:00:00+00:00');
      // A list is reachable from its owner's own projects only: given to Alice, Bob's next read is refused.
      w.sqlite.db.prepare("UPDATE projects SET owner_id = 1 WHERE uuid = '5a2b3c4d-1111-4c1e-9a55-0b6f3d2e1a11'").run();
      expect((await read()).status).not.toBe(200);
      w.sqlite.db.prepare("UPDATE projects SET owner_id = 2 WHERE uuid = '5a2b3c4d-1111-4c1e-9a55-0b6f3d2e1a11'").run();
      expect((await read()).status).toBe(200);
      other.lists.delete(row.seq);
      expect((await read()).status).toBe(404);
    } finally {
      other.close();
    }
  });

  it('requests that come in together share one check, made after all of them arrived', async () => {
    await warm(w.baseUrl, 'bob-key');
    const { port } = new URL(w.baseUrl);
    const one = 'GET /api/v1/getMe HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\nAuthorization: Bearer bob-key\r\n\r\n';
    const before = w.sqlite.cache.checks;
    // Ten pipelined requests in one write: read off the socket in one turn, answered together.
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1');
      let got = '';
      socket.on('data', (d) => {
        got += d.toString();
        if (got.split('HTTP/1.1 200 OK').length - 1 === 10) {
          socket.destroy();
          resolve(got);
        }
      });
      socket.on('error', reject);
      socket.write(one.repeat(10));
    });
    expect(text.split('{"data":{"id":2,').length - 1).toBe(10);
    // One check (two if the write was split on its way), not ten.
    expect(w.sqlite.cache.checks - before).toBeLessThanOrEqual(2);
  });

  it('a request that arrived after another connection committed always sees the commit, however recent the last check', async () => {
    await warm(w.baseUrl, 'bob-key');
    const other = Store.open(w.dbFile);
    try {
      // A check made now serves requests stamped before it, not one stamped after a later commit.
      const early = arrived();
      const req = (arrival: number) => ({
        method: 'getMe',
        verb: 'GET',
        input: {},
        bearer: 'bob-key',
        wantsJson: true,
        baseUrl: 'http://x/api/v1',
        arrival,
      });
      expect(w.service.call(req(arrived())).status).toBe(200);
      const checks = w.sqlite.cache.checks;
      other.db.prepare("UPDATE owners SET plan = 'free' WHERE id = 2").run();
      // Stamped before that check: it may trust it (it arrived before the commit, as if answered first).
      expect(w.service.call(req(early)).status).toBe(200);
      expect(w.sqlite.cache.checks).toBe(checks);
      // Stamped after the commit: checked again, and refused at once.
      expect(w.service.call(req(arrived())).status).toBe(402);
      expect(w.sqlite.cache.checks).toBe(checks + 1);
      other.db.prepare("UPDATE owners SET plan = 'pro' WHERE id = 2").run();
      // Unstamped (an in-process caller): always checked.
      expect(w.service.call({ ...req(0), arrival: undefined }).status).toBe(200);
    } finally {
      other.close();
    }
  });

  it('an owner read inside a transaction that rolls back is not remembered', () => {
    expect(() =>
      w.store.tx(() => {
        w.store.owners.insert({ name: 'Ghost', api_key: 'ghost-key' });
        expect(w.store.owners.byKey('ghost-key')?.name).toBe('Ghost');
        throw new Error('roll back');
      }),
    ).toThrow('roll back');
    expect(w.store.owners.byKey('ghost-key')).toBeUndefined();
  });
});
