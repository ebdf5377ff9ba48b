/** PHP keeps map keys in insertion order even when they look like numbers; so must we. */
import { describe, expect, it } from 'vitest';
import { OrderedMap, toJsonText } from '../../src/api/ordered.js';

describe('ordered maps in JSON', () => {
  it('keeps {"b","10","a","2"} in insertion order, nested too', () => {
    const m = new OrderedMap<unknown>([['b', 1], ['10', new OrderedMap<unknown>([['9', 'x'], ['1', 'y']])], ['a', 3], ['2', 4]]);
    expect(toJsonText({ data: m })).toBe('{"data":{"b":1,"10":{"9":"x","1":"y"},"a":3,"2":4}}');
  });

  it('an empty map encodes as []', () => {
    expect(toJsonText({ utm: new OrderedMap([]) })).toBe('{"utm":[]}');
  });

  it('a user string that looks like a placeholder is left alone', () => {
    const text = toJsonText({ s: '\u0000abc:0', m: new OrderedMap([['1', 1]]) });
    expect(JSON.parse(text)).toEqual({ s: '\u0000abc:0', m: { '1': 1 } });
  });
});

describe('parseOrderedJson', () => {
  it('keeps the text order of index-like keys, at any depth, and round-trips', async () => {
    const { parseOrderedJson } = await import('../../src/api/ordered.js');
    const text = '{"data":{"id":"x","fields":{"b":{"n":1},"10":{"n":2},"a":[{"2":true,"1":null}],"2":"z"}},"s":"a\\"b\\\\c","e":{},"l":[]}';
    expect(toJsonText(parseOrderedJson(text))).toBe(text);
    const plain = '{"a":1,"b":[1,2,{"c":"d"}]}';
    expect(parseOrderedJson(plain)).toEqual(JSON.parse(plain));
    expect(() => parseOrderedJson('{"a":')).toThrow(SyntaxError);
  });
});
