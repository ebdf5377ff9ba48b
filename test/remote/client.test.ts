/**
 * The remote backend against real local HTTP servers: our own service (answers pass through
 * unchanged) and a server that misbehaves on purpose (slow, resets, 429, 500, HTML, not JSON).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { RemoteBackend, checkRemote, redactKey, toQuery } from '../../src/remote/client.js';
import { Pacer } from '../../src/remote/pacer.js';
import { LocalBackend } from '../../src/service/backend.js';
import { accountFixture, useWorld } from '../helpers/world.js';

const KEY = 'super-secret-key-123';

interface Fault {
  server: Server;
  baseUrl: string;
  hits: Array<{ method: string; url: string; body: string }>;
  close(): Promise<void>;
}

async function faultServer(handler: (req: IncomingMessage, res: ServerResponse, n: number) => void): Promise<Fault> {
  const hits: Fault['hits'] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      hits.push({ method: req.method!, url: req.url!, body });
      handler(req, res, hits.length);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    baseUrl: `http://127.0.0.1:${port}/api/v1`,
    hits,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

function remote(baseUrl: string, extra: Partial<ConstructorParameters<typeof RemoteBackend>[0]> = {}) {
  const waits: number[] = [];
  const backend = new RemoteBackend({
    baseUrl,
    apiKey: KEY,
    pacePerMinute: 0,
    headersTimeoutMs: 300,
    bodyTimeoutMs: 300,
    sleep: async (ms) => {
      waits.push(ms);
    },
    ...extra,
  });
  return { backend, waits };
}

describe('against our own service, answers pass through unchanged', () => {
  const w = useWorld(accountFixture);

  it('the same status and body as the built-in service, for success and error', async () => {
    const r = new RemoteBackend({ baseUrl: w.baseUrl, apiKey: 'alice-key', pacePerMinute: 0 });
    const local = new LocalBackend(w.service, { apiKey: 'alice-key' });
    try {
      for (const [method, params] of [
        ['getMe', {}],
        ['getContactAccounts', { contact_id: 100 }],
        ['addFundsToContactAccount', { account_id: 500, amount: 0, description: 'x' }],
        ['getContactAccounts', { contact_id: 999 }],
      ] as const) {
        const a = await r.call(method, params);
        const b = await local.call(method, params);
        expect(a.status, method).toBe(b.status);
        expect(JSON.stringify(a.body)).toBe(JSON.stringify(b.body));
      }
      expect(await checkRemote(r, w.baseUrl)).toMatchObject({ id: 1 });
    } finally {
      await r.close();
    }
  });

  it('a key per request (--auth key|oauth) is paced on its own: one person at the limit does not hold back another', async () => {
    // The service's limit is per key (spec: 120 requests a minute per owner), so one shared pacer would make a team share one owner's minute.
    let t = 0;
    const waits: Array<{ key: string; ms: number }> = [];
    let current = 'alice-key';
    const r = new RemoteBackend({
      baseUrl: w.baseUrl,
      apiKey: () => current,
      pacePerMinute: 2,
      now: () => t,
      sleep: async (ms) => {
        waits.push({ key: current, ms });
        t += ms;
      },
    });
    try {
      for (const key of ['alice-key', 'alice-key', 'bob-key', 'bob-key']) {
        current = key;
        expect((await r.call('getMe', {})).status).toBe(200);
      }
      expect(waits).toEqual([]);
      current = 'alice-key';
      expect((await r.call('getMe', {})).status).toBe(200);
      expect(waits.map((x) => x.key)).toEqual(['alice-key']);
    } finally {
      await r.close();
    }
  });

  it('a good key still starts when getMe itself is past its sunset (410)', async () => {
    w.store.settings.setDeprecation('getMe', '2020-01-01T00:00:00+00:00');
    const r = new RemoteBackend({ baseUrl: w.baseUrl, apiKey: 'alice-key', pacePerMinute: 0 });
    try {
      await expect(checkRemote(r, w.baseUrl)).resolves.toBeDefined();
    } finally {
      w.sqlite.db.prepare("DELETE FROM deprecations WHERE method = 'getMe'").run();
      await r.close();
    }
  });

  it('a key that fails getMe is a clear start-up error that does not show the key', async () => {
    for (const [key, why] of [
      ['nope-key-0001', /401/],
      ['fran-key', /402/],
      ['blocked-key', /403/],
    ] as const) {
      const r = new RemoteBackend({ baseUrl: w.baseUrl, apiKey: key, pacePerMinute: 0 });
      const err = await checkRemote(r, w.baseUrl).catch((e: Error) => e);
      expect(String(err)).toMatch(why);
      expect(String(err)).not.toContain(key);
      await r.close();
    }
  });
});

describe('a server that misbehaves on purpose', () => {
  it('an unreachable URL is a clear start-up error', async () => {
    const f = await faultServer(() => undefined);
    await f.close(); // nothing listens there now
    const { backend } = remote(f.baseUrl);
    const err = await checkRemote(backend, f.baseUrl).catch((e: Error) => e);
    expect(String(err)).toMatch(/could not be reached/);
    expect(String(err)).not.toContain(KEY);
    await backend.close();
  });

  it('a short key is redacted as a whole word only: an unreachable 127.0.0.1 keeps its address with the key "1", "0" or "127"', async () => {
    const f = await faultServer(() => undefined);
    await f.close();
    const port = new URL(f.baseUrl).port;
    for (const key of ['1', '0', '127']) {
      const { backend } = remote(f.baseUrl, { apiKey: key });
      const r = await backend.call('getMe', {});
      expect(r.status, key).toBe(502);
      expect((r.body as { message: string }).message, key).toBe(
        `The service could not be reached for getMe (ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:${port}).`,
      );
      await backend.close();
    }
  });

  it('redactKey: the key alone, or between non-word characters, goes; inside a longer word it stays; a long key goes anywhere', () => {
    expect(redactKey('ECONNREFUSED 127.0.0.1:9', '1')).toBe('ECONNREFUSED 127.0.0.1:9');
    expect(redactKey('1', '1')).toBe('[redacted]');
    expect(redactKey('key 1. Bearer 1, ?api_token=1&x "1" (1) 1:9 /1/', '1')).toBe(
      'key [redacted]. Bearer [redacted], ?api_token=[redacted]&x "[redacted]" ([redacted]) [redacted]:9 /[redacted]/',
    );
    expect(redactKey('k1 1k 1_ -1 1.5 v.1 a1b', '1')).toBe('k1 1k 1_ -1 1.5 v.1 a1b');
    // Characters a regular expression would read are the key's own.
    expect(redactKey('a+b, ab, aab', 'a+b')).toBe('[redacted], ab, aab');
    expect(redactKey('Bearer ab.c', 'ab.c')).toBe('Bearer [redacted]');
    expect(redactKey('abXc', 'ab.c')).toBe('abXc');
    expect(redactKey('Bearer ключ.', 'ключ')).toBe('Bearer [redacted].');
    expect(redactKey('x-ключи', 'ключ')).toBe('x-ключи');
    // A real key's length: wherever it appears, even glued to other text.
    expect(redactKey(`Bearer%20${KEY}%22`, KEY)).toBe('Bearer%20[redacted]%22');
    expect(redactKey('text', '')).toBe('text');
  });

  it('429 means not carried out: wait Retry-After and send it again', async () => {
    const f = await faultServer((_req, res, n) =>
      n === 1 ? json(res, 429, { message: 'Too Many Attempts.' }, { 'Retry-After': '7' }) : json(res, 200, { data: { id: 5 } }),
    );
    const { backend, waits } = remote(f.baseUrl);
    const progress: string[] = [];
    const r = await backend.call(
      'addFundsToContactAccount',
      { account_id: 1, amount: 5, description: 'x' },
      { onProgress: (m) => progress.push(m) },
    );
    expect(r.status).toBe(200);
    expect(f.hits).toHaveLength(2);
    expect(waits).toContain(7000);
    expect(progress.join(' ')).toMatch(/Retry-After/);
    await backend.close();
    await f.close();
  });

  it('a write whose answer is lost (timeout after sending) is never sent twice: outcome unknown', async () => {
    const f = await faultServer(() => undefined); // never answers
    const { backend } = remote(f.baseUrl);
    const r = await backend.call('withdrawFundsFromContactAccount', { account_id: 1, amount: 5, description: 'x' });
    expect(r.status).toBe(504);
    expect((r.body as any).code).toBe('outcome_unknown');
    expect((r.body as any).message).toMatch(/getContactAccounts/);
    expect(f.hits).toHaveLength(1);
    await backend.close();
    await f.close();
  });

  it('a write cancelled once sent is outcome unknown, never "cancelled" (a retry must not move the money twice); a read is cancelled', async () => {
    const f = await faultServer(() => undefined); // never answers
    const { backend } = remote(f.baseUrl);
    const abort = new AbortController();
    const pending = backend.call('addFundsToContactAccount', { account_id: 1, amount: 5, description: 'x' }, { signal: abort.signal });
    await new Promise((r) => setTimeout(r, 100));
    expect(f.hits).toHaveLength(1);
    abort.abort();
    const write = await pending;
    expect((write.body as any).code).toBe('outcome_unknown');
    const read = new AbortController();
    const reading = backend.call('getContactAccounts', { contact_id: 1 }, { signal: read.signal });
    await new Promise((r) => setTimeout(r, 100));
    read.abort();
    expect(((await reading).body as any).code).toBe('cancelled');
    // Cancelled before it was sent: nothing left, and it says cancelled.
    const before = new AbortController();
    before.abort();
    expect(
      (
        (await backend.call('addFundsToContactAccount', { account_id: 1, amount: 5, description: 'x' }, { signal: before.signal }))
          .body as any
      ).code,
    ).toBe('cancelled');
    expect(f.hits).toHaveLength(2);
    await backend.close();
    await f.close();
  });

  it('a connection reset mid-body on a write: outcome unknown, one request; on a read: retried', async () => {
    const f = await faultServer((req, res, n) => {
      if (req.url!.includes('getContactAccounts') && n > 2) return json(res, 200, { data: [] });
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '100' });
      res.write('{"data": [');
      setTimeout(() => res.socket?.destroy(), 10);
    });
    const { backend } = remote(f.baseUrl);
    const write = await backend.call('addFundsToContactAccount', { account_id: 1, amount: 5, description: 'x' });
    expect((write.body as any).code).toBe('outcome_unknown');
    expect(f.hits).toHaveLength(1);
    const read = await backend.call('getContactAccounts', { contact_id: 1 });
    expect(read.status).toBe(200);
    expect(f.hits).toHaveLength(3);
    expect(f.hits[1]!.method).toBe('GET');
    await backend.close();
    await f.close();
  });

  it('a 500 on a write passes through, is not resent, and says which read will tell', async () => {
    const f = await faultServer((_req, res) => json(res, 500, { message: 'Server Error' }));
    const { backend } = remote(f.baseUrl);
    const r = await backend.call('addFundsToContactAccount', { account_id: 1, amount: 5, description: 'x' });
    expect(r.status).toBe(500);
    expect(r.body).toEqual({ message: 'Server Error' });
    expect(r.warnings?.[0]).toMatch(/getContactAccounts/);
    expect(f.hits).toHaveLength(1);
    await backend.close();
    await f.close();
  });

  it('a 500 on a read is retried with backoff', async () => {
    const f = await faultServer((_req, res, n) =>
      n < 3 ? json(res, 500, { message: 'Server Error' }) : json(res, 200, { data: { id: 1 } }),
    );
    const { backend, waits } = remote(f.baseUrl);
    const r = await backend.call('getMe', {});
    expect(r.status).toBe(200);
    expect(f.hits).toHaveLength(3);
    expect(waits).toEqual([250, 500]);
    await backend.close();
    await f.close();
  });

  it('an HTML error page keeps its status and gets a JSON body', async () => {
    const f = await faultServer((_req, res) => {
      res.writeHead(502, { 'Content-Type': 'text/html' });
      res.end('<html><body>Bad gateway</body></html>');
    });
    const { backend } = remote(f.baseUrl, { readAttempts: 1 });
    const r = await backend.call('getMe', {});
    expect(r.status).toBe(502);
    expect((r.body as any).message).toMatch(/not JSON/);
    await backend.close();
    await f.close();
  });

  it('a 200 body that is not JSON is a bad upstream response, not a crash', async () => {
    const f = await faultServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"data": ');
    });
    const { backend } = remote(f.baseUrl);
    const r = await backend.call('getMe', {});
    expect(r.status).toBe(502);
    expect((r.body as any).code).toBe('bad_upstream_response');
    await backend.close();
    await f.close();
  });

  it('sends the key as Bearer, Accept: application/json, GET for reads and a JSON POST for writes', async () => {
    const seen: IncomingMessage[] = [];
    const f = await faultServer((req, res) => {
      seen.push(req);
      json(res, 200, {});
    });
    const { backend } = remote(f.baseUrl);
    await backend.call('getContacts', { bot_id: 10, limit: 5 });
    await backend.call('createListSchema', { name: 'L', bot_id: 10, fields: [{ name: 'A', slug: 'a', type: 'string' }] });
    expect(seen[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(seen[0]!.headers.accept).toBe('application/json');
    expect(f.hits[0]!.method).toBe('GET');
    expect(f.hits[0]!.url).toBe('/api/v1/getContacts?bot_id=10&limit=5');
    expect(f.hits[1]!.method).toBe('POST');
    expect(JSON.parse(f.hits[1]!.body).fields[0].slug).toBe('a');
    await backend.close();
    await f.close();
  });
});

describe('pacing below the per-key limit', () => {
  it('never more than the limit in any window, in order', async () => {
    let t = 0;
    const sleeps: number[] = [];
    const pacer = new Pacer(
      3,
      60_000,
      async (ms) => {
        sleeps.push(ms);
        t += ms;
      },
      () => t,
    );
    for (let i = 0; i < 7; i++) {
      await pacer.take();
      t += 1000;
    }
    // 3 at t=0,1,2 s; the 4th waits until 60 s; the 7th until 120 s.
    expect(sleeps).toEqual([57_000, 57_000]);
  });

  it('bracket query strings for nested params', () => {
    expect(toQuery({ fields: [{ name: 'A b', is_required: false }], filters: { slug: 'x' } })).toBe(
      'fields%5B0%5D%5Bname%5D=A%20b&fields%5B0%5D%5Bis_required%5D=0&filters%5Bslug%5D=x',
    );
  });
});
