// Bulk actions (issue 32), by hand: "give everyone tagged vip 5.00 USD" as previewBulk + runBulk
// beside the same number of single addFundsToContactAccount tool calls, over stdio against the
// built CLI on a local database (a 2025-11-25 client that accepts the one confirmation), and
// what the model reads of each; then, with --remote N, the same plan on N contacts against the
// built `serve` (its real limit of 120 requests a minute per owner) through `mcp --remote`: how
// close the run comes to that rate.
// Usage: npm run build && node tools/bench/bulk.mjs [--contacts 5000] [--remote 60]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { CLI, MCP_BENCH_FIXTURE, seedDb, spawnServer, tempDir } from './lib.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? dflt : Number(process.argv[i + 1]);
};
const contacts = arg('contacts', 5000);
const remoteContacts = arg('remote', 0);
const env = { ...process.env, WORKSPACE_API_KEY: 'bench-key', WORKSPACE_LOG_LEVEL: 'warn' };

/** Owner 1's bot 10 with `n` contacts (ids from 1000), every second one tagged vip, each with a USD account holding 1.00. */
function fixture(n) {
  return {
    ...MCP_BENCH_FIXTURE,
    contacts: Array.from({ length: n }, (_, i) => ({
      id: 1000 + i,
      bot_id: 10,
      messenger: 'telegram',
      name: `Contact ${i}`,
      telegram_id: String(10_000 + i),
      tags: i % 2 === 0 ? ['vip'] : [],
    })),
    accounts: Array.from({ length: n }, (_, i) => ({ id: 10_000 + i, contact_id: 1000 + i, currency: 'USD', amount: 100 })),
  };
}

/** A client of a server started with `args`, that says yes to the one question. */
async function connect(args) {
  const client = new Client({ name: 'bench', version: '1' }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { confirm: true } }));
  await client.connect(new StdioClientTransport({ command: process.execPath, args, env, stderr: 'ignore' }));
  return client;
}

const seconds = (t) => (performance.now() - t) / 1000;

/** previewBulk then runBulk of the vip top-up: its figures. */
async function plan(client) {
  let t = performance.now();
  const preview = await client.callTool({
    name: 'previewBulk',
    arguments: {
      selection: { bot_id: 10, tags: ['vip'] },
      action: { type: 'deposit', currency: 'USD', amount: 500, description: 'VIP bonus' },
    },
  });
  const previewSeconds = seconds(t);
  const data = preview.structuredContent.data;
  t = performance.now();
  // As a model does: runBulk again while its answer says steps remain (each call goes on for at most 45 s).
  let run;
  let runCalls = 0;
  let readChars = JSON.stringify(preview).length;
  do {
    run = await client.callTool({ name: 'runBulk', arguments: { plan_id: data.plan_id } }, undefined, { timeout: 3_600_000 });
    runCalls++;
    readChars += JSON.stringify(run).length;
  } while (run.structuredContent?.data?.remaining > 0 && runCalls < 500);
  const runSeconds = seconds(t);
  if (run.structuredContent?.data?.done !== data.count) throw new Error(`runBulk did not finish: ${JSON.stringify(run)}`);
  return { steps: data.count, previewSeconds, runSeconds, runCalls, readChars };
}

const dir = tempDir();
const local = await connect([CLI, 'mcp', '--db', seedDb(dir, 'bulk.db', fixture(contacts)), '--rate-limit', '0']);
const bulk = await plan(local);
let t = performance.now();
let singleChars = 0;
for (let i = 0; i < bulk.steps; i++) {
  const r = await local.callTool({
    name: 'addFundsToContactAccount',
    arguments: { account_id: 10_000 + 2 * i, amount: 500, description: 'VIP bonus, one by one', idempotency_key: `one-${i}` },
  });
  singleChars += JSON.stringify(r).length;
}
const singleSeconds = seconds(t);
await local.close();
const out = {
  bench: 'bulk',
  contacts,
  steps: bulk.steps,
  previewSeconds: bulk.previewSeconds,
  runSeconds: bulk.runSeconds,
  stepsPerSecond: bulk.steps / bulk.runSeconds,
  singleCallsPerSecond: bulk.steps / singleSeconds,
  bulkReadChars: bulk.readChars,
  singleReadChars: singleChars,
};
console.log(
  `local: ${bulk.steps} contacts; previewBulk ${bulk.previewSeconds.toFixed(2)} s, runBulk ${bulk.runSeconds.toFixed(2)} s ` +
    `(${out.stepsPerSecond.toFixed(0)} steps/s) beside ${out.singleCallsPerSecond.toFixed(0)} single tool calls/s; ` +
    `the model reads ${bulk.readChars} characters in ${1 + bulk.runCalls} calls beside ${singleChars} in ${bulk.steps}`,
);

if (remoteContacts > 0) {
  const served = await spawnServer([CLI, 'serve', '--port', '0', '--db', seedDb(dir, 'remote.db', fixture(remoteContacts))], {
    stderr: 'ignore',
  });
  const remote = await connect([CLI, 'mcp', '--remote', served.baseUrl]);
  const r = await plan(remote);
  await remote.close();
  served.proc.kill();
  // Requests: getContacts (a page), getContactAccounts per contact at preview; per step a read and a move.
  const requests = 1 + r.steps + 2 * r.steps;
  Object.assign(out, {
    remoteSteps: r.steps,
    remotePreviewSeconds: r.previewSeconds,
    remoteRunSeconds: r.runSeconds,
    remoteRunCalls: r.runCalls,
    remoteRequestsPerMinute: requests / ((r.previewSeconds + r.runSeconds) / 60),
  });
  console.log(
    `remote: ${r.steps} contacts; previewBulk ${r.previewSeconds.toFixed(1)} s, runBulk ${r.runSeconds.toFixed(1)} s: ` +
      `${requests} requests at ${out.remoteRequestsPerMinute.toFixed(0)} a minute (the limit: 120), in ${r.runCalls} runBulk call(s)`,
  );
}
console.log(`BENCH_JSON ${JSON.stringify(out)}`);
process.exit(0);
