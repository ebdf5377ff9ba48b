/** PHP keeps map keys in insertion order even when they look like numbers; so must we. */
import { describe, expect, it } from 'vitest';
import { orderedObject, parseOrderedJson } from '../../src/api/ordered.js';

describe('orderedObject', () => {
  it('keeps {"b","10","a","2"} in insertion order through JSON.stringify and Object.keys, nested too', () => {
    const m = orderedObject<unknown>([['b', 1], ['10', orderedObject([['9', 'x'], ['1', 'y']])], ['a', 3], ['2', 4]]);
    expect(JSON.stringify({ data: m })).toBe('{"data":{"b":1,"10":{"9":"x","1":"y"},"a":3,"2":4}}');
    expect(Object.keys(m)).toEqual(['b', '10', 'a', '2']);
    expect(m).toEqual({ '2': 4, '10': { '1': 'y', '9': 'x' }, a: 3, b: 1 });
  });

  it('a key added later goes last; a deleted key is gone', () => {
    const m = orderedObject<number>([['b', 1], ['10', 2]]);
    m['1'] = 3;
    delete m.b;
    expect(JSON.stringify(m)).toBe('{"10":2,"1":3}');
  });

  it('an empty map encodes as []', () => {
    expect(JSON.stringify({ utm: orderedObject([]) })).toBe('{"utm":[]}');
  });

  it('a __proto__ key is an own key, never the prototype', () => {
    const m = orderedObject<unknown>([['__proto__', { polluted: true }], ['1', 1]]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.stringify(m)).toBe('{"__proto__":{"polluted":true},"1":1}');
  });
});

describe('parseOrderedJson', () => {
  it('keeps the text order of index-like keys, at any depth, and round-trips', () => {
    const text = '{"data":{"id":"x","fields":{"b":{"n":1},"10":{"n":2},"a":[{"2":true,"1":null}],"2":"z"}},"s":"a\\"b\\\\c","e":{},"l":[]}';
    expect(JSON.stringify(parseOrderedJson(text))).toBe(text);
    const plain = '{"a":1,"b":[1,2,{"c":"d"}]}';
    expect(parseOrderedJson(plain)).toEqual(JSON.parse(plain));
    expect(() => parseOrderedJson('{"a":')).toThrow(SyntaxError);
  });
});
