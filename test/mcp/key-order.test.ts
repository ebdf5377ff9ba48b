/**
 * "Fields are stored in the order sent", also for slugs that look like numbers: on the wire,
 * structuredContent keeps the API's key order over both transports of the built CLI, stdio and
 * Streamable HTTP, in both protocol revisions (JSON.stringify of a plain object would put "2"
 * and "10" first).
 */
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { orderedObject } from '../../src/common/ordered.js';
import { toolResult } from '../../src/mcp/result/results.js';
import { INITIALIZE, spawnAnnounced, spawnRpc } from '../helpers/cli.js';
import { tempDir } from '../helpers/world.js';

const SLUGS = ['b', '10', 'a', '2'];
// A new database's default owner has one bot, id 1.
const CREATE = {
  name: 'createListSchema',
  arguments: { name: 'Ordered', bot_id: 1, fields: SLUGS.map((slug) => ({ name: slug, slug, type: 'string' })) },
};

function freshDb(): string {
  return join(tempDir(), 'w.db');
}

/** The slugs' positions in the structuredContent of a tools/call answer, as sent on the wire. */
function slugOrder(line: string): number[] {
  const sc = line.slice(line.indexOf('"structuredContent"'));
  return SLUGS.map((k) => sc.indexOf(`"${k}":{"name"`));
}

test("a tool result keeps the body's key order in structuredContent and the text, extras after it", () => {
  const body = {
    data: {
      fields: orderedObject([
        ['b', 1],
        ['10', 2],
      ]),
    },
  };
  const result = toolResult({ status: 200, headers: {}, body }, { replayed: true });
  expect(JSON.stringify(result.structuredContent)).toBe('{"data":{"fields":{"b":1,"10":2}},"replayed":true}');
  expect((result.content[0] as { text: string }).text).toBe(JSON.stringify(result.structuredContent));
  expect(result.structuredContent).toEqual({ data: { fields: { b: 1, '10': 2 } }, replayed: true });
});

test('stdio: structuredContent on the wire keeps the slugs in the order sent', async () => {
  const rpc = spawnRpc(['mcp', '--db', freshDb()]);
  rpc.send({ ...INITIALIZE, id: 1 });
  await rpc.answer(1);
  rpc.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  rpc.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: CREATE });
  await rpc.answer(2);
  // The raw line, not its parse: the order of keys on the wire is what is tested.
  const pos = slugOrder(rpc.lines().find((l) => JSON.parse(l).id === 2)!);
  expect(pos.every((p) => p > 0)).toBe(true);
  expect([...pos].sort((x, y) => x - y)).toEqual(pos);
});

test('Streamable HTTP: structuredContent on the wire keeps the slugs in the order sent', async () => {
  const { url } = await spawnAnnounced(['mcp', '--db', freshDb(), '--http', '--port', '0'], /(http:\/\/\S+\/mcp)/);
  const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  const post = async (message: object) => {
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(message) });
    const sid = res.headers.get('mcp-session-id');
    if (sid) headers['mcp-session-id'] = sid;
    return res.text();
  };
  await post({ ...INITIALIZE, id: 1 });
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const text = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: CREATE });
  const pos = slugOrder(text);
  expect(
    pos.every((p) => p > 0),
    text,
  ).toBe(true);
  expect([...pos].sort((x, y) => x - y)).toEqual(pos);
});

test('Streamable HTTP, a 2026-07-28 request: structuredContent on the wire keeps the slugs in the order sent', async () => {
  const { url } = await spawnAnnounced(['mcp', '--db', freshDb(), '--http', '--port', '0'], /(http:\/\/\S+\/mcp)/);
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'tools/call',
      'Mcp-Name': CREATE.name,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { ...CREATE, _meta: meta } }),
  });
  const text = await res.text();
  const pos = slugOrder(text);
  expect(
    pos.every((p) => p > 0),
    text,
  ).toBe(true);
  expect([...pos].sort((x, y) => x - y)).toEqual(pos);
});
