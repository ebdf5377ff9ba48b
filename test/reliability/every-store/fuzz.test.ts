/**
 * Fuzzing every method of the catalog over real HTTP with fast-check: wrong types, huge and
 * empty strings, any Unicode, nested and broken brackets, prototype keys, odd numbers,
 * SQL-looking strings, broken JSON, wrong content types. Never a 5xx, every refusal in the
 * spec's shape, and a refused request changes nothing in the database.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { METHODS } from '../../../src/api/catalog.js';
import type { MethodDef } from '../../../src/api/define.js';
import { dumpStore } from '../../helpers/store.js';
import { ANN, baseFixture, useWorld } from '../../helpers/world.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 25);

const nastyString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    "'; DROP TABLE contacts; --",
    '" OR 1=1 --',
    '%00',
    '\u0000',
    '__proto__',
    'constructor',
    '[]',
    '{}',
    'null',
    'true',
    'NaN',
    '1e3',
    '-0',
    '01',
    '1.5',
    '100000000000001',
    '99999999999999',
    '😀'.repeat(300),
    'x'.repeat(70_000),
    'USD',
    'usd',
    'telegram',
    'http://example.com/a.png',
    '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10',
  ),
);

const nastyNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 1, 10, 20, 100, 500, 1e14, 1e14 + 1, 1e14 - 1, 2 ** 53, -(2 ** 53), Number.MAX_SAFE_INTEGER, 1.5),
);

const leaf = fc.oneof(nastyString, nastyNumber, fc.boolean(), fc.constant(null));
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(
      fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('__proto__', 'constructor', 'name', 'slug', 'type', '0')),
      tie('v'),
      { maxKeys: 4 },
    ),
  ),
})).v;

function inputFor(def: MethodDef): fc.Arbitrary<Record<string, unknown>> {
  const names = [...Object.keys(def.params), ...Object.keys(def.paramAliases ?? {}), 'api_token', '__proto__', 'constructor', 'extra'];
  return fc.dictionary(fc.constantFrom(...names), value, { maxKeys: names.length });
}

/** Bodies a client might send by mistake. */
const rawBodies = fc.oneof(
  fc.string().map((s) => ({ type: 'application/json', body: s })),
  fc.constantFrom(
    { type: 'application/json', body: '{"a":' },
    { type: 'application/json', body: '[1,2,3]' },
    { type: 'application/json', body: '"str"' },
    { type: 'application/json', body: 'null' },
    { type: 'application/json', body: '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}' },
    { type: 'text/plain', body: 'hello' },
    { type: 'application/xml', body: '<a/>' },
    { type: 'multipart/form-data; boundary=x', body: '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--' },
    {
      type: 'application/x-www-form-urlencoded',
      body: 'fields[0][name]=a&fields[0][slug]]=b&fields[[1]=c&a[b][c][d][e][f][g][h][i][j][k][l][m]=1&__proto__[x]=1',
    },
    { type: 'application/x-www-form-urlencoded', body: '%%%&=&&==' },
  ),
);

const w = useWorld(() => ({
  ...baseFixture(),
  contacts: [
    { ...ANN, tags: ['vip'], variables: [{ name: 'utm_source', value: 'ads', type: 0 }] },
    { id: 200, bot_id: 20, messenger: 'vk', name: 'Bob contact', vk_user_id: 77 },
  ],
  accounts: [
    { id: 500, contact_id: 100, currency: 'USD', amount: 1000 },
    { id: 600, contact_id: 200, currency: 'EUR', amount: 50 },
  ],
}));

function checkShape(status: number, body: any, text: string, where: string) {
  expect(status, `${where}: ${text.slice(0, 300)}`).toBeLessThan(500);
  if (status === 204 || status === 302) return;
  expect(body, `${where}: body must be JSON: ${text.slice(0, 200)}`).toBeDefined();
  if (status === 401) expect(body).toEqual({ error: 'unauthorized' });
  if (status === 422) {
    expect(typeof body.message, where).toBe('string');
    expect(typeof body.errors, where).toBe('object');
    for (const msgs of Object.values(body.errors)) {
      expect(Array.isArray(msgs), where).toBe(true);
      for (const m of msgs as unknown[]) expect(typeof m, where).toBe('string');
    }
  }
  if (status === 403) expect(typeof body.error, where).toBe('string');
  if (status === 404) expect(typeof (body.error ?? body.message), where).toBe('string');
}

describe.each((METHODS as readonly MethodDef[]).map((m) => [m.name, m] as const))('fuzz %s', (name, def) => {
  it('random params as JSON, form or query: never a 5xx, spec-shaped refusals, nothing written on refusal', async () => {
    await fc.assert(
      fc.asyncProperty(
        inputFor(def),
        fc.constantFrom('json', 'form', 'query'),
        fc.constantFrom('alice-key', 'bob-key'),
        async (input, how, key) => {
          const verb = how === 'query' && def.verbs.includes('GET') ? 'GET' : 'POST';
          const before = dumpStore(w.store);
          const r = await w.call(name, input, { key, verb, form: how === 'form' });
          checkShape(r.status, r.body, r.text, `${name} ${how} ${JSON.stringify(input).slice(0, 200)}`);
          if (r.status >= 400) expect(dumpStore(w.store), `${name}: a refused request changed the database`).toBe(before);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('broken bodies and wrong content types: never a 5xx, nothing written', async () => {
    await fc.assert(
      fc.asyncProperty(rawBodies, async ({ type, body }) => {
        const before = dumpStore(w.store);
        const r = await w.call(name, {}, { rawBody: body, headers: { 'Content-Type': type } });
        checkShape(r.status, r.body, r.text, `${name} raw ${type}`);
        if (r.status >= 400) expect(dumpStore(w.store)).toBe(before);
      }),
      { numRuns: Math.max(5, Math.floor(RUNS / 2)) },
    );
  });
});
