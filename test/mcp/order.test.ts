/**
 * "Fields are stored in the order sent", also for slugs that look like numbers: the tool's
 * text content and the list resource keep that order, on both backends.
 */
import { expect, test } from 'vitest';
import { useMcp } from './harness.js';

const startMcp = useMcp();

const SLUGS = ['b', '10', 'a', '2'];

test('createListSchema, getListSchema and the resource keep the slugs in the order sent', async () => {
  const world = await startMcp();
  const created = await world.call('createListSchema', {
    name: 'Ordered',
    bot_id: 10,
    fields: SLUGS.map((slug) => ({ name: `F${slug}`, slug, type: 'string', is_required: false })),
  });
  expect(created.isError).toBeFalsy();
  const text = (created.content[0] as { text: string }).text;
  const order = (t: string) => SLUGS.map((s) => t.indexOf(`"${s}":{"name"`));
  const pos = order(text);
  expect(pos.every((p) => p > 0)).toBe(true);
  expect([...pos].sort((x, y) => x - y)).toEqual(pos);
  const id = (created.structuredContent as { data: { id: string } }).data.id;

  const got = await world.call('getListSchema', { schema_id: id });
  const gotPos = order((got.content[0] as { text: string }).text);
  expect([...gotPos].sort((x, y) => x - y)).toEqual(gotPos);

  const resource = await world.client.readResource({ uri: `workspace://lists/${id}` });
  const resPos = order((resource.contents[0] as { text: string }).text);
  expect(resPos.every((p) => p > 0)).toBe(true);
  expect([...resPos].sort((x, y) => x - y)).toEqual(resPos);
});
