/**
 * The tool surface stays lean (a model pays for it in every conversation): measured on a real
 * tools/list through the SDK's clients of both protocol eras, with every tool on.
 */
import { describe, expect, test } from 'vitest';
import { measureTools, overBudget, TOOL_BUDGET } from '../../src/mcp/tool-text.js';
import { connectInMemory, ERAS, type McpClient } from './clients.js';
import { useMcp } from './harness.js';

const startMcp = useMcp();

/** A client of `era` on a new world's server (every tool on). */
async function clientOf(era: (typeof ERAS)[number]): Promise<McpClient> {
  const world = await startMcp();
  const client = await connectInMemory(era, world.factory);
  // Closed before the world (useMcp closes worlds after each test).
  const close = world.close;
  world.close = async () => {
    await client.close();
    await close();
  };
  return client;
}

describe('tool budget', () => {
  test.each(ERAS)('%s: model-visible text ≤ 20 000 chars, tools/list ≤ 40 000, no description over 2 048', async (era) => {
    const client = await clientOf(era);
    const list = await client.listTools();
    const m = measureTools(list);
    expect(m.count).toBeGreaterThanOrEqual(35);
    expect(overBudget(m)).toEqual([]);
    expect(m.visible).toBeLessThanOrEqual(TOOL_BUDGET.visible);
    expect(m.sent).toBeLessThanOrEqual(TOOL_BUDGET.visible);
    expect(m.total).toBeLessThanOrEqual(TOOL_BUDGET.total);
  });

  test('both eras are shown the same tools, key for key (but runBulk\u2019s 2025-11-25 task support)', async () => {
    const [a, b] = await Promise.all(ERAS.map(async (era) => (await (await clientOf(era)).listTools()).tools));
    // Tasks are 2025-11-25 vocabulary: a 2026-07-28 list has no `execution`.
    expect(a!.filter((t) => t.execution).map((t) => [t.name, t.execution])).toEqual([['runBulk', { taskSupport: 'optional' }]]);
    expect(b).toEqual(a!.map(({ execution: _, ...t }) => t));
  });

  test('the measure counts what it says: a tool over budget is reported', () => {
    const long = { name: 'x', description: 'd'.repeat(TOOL_BUDGET.description + 1), inputSchema: { type: 'object' } };
    const m = measureTools({ tools: [long] });
    expect(m.visible).toBe(1 + TOOL_BUDGET.description + 1 + JSON.stringify({ type: 'object' }).length);
    expect(overBudget(m)).toEqual([`x description ${TOOL_BUDGET.description + 1} > ${TOOL_BUDGET.description}`]);
    const wide = measureTools({
      tools: Array.from({ length: 40 }, (_, i) => ({ name: `t${i}`, description: 'd'.repeat(600), inputSchema: {} })),
    });
    expect(overBudget(wide)[0]).toMatch(/^model-visible tool text \d+ > 20000$/);
  });

  test.each(ERAS)(
    '%s: schemas carry no $schema and no bounds that only restate a safe integer; titles are distinct; the order is stable',
    async (era) => {
      const client = await clientOf(era);
      const first = await client.listTools();
      const text = JSON.stringify(first);
      expect(text).not.toContain('$schema');
      expect(text).not.toContain(String(Number.MAX_SAFE_INTEGER));
      const titles = first.tools.map((t) => t.title);
      expect(titles.every((t) => typeof t === 'string' && t.length > 0)).toBe(true);
      expect(new Set(titles).size).toBe(titles.length);
      const again = await client.listTools();
      expect(again.tools.map((t) => t.name)).toEqual(first.tools.map((t) => t.name));
    },
  );

  test.each(ERAS)('%s: the server instructions (initialize or server/discover) state the shared conventions once', async (era) => {
    const client = await clientOf(era);
    const text = client.getInstructions() ?? '';
    expect(text).toMatch(/minor units of the currency: 10\.00 USD is 1000/);
    expect(text).toMatch(/idempotency_key/);
    expect(text).toMatch(/exportContacts/);
    expect(text).toMatch(/A result stays under 100000 characters: .*"truncated": \{kept, of, next\}/);
    expect(text.length).toBeLessThan(2_000);
  });
});
