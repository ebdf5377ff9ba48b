// An export of 10 000 contacts over the remote backend, at the service's real rate limit
// (120 a minute): the MCP exportContacts tool through the undici client against our own
// `serve`. Then, with --paced, 200 small pages through the same client to show the pacing
// keeps a long export under the limit (no 429) while running near it.
// Usage: npm run build && node tools/bench/remote-export.mjs [--count 10000] [--paced]
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createMcpServer, selectTools } from '../../dist/mcp/serve/server.js';
import { McpContext } from '../../dist/mcp/context.js';
import { RemoteBackend } from '../../dist/remote/client.js';
import { McpStateStore } from '../../dist/state/mcp-state.js';
import { CLI, ROOT, spawnServer, tempDir } from './lib.mjs';

const { values } = parseArgs({ options: { count: { type: 'string', default: '10000' }, paced: { type: 'boolean', default: false } } });
const dir = tempDir();
const db = join(dir, 'remote.db');
execFileSync(process.execPath, [join(ROOT, 'tools', 'seed-contacts.mjs'), '--db', db, '--count', values.count], { stdio: 'ignore' });
const server = await spawnServer([CLI, 'serve', '--db', db, '--port', '0']); // default limit: 120 a minute

const statuses = [];
const remote = new RemoteBackend({ baseUrl: server.baseUrl, apiKey: 'bench-key' });
const counting = {
  async call(m, p, o) {
    const r = await remote.call(m, p, o);
    statuses.push(r.status);
    return r;
  },
  close: () => remote.close(),
};
const state = McpStateStore.open(join(dir, 'mcp-state.sqlite'));
const ctx = new McpContext({ backend: counting, keys: state.keys('bench'), dataDir: dir });
const mcp = createMcpServer(ctx, selectTools(ctx));
const [a, b] = InMemoryTransport.createLinkedPair();
const client = new Client({ name: 'bench', version: '1' });
await mcp.connect(a);
await client.connect(b);

const t0 = performance.now();
const res = await client.callTool({ name: 'exportContacts', arguments: { bot_id: 900 } });
const exportMs = performance.now() - t0;
const out = res.structuredContent;
console.log(
  `exportContacts over remote: ${out?.count} contacts in ${(exportMs / 1000).toFixed(2)} s, ` +
    `${statuses.length} API calls, 429s: ${statuses.filter((s) => s === 429).length}, errors: ${res.isError ? 'yes' : 'no'}`,
);

let paced = null;
if (values.paced) {
  statuses.length = 0;
  const t1 = performance.now();
  let offset = 0;
  let pages = 0;
  for (; pages < 200; pages++) {
    const r = await counting.call('getContacts', { bot_id: 900, offset, limit: 50 });
    if (r.status !== 200) throw new Error(`page ${pages}: status ${r.status}`);
    offset += 50;
  }
  const secs = (performance.now() - t1) / 1000;
  paced = { requests: pages, seconds: secs, perMinute: (pages / secs) * 60, got429: statuses.filter((s) => s === 429).length };
  console.log(
    `paced paging: ${pages} requests in ${secs.toFixed(1)} s = ${paced.perMinute.toFixed(1)} a minute (limit 120), 429s: ${paced.got429}`,
  );
}
console.log(
  `BENCH_JSON ${JSON.stringify({ bench: 'remote-export', count: out?.count, exportSeconds: exportMs / 1000, calls: statuses.length, paced })}`,
);
await client.close();
await remote.close();
state.close();
server.proc.kill();
rmSync(dir, { recursive: true, force: true });
