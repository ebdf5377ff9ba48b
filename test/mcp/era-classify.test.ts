/**
 * The Streamable HTTP endpoint routes a request by era with the SDK's isLegacyRequest, given the
 * parsed body and a bodiless Request of the three headers the SDK reads (`classifiable` in
 * src/mcp/serve/http.ts), instead of a full copy of the request. Whatever the SDK reads now or in
 * a later version, the two must agree: every pairing of bodies and era headers below is
 * classified as the full copy (the SDK's own toWebRequest) is.
 */
import type { IncomingMessage } from 'node:http';
import { toWebRequest } from '@modelcontextprotocol/node';
import { isLegacyRequest } from '@modelcontextprotocol/server';
import { expect, test } from 'vitest';
import { classifiable } from '../../src/mcp/serve/http.js';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const BODIES: Record<string, unknown> = {
  initialize: {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  },
  'tools/call, 2025': { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'getMe', arguments: {} } },
  'tools/call, 2026-07-28 envelope': { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'getMe', arguments: {}, _meta: META } },
  'server/discover': { jsonrpc: '2.0', id: 4, method: 'server/discover', params: { _meta: META } },
  notification: { jsonrpc: '2.0', method: 'notifications/initialized' },
  response: { jsonrpc: '2.0', id: 5, result: {} },
  batch: [{ jsonrpc: '2.0', method: 'notifications/initialized' }],
  'not JSON-RPC': { hello: 'world' },
};
const HEADERS: Record<string, Record<string, string>> = {
  none: {},
  '2025 version': { 'mcp-protocol-version': '2025-11-25' },
  '2026-07-28 version': { 'mcp-protocol-version': '2026-07-28' },
  'a version sent twice': { 'mcp-protocol-version': '2026-07-28, 2025-11-25' },
  'padded version': { 'mcp-protocol-version': ' 2026-07-28 ' },
  'method and name': { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'getMe' },
  'a method that disagrees': { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
};

test('every pairing of body and era headers is routed as the full copy of the request would be', async () => {
  let legacy = 0;
  for (const [bodyName, body] of Object.entries(BODIES)) {
    for (const [headerName, era] of Object.entries(HEADERS)) {
      const req = {
        method: 'POST',
        url: '/mcp',
        headers: { host: '127.0.0.1:3000', 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...era },
      } as unknown as IncomingMessage;
      const full = await isLegacyRequest(await toWebRequest(req, body), body);
      expect(await isLegacyRequest(classifiable(req), body), `${bodyName} with ${headerName}`).toBe(full);
      if (full) legacy++;
    }
  }
  // Both answers occur: the pairings tell the eras apart.
  expect(legacy).toBeGreaterThan(0);
  expect(legacy).toBeLessThan(Object.keys(BODIES).length * Object.keys(HEADERS).length);
});
