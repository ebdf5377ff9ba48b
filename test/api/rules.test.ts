/** The Laravel-style validator: coercion, messages, key order, as the Laravel backend behind the platform answers (docs/http-service.md). */
import { describe, expect, it } from 'vitest';
import { r, validate } from '../../src/api/rules.js';
import { summarize } from '../../src/api/errors.js';

const shape = {
  name: r.string().required().max(5),
  amount: r.integer().required().between(1, 100),
  flag: r.boolean(),
  fields: r
    .array(r.object({ slug: r.alphaDash().required() }))
    .required()
    .between(1, 2),
  project_uuid: r.string().requiredWithout('bot_id'),
  bot_id: r.integer().requiredWithout('project_uuid'),
};

function errors(input: Record<string, unknown>) {
  const res = validate(shape, input);
  if (res.ok) throw new Error('expected failure');
  return res.errors;
}

describe('Laravel validation rules', () => {
  it('integer accepts "5" and 5, fails "1.5", "abc", "01"', () => {
    for (const ok of ['5', 5]) {
      const res = validate({ n: r.integer().required() }, { n: ok });
      expect(res.ok && res.params.n).toBe(5);
    }
    for (const bad of ['1.5', 'abc', '01', 1.5, true]) {
      const res = validate({ n: r.integer().required() }, { n: bad });
      expect(res.ok).toBe(false);
      if (!res.ok) expect(res.errors.get('n')).toEqual(['The n field must be an integer.']);
    }
  });

  it('boolean accepts only true, false, 1, 0, "1", "0"; "true" and "false" fail', () => {
    for (const [v, want] of [
      [true, true],
      [false, false],
      [1, true],
      [0, false],
      ['1', true],
      ['0', false],
    ] as const) {
      const res = validate({ b: r.boolean() }, { b: v });
      expect(res.ok && res.params.b).toBe(want);
    }
    for (const bad of ['true', 'false', 2, 'yes']) {
      const res = validate({ is_menu: r.boolean() }, { is_menu: bad });
      expect(!res.ok && res.errors.get('is_menu')).toEqual(['The is menu field must be true or false.']);
    }
  });

  it('string lengths count code points, not UTF-16 units', () => {
    expect(validate({ s: r.string().max(3) }, { s: '😀😀😀' }).ok).toBe(true);
    expect(validate({ s: r.string().max(3) }, { s: '😀😀😀😀' }).ok).toBe(false);
  });

  it('alpha_dash takes letters of any script', () => {
    expect(validate({ s: r.alphaDash() }, { s: 'цена_2-й' }).ok).toBe(true);
    const res = validate({ s: r.alphaDash() }, { s: 'a b' });
    expect(!res.ok && res.errors.get('s')).toEqual(['The s field must only contain letters, numbers, dashes, and underscores.']);
  });

  it('email with the default check accepts a@b', () => {
    expect(validate({ e: r.email() }, { e: 'a@b' }).ok).toBe(true);
    expect(validate({ e: r.email() }, { e: 'ab' }).ok).toBe(false);
  });

  it('lists every failing field, top-level keys first, array keys raw', () => {
    const e = errors({ fields: [{}, { slug: 'a b' }, {}] });
    expect([...e.keys()]).toEqual(['name', 'amount', 'fields', 'project_uuid', 'bot_id']);
    expect(e.get('name')).toEqual(['The name field is required.']);
    expect(e.get('fields')).toEqual(['The fields field must not have more than 2 items.']);
    expect(e.get('project_uuid')).toEqual(['The project uuid field is required when bot id is not present.']);
    const e2 = errors({ name: 'abcdef', amount: 0, fields: [{}, { slug: 'a b' }], bot_id: 1 });
    expect([...e2.keys()]).toEqual(['name', 'amount', 'fields.0.slug', 'fields.1.slug']);
    expect(e2.get('name')).toEqual(['The name field must not be greater than 5 characters.']);
    expect(e2.get('amount')).toEqual(['The amount field must be between 1 and 100.']);
    expect(e2.get('fields.0.slug')).toEqual(['The fields.0.slug field is required.']);
  });

  it('the message is the first error and "(and N more errors)" counting messages', () => {
    expect(summarize(new Map([['a', ['A.']]]))).toBe('A.');
    expect(
      summarize(
        new Map([
          ['a', ['A.']],
          ['b', ['B.']],
        ]),
      ),
    ).toBe('A. (and 1 more error)');
    expect(
      summarize(
        new Map([
          ['a', ['A.', 'A2.']],
          ['b', ['B.']],
        ]),
      ),
    ).toBe('A. (and 2 more errors)');
  });

  it('an empty array fails required; a required array of 0 items is "required"', () => {
    const e = errors({ name: 'a', amount: 1, fields: [], bot_id: 1 });
    expect(e.get('fields')).toEqual(['The fields field is required.']);
  });
});

describe('every rule of a field runs (no bail), as Laravel does', () => {
  it('-1.5 for an integer between 1 and 10^14 gets both messages', () => {
    const res = validate({ amount: r.integer().required().between(1, 1e14) }, { amount: -1.5 });
    expect(!res.ok && res.errors.get('amount')).toEqual([
      'The amount field must be an integer.',
      'The amount field must be between 1 and 100000000000000.',
    ]);
  });
  it('a 300-character slug with spaces is too long and not alpha_dash', () => {
    const res = validate({ slug: r.alphaDash().max(255) }, { slug: 'a b'.repeat(100) });
    expect(!res.ok && res.errors.get('slug')).toEqual([
      'The slug field must not be greater than 255 characters.',
      'The slug field must only contain letters, numbers, dashes, and underscores.',
    ]);
  });
  it('"abc" for an integer is only "must be an integer"', () => {
    const res = validate({ n: r.integer().between(1, 5) }, { n: 'abc' });
    expect(!res.ok && res.errors.get('n')).toEqual(['The n field must be an integer.']);
  });
});

describe('Unix seconds (date_from, date_to)', () => {
  const message = (v: unknown) => {
    const res = validate({ date_from: r.unixSeconds() }, { date_from: v });
    return res.ok ? 'accepted' : res.errors.get('date_from');
  };
  it('a date string is refused with the seconds it means, computed from it', () => {
    expect(message('2024-01-01')).toEqual([
      'The date from field must be an integer: Unix seconds, e.g. 1704067200 for 2024-01-01T00:00:00Z.',
    ]);
    expect(message('2026-03-02')).toEqual([
      'The date from field must be an integer: Unix seconds, e.g. 1772409600 for 2026-03-02T00:00:00Z.',
    ]);
    // A time without an offset is UTC, whatever the server's zone; an offset is honoured.
    expect(message('2024-01-01T10:30')).toEqual([
      'The date from field must be an integer: Unix seconds, e.g. 1704105000 for 2024-01-01T10:30:00Z.',
    ]);
    expect(message('2024-01-01 10:30:15Z')).toEqual([
      'The date from field must be an integer: Unix seconds, e.g. 1704105015 for 2024-01-01T10:30:15Z.',
    ]);
    expect(message('2024-01-01T03:00:00+03:00')).toEqual([
      'The date from field must be an integer: Unix seconds, e.g. 1704067200 for 2024-01-01T00:00:00Z.',
    ]);
    expect(message('2024-01-01T00:00:00-0530')).toEqual([
      'The date from field must be an integer: Unix seconds, e.g. 1704087000 for 2024-01-01T05:30:00Z.',
    ]);
  });
  it("what is not a date keeps Laravel's message alone; an integer passes", () => {
    for (const bad of ['x', '2024-02-30', '2024-13-01', '01', '1.5', 1.5, 'yesterday', '2024-01-01T25:00']) {
      expect(message(bad), String(bad)).toEqual(['The date from field must be an integer.']);
    }
    expect(message('1704067200')).toBe('accepted');
    expect(message(1704067200)).toBe('accepted');
  });
});

describe('attribute names in messages', () => {
  it('underscores become spaces, except in keys expanded from an array', async () => {
    const { attributeName } = await import('../../src/api/rules.js');
    expect(attributeName('account_id')).toBe('account id');
    expect(attributeName('field.is_required')).toBe('field.is required');
    expect(attributeName('fields.0.is_required')).toBe('fields.0.is_required');
    expect(attributeName('tags.3')).toBe('tags.3');
  });
});

describe('arrays and maps as Laravel reads them', () => {
  it('a null item in an array of strings fails "must be a string"; [] and {} fail required', () => {
    const res = validate({ tags: r.array(r.string().max(255)) }, { tags: ['a', null] });
    expect(!res.ok && res.errors.get('tags.1')).toEqual(['The tags.1 field must be a string.']);
    const empty = validate({ data: r.map().required(), list: r.array(r.string()).required() }, { data: {}, list: [] });
    expect(!empty.ok && [...empty.errors.keys()]).toEqual(['data', 'list']);
  });

  it('a repeated query parameter: the last one wins, as in PHP', async () => {
    const { parseParams } = await import('../../src/http/server.js');
    expect(parseParams('count=1&count=2')).toEqual({ count: '2' });
  });
});
