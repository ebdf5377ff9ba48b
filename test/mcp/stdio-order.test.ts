/**
 * Over stdio the wire carries structuredContent in the API's key order too: slugs "b", "10",
 * "a", "2" stay in the order sent (JSON.stringify alone would put "2" and "10" first).
 */
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { serializeOrdered } from '../../src/mcp/stdio.js';
import { successResult } from '../../src/mcp/results.js';
import { INITIALIZE, spawnRpc } from '../helpers/cli.js';
import { stop } from '../helpers/temp.js';
import { tempDir } from '../helpers/world.js';

test('serializeOrdered writes structuredContent from its ordered text, and plain messages as JSON', () => {
  const result = successResult('{"data":{"fields":{"b":1,"10":2}}}');
  const line = serializeOrdered({ jsonrpc: '2.0', id: 1, result } as never);
  expect(line).toContain('"structuredContent":{"data":{"fields":{"b":1,"10":2}}}');
  expect(JSON.parse(line).result.structuredContent).toEqual({ data: { fields: { b: 1, '10': 2 } } });
  expect(serializeOrdered({ jsonrpc: '2.0', id: 2, result: {} } as never)).toBe('{"jsonrpc":"2.0","id":2,"result":{}}\n');
});

test('the built CLI over stdio keeps the slugs in order in structuredContent', async () => {
  const rpc = spawnRpc(['mcp', '--db', join(tempDir(), 'w.db')]);
  rpc.send({ ...INITIALIZE, id: 1 });
  await rpc.answer(1);
  rpc.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  // A new database's default owner has one bot, id 1.
  rpc.send({
    jsonrpc: '2.0',
    id: 4,
    method: 'tools/call',
    params: { name: 'createListSchema', arguments: { name: 'Ordered', bot_id: 1, fields: ['b', '10', 'a', '2'].map((slug) => ({ name: slug, slug, type: 'string' })) } },
  });
  await rpc.answer(4);
  await stop(rpc.proc);
  // The raw line, not its parse: the order of keys on the wire is what is tested.
  const created = rpc.lines().find((l) => JSON.parse(l).id === 4)!;
  const sc = created.slice(created.indexOf('"structuredContent"'));
  const pos = ['"b":', '"10":', '"a":', '"2":'].map((k) => sc.indexOf(k));
  expect(pos.every((p) => p > 0), created).toBe(true);
  expect([...pos].sort((x, y) => x - y)).toEqual(pos);
});
