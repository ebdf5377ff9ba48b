/**
 * Answers kept with a cached row (service/rendered.ts): made once per row object, the same
 * bytes as the answer made afresh, and frozen, so that no caller can change the next one's.
 */
import { describe, expect, it } from 'vitest';
import { keptAnswerOf, jsonText } from '../../src/service/rendered.js';

describe('answers kept with their row', () => {
  it('is made once per row object; a new row object (the cache dropped the old one) makes it anew', () => {
    let made = 0;
    const make = (row: { name: string }) => () => ({ data: { name: row.name, n: ++made } });
    const row = { name: 'Ann' };
    const first = keptAnswerOf(row, make(row));
    expect(keptAnswerOf(row, make(row))).toBe(first);
    const reloaded = { name: 'Anna' };
    expect(keptAnswerOf(reloaded, make(reloaded))).toEqual({ data: { name: 'Anna', n: 2 } });
  });

  it('writes the same JSON text as JSON.stringify, its bytes kept for a kept answer only', () => {
    const kept = keptAnswerOf({}, () => ({ data: { id: 1, fields: { b: 1, a: [true, null] } } }));
    expect(jsonText(kept).toString()).toBe(JSON.stringify(kept));
    expect(jsonText(kept)).toBe(jsonText(kept));
    const plain = { data: { id: 2 } };
    expect(jsonText(plain)).toBe('{"data":{"id":2}}');
    plain.data.id = 3;
    expect(jsonText(plain)).toBe('{"data":{"id":3}}');
  });

  it('is frozen all the way down: changing it throws instead of changing the next answer', () => {
    const kept = keptAnswerOf({}, () => ({ data: { name: 'Ann', tags: ['a'] } }));
    expect(() => {
      (kept.data as { name: string }).name = 'Bob';
    }).toThrow(TypeError);
    expect(() => kept.data.tags.push('b')).toThrow(TypeError);
    expect(jsonText(kept).toString()).toBe('{"data":{"name":"Ann","tags":["a"]}}');
  });
});
