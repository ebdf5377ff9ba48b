/**
 * The spec's Conventions, Authentication, Limits, Versioning and Errors parts, over real HTTP.
 */
import { describe, expect, it } from 'vitest';
import { callApi } from '../../helpers/http.js';
import { accountFixture, baseFixture, startWorld, useWorld } from '../../helpers/world.js';

const w = useWorld(accountFixture);

describe('Authentication', () => {
  it('the key is passed as Authorization: Bearer <API_KEY>', async () => {
    const r = await w.call('getMe');
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ id: 1, name: 'Alice', email: 'alice@example.com', phone: null });
  });

  it('where a header cannot be set, it is passed as api_token in the URL or the body', async () => {
    const viaQuery = await w.call('getMe', { api_token: 'alice-key' }, { key: null, verb: 'GET' });
    expect(viaQuery.status).toBe(200);
    const viaJson = await w.call('getMe', { api_token: 'alice-key' }, { key: null });
    expect(viaJson.status).toBe(200);
    const viaForm = await w.call('getMe', { api_token: 'alice-key' }, { key: null, form: true });
    expect(viaForm.status).toBe(200);
    expect(viaForm.body.data.id).toBe(1);
  });

  it('"the header is preferred": with both a Bearer header and api_token, the header decides (query, JSON and form)', async () => {
    const bob = { key: 'bob-key' };
    expect((await w.call('getMe', { api_token: 'alice-key' }, { ...bob, verb: 'GET' })).body.data.id).toBe(2);
    expect((await w.call('getMe', { api_token: 'alice-key' }, bob)).body.data.id).toBe(2);
    expect((await w.call('getMe', { api_token: 'alice-key' }, { ...bob, form: true })).body.data.id).toBe(2);
    // A wrong header is not rescued by a right api_token, and the other way round.
    expect((await w.call('getMe', { api_token: 'alice-key' }, { key: 'wrong-key', verb: 'GET' })).status).toBe(401);
    expect((await w.call('getMe', { api_token: 'wrong-key' }, { key: 'alice-key', verb: 'GET' })).body.data.id).toBe(1);
    // What the key reaches follows the header too: Alice's contact is not Bob's.
    expect((await w.call('getContactAccounts', { contact_id: 100, api_token: 'alice-key' }, bob)).status).toBe(403);
  });

  it('a missing or wrong key gives 401 {error: "unauthorized"}', async () => {
    for (const key of [null, 'wrong-key', '']) {
      const r = await w.call('getMe', {}, { key });
      expect(r.status).toBe(401);
      expect(r.text).toBe('{"error":"unauthorized"}');
    }
    const arrayToken = await w.call('getMe', { api_token: ['alice-key'] }, { key: null, verb: 'GET' });
    expect(arrayToken.status).toBe(401);
  });

  it('the API is available to the owner on the Pro plan; without it: 402 code pro_required', async () => {
    const r = await w.call('getMe', {}, { key: 'fran-key' });
    expect(r.status).toBe(402);
    expect(Object.keys(r.body)).toEqual(['error', 'code']);
    expect(r.body.code).toBe('pro_required');
  });

  it('a blocked account gives 403 {error}', async () => {
    const r = await w.call('getMe', {}, { key: 'blocked-key' });
    expect(r.status).toBe(403);
    expect(Object.keys(r.body)).toEqual(['error']);
  });

  it('regenerating the key invalidates the old one immediately', async () => {
    const world = await startWorld();
    try {
      expect((await world.call('getMe', {}, { key: 'bob-key' })).status).toBe(200);
      const fresh = world.store.owners.regenerateKey(2)!;
      expect((await world.call('getMe', {}, { key: 'bob-key' })).status).toBe(401);
      expect((await world.call('getMe', {}, { key: fresh })).body.data.id).toBe(2);
    } finally {
      await world.close();
    }
  });
});

describe('Conventions', () => {
  it('POST parameters as multipart form fields, brackets and api_token included', async () => {
    const res = await w.call('getContactAccounts', { api_token: 'alice-key', contact_id: '100' }, { key: null, multipart: true });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    const { body } = await w.call('createListSchema', { 'fields[0][name]': 'A' }, { multipart: true });
    expect(Object.keys(body.errors)).toContain('fields.0.slug');
  });

  it('timestamps in responses are ISO 8601 strings with a +00:00 offset', async () => {
    const r = await w.call('getMe');
    expect(r.body.data.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
  });

  it('responses are JSON in UTF-8', async () => {
    const r = await w.call('getMe');
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('OPTIONS answers 200 with the methods the route takes, as Laravel does', async () => {
    const r = await w.call('addFundsToContactAccount', {}, { verb: 'OPTIONS' });
    expect(r.status).toBe(200);
    expect(r.headers.get('allow')).toBe('POST');
    expect((await w.call('getMe', {}, { verb: 'OPTIONS' })).headers.get('allow')).toBe('GET, HEAD, POST');
  });

  it('a method that accepts GET and POST answers both, and HEAD', async () => {
    expect((await w.call('getMe', {}, { verb: 'GET' })).status).toBe(200);
    expect((await w.call('getMe', {}, { verb: 'POST' })).status).toBe(200);
    const head = await w.call('getMe', {}, { verb: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
  });

  it('a POST-only method refuses GET with 405 and Allow: POST', async () => {
    const r = await w.call('addFundsToContactAccount', { account_id: 500, amount: 1, description: 'x' }, { verb: 'GET' });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('POST');
    expect(r.body).toEqual({
      message: 'The GET method is not supported for route api/v1/addFundsToContactAccount. Supported methods: POST.',
    });
  });

  it('an unknown method or route is 404 {message}', async () => {
    const r = await w.call('noSuchMethod');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ message: 'The route api/v1/noSuchMethod could not be found.' });
    const site = w.baseUrl.replace('/api/v1', '');
    const res = await callApi(site, 'elsewhere', {}, { verb: 'GET', key: null });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'The route elsewhere could not be found.' });
    const root = await callApi(site, '', {}, { verb: 'GET', key: null });
    expect(root.body).toEqual({ message: 'The route / could not be found.' });
  });

  it('without Accept: application/json, validation errors come back as a redirect', async () => {
    const noAccept = await w.call('addFundsToContactAccount', {}, { headers: { Accept: 'text/html' } });
    expect(noAccept.status).toBe(302);
    expect(noAccept.headers.get('location')).toBe(`${w.baseUrl.replace('/api/v1', '')}/`);
    const withReferer = await w.call('addFundsToContactAccount', {}, { headers: { Accept: '*/*', Referer: 'http://app.test/form' } });
    expect(withReferer.status).toBe(302);
    expect(withReferer.headers.get('location')).toBe('http://app.test/form');
  });

  it('a validation error a handler finds (a repeated slug) is a redirect too without Accept JSON', async () => {
    const body = {
      name: 'L',
      bot_id: 10,
      fields: [
        { name: 'A', slug: 'a', type: 'string' },
        { name: 'B', slug: 'a', type: 'string' },
      ],
    };
    const json = await w.call('createListSchema', body);
    expect(json.status).toBe(422);
    const html = await w.call('createListSchema', body, { headers: { Accept: 'text/html' } });
    expect(html.status).toBe(302);
    // A coded 422 (insufficient_funds) is the API's own answer, not a validation redirect.
    const coded = await w.call(
      'withdrawFundsFromContactAccount',
      { account_id: 500, amount: 999999, description: 'x' },
      { headers: { Accept: 'text/html' } },
    );
    expect(coded.status).toBe(422);
    expect(coded.body.code).toBe('insufficient_funds');
  });

  it('422 {message, errors} lists every failing field, with Laravel messages', async () => {
    const r = await w.call('addFundsToContactAccount', {});
    expect(r.status).toBe(422);
    expect(r.body).toEqual({
      message: 'The account id field is required. (and 2 more errors)',
      errors: {
        account_id: ['The account id field is required.'],
        amount: ['The amount field is required.'],
        description: ['The description field is required.'],
      },
    });
  });

  it('strings are trimmed and "" is null before validation (also inside JSON bodies)', async () => {
    const r = await w.call('addFundsToContactAccount', { account_id: ' 500 ', amount: '', description: '   ' });
    expect(r.status).toBe(422);
    expect(Object.keys(r.body.errors)).toEqual(['amount', 'description']);
  });

  it('a body that is not valid JSON counts as empty input: 422 required errors, not 400', async () => {
    const r = await w.call('addFundsToContactAccount', {}, { rawBody: '{"account_id": 500,' });
    expect(r.status).toBe(422);
    expect(r.body.errors.account_id).toEqual(['The account id field is required.']);
    expect(r.body.message).toMatch(/not valid JSON/);
  });

  it('a JSON body that is not valid UTF-8 carries no input, as PHP cannot decode it: 422, no money moves', async () => {
    const balance = async () => (await w.call('getContactAccounts', { contact_id: 100 })).body.data[0].amount as number;
    const before = await balance();
    const body = Buffer.concat([
      Buffer.from('{"account_id":500,"amount":5,"description":"x","zz":"'),
      Buffer.from([0xff, 0xfe, 0xc0]),
      Buffer.from('"}'),
    ]);
    const r = await w.call('addFundsToContactAccount', {}, { rawBody: body });
    expect(r.status).toBe(422);
    expect(r.body.errors.account_id).toEqual(['The account id field is required.']);
    expect(r.body.message).toMatch(/not valid UTF-8/);
    expect(await balance()).toBe(before);
    // The same call in valid UTF-8 goes through: the bytes, not the call, are refused.
    const ok = await w.call('addFundsToContactAccount', {}, { rawBody: '{"account_id":500,"amount":5,"description":"x","zz":"\u00ff"}' });
    expect(ok.status).toBe(200);
    expect(await balance()).toBe(before + 5);
  });

  it('input nested deeper than PHP decodes (512) counts as empty input: 422, not a 500', async () => {
    const deep = `{"account_id":500,"amount":5,"description":"x","pad":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
    const r = await w.call('addFundsToContactAccount', {}, { rawBody: deep });
    expect(r.status).toBe(422);
    expect(r.body.errors.account_id).toEqual(['The account id field is required.']);
    expect(r.body.message).toMatch(/nested deeper than 512/);
    const ok = await w.call('getContactAccounts', { contact_id: 100, pad: [[[['fine']]]] });
    expect(ok.status).toBe(200);
  });

  it('an oversized body is 413, not a 500', async () => {
    const r = await w.call('getMe', {}, { rawBody: JSON.stringify({ pad: 'x'.repeat(2 * 1024 * 1024) }) });
    expect(r.status).toBe(413);
  });

  it('prototype keys in JSON and brackets change nothing and are no 500', async () => {
    const json = await w.call('addFundsToContactAccount', {}, { rawBody: '{"__proto__": {"account_id": 500}, "constructor": {"x": 1}}' });
    expect(json.status).toBe(422);
    const res = await w.call(
      'getMe',
      {},
      { verb: 'GET', rawQuery: '__proto__[x]=1&constructor[prototype][y]=2&a[b][c][d][e][f][g][h][i][j][k][l]=1' },
    );
    expect(res.status).toBe(200);
  });
});

describe('Limits: 120 requests per minute per account, all methods combined', () => {
  it('over the rate: 429 Too Many Attempts. with Retry-After; refused requests are not counted', async () => {
    let now = new Date('2026-05-01T10:00:00Z');
    const world = await startWorld(baseFixture(), { rateLimit: 3, now: () => now });
    try {
      const remaining: (string | null)[] = [];
      for (const m of ['getMe', 'getMe', 'noSuchMethod', 'getMe']) {
        const r = await world.call(m);
        if (m !== 'noSuchMethod') remaining.push(r.headers.get('x-ratelimit-remaining'));
      }
      expect(remaining.slice(0, 2)).toEqual(['2', '1']);
      const over = await world.call('getMe');
      expect(over.status).toBe(429);
      expect(over.body).toEqual({ message: 'Too Many Attempts.' });
      expect(over.headers.get('x-ratelimit-limit')).toBe('3');
      expect(over.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(over.headers.get('retry-after')).toBe('60');
      expect(over.headers.get('x-ratelimit-reset')).toBe(String(Date.parse('2026-05-01T10:01:00Z') / 1000));
      // Another account has its own budget.
      expect((await world.call('getMe', {}, { key: 'bob-key' })).status).toBe(200);
      now = new Date('2026-05-01T10:00:45Z');
      expect((await world.call('getMe')).headers.get('retry-after')).toBe('15');
      // The window is fixed: a minute after its first request it starts again.
      now = new Date('2026-05-01T10:01:00Z');
      const again = await world.call('getMe');
      expect(again.status).toBe(200);
      expect(again.headers.get('x-ratelimit-remaining')).toBe('2');
    } finally {
      await world.close();
    }
  });
});

describe('Limits: "120 requests per minute per account, all methods combined"', () => {
  it('every method draws on the one budget of its account; another account has its own', async () => {
    const world = await startWorld(accountFixture(), { rateLimit: 3 });
    try {
      const calls: Array<[string, Record<string, unknown>]> = [
        ['getMe', {}],
        ['getContactAccounts', { contact_id: 100 }],
        ['getBalance', {}],
      ];
      const remaining: Array<string | null> = [];
      for (const [m, p] of calls) {
        const r = await world.call(m, p);
        expect(r.status, m).toBe(200);
        remaining.push(r.headers.get('x-ratelimit-remaining'));
      }
      expect(remaining).toEqual(['2', '1', '0']);
      // A fourth method, never called before in this window, is over the limit all the same.
      const over = await world.call('getListSchemas', {}, { verb: 'GET' });
      expect(over.status).toBe(429);
      expect(over.body).toEqual({ message: 'Too Many Attempts.' });
      expect((await world.call('getContactAccounts', { contact_id: 100 })).status).toBe(429);
      // An alias counts against the same budget.
      expect((await world.call('createContactAccount', { contact_id: 100, currency: 'EUR' })).status).toBe(429);
      expect((await world.call('getListSchemas', {}, { key: 'bob-key' })).status).toBe(200);
    } finally {
      await world.close();
    }
  });
});

describe('Versioning', () => {
  it('a deprecated method works until its sunset with Deprecation: true and Sunset; then 410 method_removed', async () => {
    let now = new Date('2026-12-31T00:00:00Z');
    const world = await startWorld(baseFixture(), { now: () => now });
    try {
      world.store.settings.setDeprecation('getMe', '2027-01-01T00:00:00+00:00');
      const before = await world.call('getMe');
      expect(before.status).toBe(200);
      expect(before.headers.get('deprecation')).toBe('true');
      expect(before.headers.get('sunset')).toBe('Fri, 01 Jan 2027 00:00:00 GMT');
      now = new Date('2027-01-01T00:00:01Z');
      const after = await world.call('getMe');
      expect(after.status).toBe(410);
      expect(after.body.code).toBe('method_removed');
      expect(Object.keys(after.body)).toEqual(['error', 'code']);
    } finally {
      await world.close();
    }
  });

  it('every response of a deprecated method carries the headers, refusals included (401, 402, 405)', async () => {
    const world = await startWorld(baseFixture());
    try {
      world.store.settings.setDeprecation('createContactAccount', '2999-01-01T00:00:00+00:00');
      for (const [key, verb, status] of [
        [null, 'POST', 401],
        ['fran-key', 'POST', 402],
        ['alice-key', 'GET', 405],
      ] as const) {
        const r = await world.call('createContactAccount', { contact_id: 1, currency: 'USD' }, { key, verb });
        expect(r.status).toBe(status);
        expect(r.headers.get('deprecation')).toBe('true');
        expect(r.headers.get('sunset')).toBe('Tue, 01 Jan 2999 00:00:00 GMT');
      }
      // The alias is deprecated, not the method it names.
      const plain = await world.call('addContactAccount', { contact_id: 1, currency: 'USD' });
      expect(plain.headers.get('deprecation')).toBeNull();
    } finally {
      await world.close();
    }
  });

  it('the version is part of the address: only /api/v1/ routes exist', async () => {
    const res = await callApi(w.baseUrl.replace('/v1', '/v2'), 'getMe', {}, { verb: 'GET' });
    expect(res.status).toBe(404);
  });
});

describe('bracket parameters, as PHP reads them', () => {
  it('fields[0][name] is a list; data[10]=x keeps the key "10"', async () => {
    const { parseParams } = await import('../../../src/http/server.js');
    expect(parseParams('fields[0][name]=a&fields[1][name]=b')).toEqual({ fields: [{ name: 'a' }, { name: 'b' }] });
    expect(parseParams('data[10]=x&data[2]=y')).toEqual({ data: { '10': 'x', '2': 'y' } });
    expect(parseParams('tags[]=a&tags[]=b')).toEqual({ tags: ['a', 'b'] });
    expect(parseParams('__proto__[x]=1&a=2')).toEqual({ a: '2' });
  });
});
