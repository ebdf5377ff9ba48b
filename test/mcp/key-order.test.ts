/**
 * "Fields are stored in the order sent", also for slugs that look like numbers: on the wire,
 * structuredContent keeps the API's key order over both transports of the built CLI, stdio and
 * Streamable HTTP (JSON.stringify of a plain object would put "2" and "10" first).
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { successResult } from '../../src/mcp/results.js';
import { CLI, spawnAnnounced } from '../helpers/cli.js';
import { tempDir } from '../helpers/world.js';

const SLUGS = ['b', '10', 'a', '2'];
// A new database's default owner has one bot, id 1.
const CREATE = {
  name: 'createListSchema',
  arguments: { name: 'Ordered', bot_id: 1, fields: SLUGS.map((slug) => ({ name: slug, slug, type: 'string' })) },
};
const INIT = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } };

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function freshDb(): string {
  const dir = tempDir();
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'w.db');
}

/** The slugs' positions in the structuredContent of a tools/call answer, as sent on the wire. */
function slugOrder(line: string): number[] {
  const sc = line.slice(line.indexOf('"structuredContent"'));
  return SLUGS.map((k) => sc.indexOf(`"${k}":{"name"`));
}

test('a success result keeps the API\'s key order in structuredContent, as the transports write it', () => {
  const result = successResult('{"data":{"fields":{"b":1,"10":2}}}');
  expect(JSON.stringify(result.structuredContent)).toBe('{"data":{"fields":{"b":1,"10":2}}}');
  expect(result.structuredContent).toEqual({ data: { fields: { b: 1, '10': 2 } } });
});

test('stdio: structuredContent on the wire keeps the slugs in the order sent', async () => {
  const proc = spawn(process.execPath, [CLI, 'mcp', '--db', freshDb()], { stdio: ['pipe', 'pipe', 'pipe'] });
  cleanups.push(() => proc.kill());
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const send = (m: object) => proc.stdin.write(JSON.stringify(m) + '\n');
  const line = async (id: number) => {
    for (let i = 0; i < 200; i++) {
      const hit = out.split('\n').find((l) => l.startsWith('{') && JSON.parse(l).id === id);
      if (hit) return hit;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no answer ${id}: ${out}`);
  };
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT });
  await line(1);
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: CREATE });
  const pos = slugOrder(await line(2));
  expect(pos.every((p) => p > 0)).toBe(true);
  expect([...pos].sort((x, y) => x - y)).toEqual(pos);
});

test('Streamable HTTP: structuredContent on the wire keeps the slugs in the order sent', async () => {
  const { proc, url } = await spawnAnnounced(['mcp', '--db', freshDb(), '--http', '--port', '0'], /(http:\/\/\S+\/mcp)/);
  cleanups.push(() => proc.kill());
  const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  const post = async (message: object) => {
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(message) });
    const sid = res.headers.get('mcp-session-id');
    if (sid) headers['mcp-session-id'] = sid;
    return res.text();
  };
  await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT });
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const text = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: CREATE });
  const pos = slugOrder(text);
  expect(pos.every((p) => p > 0), text).toBe(true);
  expect([...pos].sort((x, y) => x - y)).toEqual(pos);
});
