/** The tool schemas read the contract's rules: the same limits, enums and string formats. */
import { describe, expect, it } from 'vitest';
import { r } from '../../src/api/rules.js';
import { shapeToZod, toJsonSchema } from '../../src/mcp/tools/schemas.js';

const shape = {
  name: r.string().required().max(5),
  amount: r.integer().required().between(1, 100),
  fields: r
    .array(r.object({ slug: r.alphaDash().required() }))
    .required()
    .between(1, 2),
  bot_id: r.integer(),
};

describe('rules as zod', () => {
  it('the zod schema of a shape is strict and carries the limits', () => {
    const z = shapeToZod(shape);
    expect(z.safeParse({ name: 'a', amount: 5, fields: [{ slug: 'x' }], bot_id: 1 }).success).toBe(true);
    expect(z.safeParse({ name: 'a', amount: 500, fields: [{ slug: 'x' }] }).success).toBe(false);
    expect(z.safeParse({ name: 'a', amount: 5, fields: [{ slug: 'x' }], ammount: 1 }).success).toBe(false);
    expect(z.safeParse({ name: 'a', amount: 5, fields: [{ slug: 'a b' }] }).success).toBe(false);
  });

  it("keeps the formats the rules know: email, uuid, alpha_dash, with the validator's own patterns", () => {
    const json = toJsonSchema(shapeToZod({ email: r.email(), id: r.uuid(), slug: r.alphaDash() })) as unknown as {
      properties: Record<string, { format?: string; pattern?: string }>;
    };
    expect(json.properties.email).toMatchObject({ format: 'email', pattern: '^[^\\s@]+@[^\\s@]+$' });
    expect(json.properties.id).toMatchObject({ format: 'uuid' });
    expect(json.properties.slug?.pattern).toBe('^[\\p{L}\\p{M}\\p{N}_-]+$');
    const z = shapeToZod({ email: r.email(), id: r.uuid() });
    expect(z.safeParse({ email: 'a@b', id: '4F1C2A9E-8D7B-4C1E-9A55-0B6F3D2E1A10' }).success).toBe(true);
    expect(z.safeParse({ email: 'not an address' }).success).toBe(false);
    expect(z.safeParse({ id: 'x' }).success).toBe(false);
  });
});
