#!/usr/bin/env node
/**
 * Lists at scale, over real HTTP: one list of 30 fields holding 100 000 records.
 * Times getListItems pages at the start and at the end, unfiltered and filtered (equality on
 * a field, bot_id), sorted by a field, addListItem, and deleteListSchemaField on the full list.
 * Page figures are medians of several runs; the last page over the first shows whether a page
 * costs more the further it is.
 *
 *   npm run build && node tools/bench/lists.mjs [--records 100000] [--runs 7]
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { listen } from '../../dist/http/server.js';
import { Service } from '../../dist/service/pipeline.js';
import { deriveSecrets } from '../../dist/service/secrets.js';
import { Store } from '../../dist/store/index.js';
import { newObjectId } from '../../dist/store/lists.js';
import { loadFixture } from '../../dist/store/seed.js';
import { isoTime } from '../../dist/store/time.js';
import { tempDir } from './lib.mjs';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '7' },
  },
});
const RECORDS = Number(values.records);
const RUNS = Number(values.runs);
const PROJECT = '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10';
const KEY = 'bench-key';

const dir = tempDir('workspace-bench-lists-');
const store = Store.open(join(dir, 'lists.db'));
loadFixture(store, {
  owners: [{ id: 1, name: 'Bench', plan: 'pro', api_key: KEY }],
  projects: [{ uuid: PROJECT, owner_id: 1, name: 'Bench' }],
  bots: [
    { id: 10, project_uuid: PROJECT, name: 'Bot A' },
    { id: 11, project_uuid: PROJECT, name: 'Bot B' },
  ],
  contacts: Array.from({ length: 50 }, (_, i) => ({
    id: 100 + i,
    bot_id: 10,
    messenger: 'telegram',
    name: `C${i}`,
    telegram_id: String(5000 + i),
  })),
});
const service = new Service(store, { rateLimit: 0, secrets: deriveSecrets(Buffer.alloc(32, 1)) });
const { server, baseUrl } = await listen(service, '127.0.0.1', 0);

async function call(method, params) {
  const res = await fetch(`${baseUrl}/${method}`, {
    method: 'POST',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json', Authorization: `Bearer ${KEY}` },
    body: JSON.stringify(params),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}

function ms(t0) {
  return Number(process.hrtime.bigint() - t0) / 1e6;
}
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

// 30 fields of every type.
const fields = [];
for (let i = 0; i < 13; i++) fields.push({ name: `Text ${i}`, slug: `s${i}`, type: 'string', is_required: false });
for (let i = 0; i < 5; i++) fields.push({ name: `Number ${i}`, slug: `n${i}`, type: 'number', is_required: false });
for (let i = 0; i < 3; i++) fields.push({ name: `Flag ${i}`, slug: `b${i}`, type: 'bool', is_required: false });
for (let i = 0; i < 3; i++) fields.push({ name: `Price ${i}`, slug: `m${i}`, type: 'money', currency: 'EUR', is_required: false });
fields.push(
  { name: 'Day', slug: 'd0', type: 'date', is_required: false },
  { name: 'Moment', slug: 'dt0', type: 'datetime', is_required: false },
  { name: 'File', slug: 'f0', type: 'file', is_required: false },
  { name: 'Image', slug: 'i0', type: 'image', is_required: false },
  { name: 'Contact', slug: 'c0', type: 'contact', is_required: false },
  { name: 'Bot', slug: 'bot0', type: 'bot', is_required: false },
);
const schema = (await call('createListSchema', { name: 'Bench list', project_uuid: PROJECT, fields })).data;
const seq = store.lists.byId(schema.id).seq;

function recordData(i) {
  const d = {};
  for (let k = 0; k < 13; k++) d[`s${k}`] = k === 1 ? `cat-${i % 100}` : `text ${k} of record ${i}`;
  for (let k = 0; k < 5; k++) d[`n${k}`] = (i * (k + 1)) % 9973;
  for (let k = 0; k < 3; k++) d[`b${k}`] = (i + k) % 2 === 0;
  for (let k = 0; k < 3; k++) d[`m${k}`] = i * 10 + k;
  d.d0 = `2026-0${1 + (i % 9)}-1${i % 10}`;
  d.dt0 = isoTime(new Date(Date.UTC(2026, 0, 1) + i * 1000));
  d.f0 = `https://files.example.com/${i}.pdf`;
  d.i0 = `https://files.example.com/${i}.png`;
  d.c0 = 100 + (i % 50);
  d.bot0 = i % 7 === 0 ? 11 : 10;
  return d;
}

let t0 = process.hrtime.bigint();
const now = isoTime();
store.tx(() => {
  for (let i = 0; i < RECORDS; i++) store.lists.insertRecord({ id: newObjectId(), schema_seq: seq, data: recordData(i), now });
});
const seedMs = ms(t0);

// addListItem over HTTP, one at a time: the full write path with type checks.
const adds = [];
for (let i = 0; i < 200; i++) {
  t0 = process.hrtime.bigint();
  await call('addListItem', { schema_id: schema.id, data: recordData(RECORDS + i) });
  adds.push(ms(t0));
}
const total = RECORDS + adds.length;

async function timePage(params) {
  const times = [];
  let body;
  for (let r = 0; r < RUNS + 1; r++) {
    t0 = process.hrtime.bigint();
    body = await call('getListItems', { schema_id: schema.id, ...params });
    if (r > 0) times.push(ms(t0)); // the first run warms caches
  }
  return { ms: median(times), rows: body.data.length, total: body.meta.total, last: body.meta.last_page };
}

const cases = [
  ['first page, limit 20', { limit: 20 }],
  ['last page, limit 20', { limit: 20, page: Math.ceil(total / 20) }],
  ['first page, limit 1000', { limit: 1000 }],
  ['last page, limit 1000', { limit: 1000, page: Math.ceil(total / 1000) }],
  ['filtered s1=cat-7, first page', { limit: 20, filters: { s1: 'cat-7' } }],
  ['filtered s1=cat-7, last page', { limit: 20, filters: { s1: 'cat-7' }, page: Math.ceil(total / 100 / 20) }],
  ['filtered bot_id=11, first page', { limit: 20, bot_id: 11 }],
  ['filtered bot_id=11, last page', { limit: 20, bot_id: 11, page: Math.ceil(total / 7 / 20) }],
  ['order_by n0,desc, first page', { limit: 20, order_by: 'n0,desc' }],
  ['order_by n0,desc, last page', { limit: 20, order_by: 'n0,desc', page: Math.ceil(total / 20) }],
];
const results = [];
for (const [label, params] of cases) results.push([label, await timePage(params)]);

t0 = process.hrtime.bigint();
await call('deleteListSchemaField', { schema_id: schema.id, slug: 's5' });
const deleteFieldMs = ms(t0);
const check = await call('getListItems', { schema_id: schema.id, limit: 1 });
if ('s5' in check.data[0]) throw new Error('s5 still present after deleteListSchemaField');

t0 = process.hrtime.bigint();
await call('deleteListSchema', { schema_id: schema.id });
const deleteListMs = ms(t0);

const out = (s) => process.stdout.write(s + '\n');
out(`list of ${fields.length} fields, ${total} records (runs per figure: ${RUNS}, median)`);
out(`seed ${RECORDS} records in one transaction: ${seedMs.toFixed(0)} ms`);
out(`addListItem over HTTP: median ${median(adds).toFixed(2)} ms`);
for (const [label, r] of results) {
  out(`getListItems ${label.padEnd(34)} ${r.ms.toFixed(2).padStart(8)} ms  (${r.rows} rows, total ${r.total})`);
}
const ratio = (a, b) => (results.find(([l]) => l === a)[1].ms / results.find(([l]) => l === b)[1].ms).toFixed(2);
out(`ratio last/first page, limit 20: ${ratio('last page, limit 20', 'first page, limit 20')}`);
out(`ratio last/first page, filtered: ${ratio('filtered s1=cat-7, last page', 'filtered s1=cat-7, first page')}`);
out(`deleteListSchemaField on ${total} records: ${deleteFieldMs.toFixed(0)} ms`);
out(`deleteListSchema with ${total} records: ${deleteListMs.toFixed(0)} ms`);
out(
  `BENCH_JSON ${JSON.stringify({
    bench: 'lists',
    fields: fields.length,
    records: total,
    runs: RUNS,
    seed_ms: seedMs,
    add_ms: median(adds),
    pages: Object.fromEntries(results.map(([label, r]) => [label, r.ms])),
    delete_field_ms: deleteFieldMs,
    delete_list_ms: deleteListMs,
  })}`,
);

await new Promise((r) => server.close(r));
store.close();
