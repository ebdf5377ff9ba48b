/** The extended methods as MCP tools, over the real Client: sendMessage reaches a person; a short link round trip. */
import { describe, expect, test } from 'vitest';
import { useMcp } from '../harness.js';

const startMcp = useMcp();

describe('extended tools', () => {
  test('sendMessage is marked as reaching a person: openWorldHint, not read-only, not idempotent; --read-only hides it', async () => {
    const world = await startMcp();
    const tool = (await world.client.listTools()).tools.find((t) => t.name === 'sendMessage')!;
    expect(tool.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false, openWorldHint: true });
    const readOnly = await startMcp({ filter: { readOnly: true } });
    const names = (await readOnly.client.listTools()).tools.map((t) => t.name);
    expect(names).not.toContain('sendMessage');
    expect(names).toContain('decodeShortLink');
    expect(names).toContain('getReferrers');
  });

  test("a media variable's short link decodes to a signed link to the file", async () => {
    const world = await startMcp();
    const vars = await world.call('getContactVariables', { contact_id: 100 });
    const link = (vars.structuredContent as { data: Array<{ value: string }> }).data[0]!.value;
    expect(link).toMatch(/^http:\/\/localhost\/s\//);
    const r = await world.call('decodeShortLink', { url: link });
    expect(r.isError).toBeFalsy();
    expect((r.structuredContent as { data: { url: string } }).data.url).toMatch(
      /^https:\/\/example\.com\/ann\.jpg\?expires_at=\d+&sign=[0-9a-f]{64}$/,
    );
    const bad = await world.call('decodeShortLink', { url: 'http://localhost/s/1-AAAAAAAAAAAAAAAAAAAAAA' });
    expect(bad.isError).toBe(true);
    expect(JSON.parse((bad.content[0] as { text: string }).text)).toMatchObject({ status: 404 });
  });
});
