/**
 * `--auth key` keeps at most `maxOwners` owners' contexts: a new owner at the bound takes the
 * place of the least recently used idle one at once, and gets a 503 only when every kept owner
 * has a request under way or a session open. The server's real HTTP layer over a real world;
 * the key check is a table of two keys (the backend's check is auth-key.test.ts's).
 */
import { afterEach, expect, test } from 'vitest';
import { serveMcpHttpByKey, type McpHttpServer } from '../../src/mcp/serve/http.js';
import { useMcp } from './harness.js';

const start = useMcp();
const servers: McpHttpServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

test('at the bound of kept owners, a new owner takes the least recently used idle one’s place, not a 503', async () => {
  const world = await start();
  const owners: Record<string, number> = { 'alice-key': 1, 'bob-key': 2 };
  const served: number[] = [];
  const http = await serveMcpHttpByKey(
    {
      owner: async (key) => (owners[key] ? { id: owners[key]! } : { status: 401, message: 'Unauthenticated.' }),
      served: async (id) => {
        served.push(id);
        return { ctx: world.context, tools: world.tools };
      },
      maxOwners: 1,
    },
    { host: '127.0.0.1', port: 0 },
  );
  servers.push(http);
  const call = async (key: string) => {
    const res = await fetch(http.url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${key}`,
        'MCP-Protocol-Version': '2026-07-28',
        'Mcp-Method': 'tools/call',
        'Mcp-Name': 'getMe',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'getMe', arguments: {}, _meta: META } }),
    });
    await res.text();
    return res.status;
  };
  expect(await call('alice-key')).toBe(200);
  expect(await call('bob-key')).toBe(200);
  expect(await call('alice-key')).toBe(200);
  // Each came back after the other took the one place: made again, never refused.
  expect(served).toEqual([1, 2, 1]);
  expect(await call('nobody-key')).toBe(401);
});
