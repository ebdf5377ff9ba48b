/**
 * Over stdio the wire carries structuredContent in the API's key order too: slugs "b", "10",
 * "a", "2" stay in the order sent (JSON.stringify alone would put "2" and "10" first).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { serializeOrdered } from '../../src/mcp/stdio.js';
import { successResult } from '../../src/mcp/results.js';
import { CLI } from '../helpers/cli.js';
import { tempDir } from '../helpers/world.js';

test('serializeOrdered writes structuredContent from its ordered text, and plain messages as JSON', () => {
  const result = successResult('{"data":{"fields":{"b":1,"10":2}}}');
  const line = serializeOrdered({ jsonrpc: '2.0', id: 1, result } as never);
  expect(line).toContain('"structuredContent":{"data":{"fields":{"b":1,"10":2}}}');
  expect(JSON.parse(line).result.structuredContent).toEqual({ data: { fields: { b: 1, '10': 2 } } });
  expect(serializeOrdered({ jsonrpc: '2.0', id: 2, result: {} } as never)).toBe('{"jsonrpc":"2.0","id":2,"result":{}}\n');
});

test('the built CLI over stdio keeps the slugs in order in structuredContent', async () => {
  const proc = spawn(process.execPath, [CLI, 'mcp', '--db', join(tempDir(), 'w.db')], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const send = (m: object) => proc.stdin.write(JSON.stringify(m) + '\n');
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const line = async (id: number) => {
    for (let i = 0; i < 100; i++) {
      const hit = out.split('\n').find((l) => l.startsWith('{') && JSON.parse(l).id === id);
      if (hit) return hit;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no answer ${id}: ${out}`);
  };
  await line(1);
  // A new database's default owner has one bot, id 1.
  send({
    jsonrpc: '2.0',
    id: 4,
    method: 'tools/call',
    params: { name: 'createListSchema', arguments: { name: 'Ordered', bot_id: 1, fields: ['b', '10', 'a', '2'].map((slug) => ({ name: slug, slug, type: 'string' })) } },
  });
  const created = await line(4);
  proc.kill();
  const sc = created.slice(created.indexOf('"structuredContent"'));
  const pos = ['"b":', '"10":', '"a":', '"2":'].map((k) => sc.indexOf(k));
  expect(pos.every((p) => p > 0), created).toBe(true);
  expect([...pos].sort((x, y) => x - y)).toEqual(pos);
});
