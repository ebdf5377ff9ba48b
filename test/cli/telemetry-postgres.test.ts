/**
 * Telemetry on PostgreSQL, where the built-in service answers on threads of its own (service/
 * pool.ts): `mcp --http --db postgres://…` of the built CLI sends to a real OTLP receiver a
 * SERVER span per request and, under a tools/call span, a CLIENT span per call into the service
 * with `db.system.name` postgresql; nothing of the demo's people in what it exported.
 */
import { expect, test } from 'vitest';
import { cliEnv, runCliAsync, spawnAnnounced } from '../helpers/cli.js';
import { otelEnv, SPAN_KIND, startReceiver } from '../helpers/otlp.js';
import { usePostgres } from '../helpers/postgres.js';
import { stop } from '../helpers/temp.js';
import { DEMO_FIXTURE } from '../helpers/world.js';
import { connectHttp } from '../mcp/clients.js';

const pg = usePostgres();

test('mcp --http on PostgreSQL: the service call a CLIENT span under the tools/call span, db.system.name postgresql', async () => {
  const url = await pg.server().database();
  const seeded = await runCliAsync(['seed', DEMO_FIXTURE, '--db', url], cliEnv());
  expect(seeded.status, seeded.stderr).toBe(0);
  const r = await startReceiver();
  const traceId = 'a1'.repeat(16);
  try {
    const env = cliEnv({ ...otelEnv(r, 'http/protobuf'), WORKSPACE_SECRET: 'ab'.repeat(32), WORKSPACE_API_KEY: 'demo-dana-key' });
    const server = await spawnAnnounced(['mcp', '--http', '--port', '0', '--db', url], /(http:\/\/\S+\/mcp)/, env);
    try {
      const c = await connectHttp('2025-11-25', server.url, { traceparent: `00-${traceId}-${'b2'.repeat(8)}-01` });
      expect((await c.callTool({ name: 'getContactAccounts', arguments: { contact_id: 1001 } })).isError).toBeFalsy();
      await c.close();
    } finally {
      await stop(server.proc);
    }
    const spans = r.spans();
    const call = spans.find((s) => s.name === 'tools/call getContactAccounts' && s.traceId === traceId);
    expect(call, JSON.stringify(spans.map((s) => s.name))).toMatchObject({ kind: SPAN_KIND.SERVER, parentSpanId: 'b2'.repeat(8) });
    const children = spans.filter((s) => s.parentSpanId === call!.spanId);
    expect(children).toEqual([
      expect.objectContaining({
        name: 'getContactAccounts',
        kind: SPAN_KIND.CLIENT,
        traceId,
        attributes: { 'db.system.name': 'postgresql', 'db.operation.name': 'getContactAccounts' },
      }),
    ]);
    expect(r.errors()).toEqual([]);
    const all = r.everything();
    for (const secret of ['demo-dana-key', 'Anna Smith', '447700900123', 'anna@example.com', url])
      expect(all.includes(secret), secret).toBe(false);
  } finally {
    await r.close();
  }
});
