/**
 * "Fields are stored in the order sent", also for slugs that look like numbers: the tool's
 * text content and the list resource keep that order, on both backends.
 */
import { expect, test } from 'vitest';
import { useMcp } from '../harness.js';

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
  /** The field slugs as the JSON text lists them (a field is `"slug":{"name"…`), in its order. */
  const slugsIn = (t: string) => [...t.matchAll(/"([^"\\]+)":\s*\{\s*"name"/g)].map((m) => m[1]);
  expect(slugsIn((created.content[0] as { text: string }).text)).toEqual(SLUGS);
  const id = (created.structuredContent as { data: { id: string } }).data.id;

  const got = await world.call('getListSchema', { schema_id: id });
  expect(got.isError).toBeFalsy();
  expect(slugsIn((got.content[0] as { text: string }).text)).toEqual(SLUGS);

  const resource = await world.client.readResource({ uri: `workspace://lists/${id}` });
  expect(slugsIn((resource.contents[0] as { text: string }).text)).toEqual(SLUGS);
});
