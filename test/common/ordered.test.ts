/** PHP keeps map keys in insertion order even when they look like numbers; so must we. */
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { fromCloneable, orderedObject, parseOrderedJson, toCloneable } from '../../src/common/ordered.js';

describe('orderedObject', () => {
  it('keeps {"b","10","a","2"} in insertion order through JSON.stringify and Object.keys, nested too', () => {
    const m = orderedObject<unknown>([
      ['b', 1],
      [
        '10',
        orderedObject([
          ['9', 'x'],
          ['1', 'y'],
        ]),
      ],
      ['a', 3],
      ['2', 4],
    ]);
    expect(JSON.stringify({ data: m })).toBe('{"data":{"b":1,"10":{"9":"x","1":"y"},"a":3,"2":4}}');
    expect(Object.keys(m)).toEqual(['b', '10', 'a', '2']);
    expect(m).toEqual({ '2': 4, '10': { '1': 'y', '9': 'x' }, a: 3, b: 1 });
  });

  it('a key added later goes last; a deleted key is gone', () => {
    const m = orderedObject<number>([
      ['b', 1],
      ['10', 2],
    ]);
    m['1'] = 3;
    delete m.b;
    expect(JSON.stringify(m)).toBe('{"10":2,"1":3}');
  });

  it('an empty map encodes as []', () => {
    expect(JSON.stringify({ utm: orderedObject([]) })).toBe('{"utm":[]}');
  });

  it('a __proto__ key is an own key, never the prototype', () => {
    const m = orderedObject<unknown>([
      ['__proto__', { polluted: true }],
      ['1', 1],
    ]);
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

describe('toCloneable / fromCloneable: across threads (a structured clone, as postMessage makes)', () => {
  /** `v` posted through a real MessagePort and received on the other end. */
  function post(v: unknown): unknown {
    const { port1, port2 } = new MessageChannel();
    try {
      port1.postMessage(v);
      return receiveMessageOnPort(port2)!.message;
    } finally {
      port1.close();
    }
  }
  const fields = () =>
    orderedObject<unknown>([
      ['b', { name: 'b' }],
      ['10', { name: '10' }],
      ['2', { name: '2' }],
      ['a', { name: 'a' }],
    ]);
  const answer = () => ({
    status: 200,
    headers: { 'X-A': '1' },
    body: {
      data: [
        { id: 'x', fields: fields(), n: null },
        { id: 'y', fields: { c: 1 } },
      ],
      meta: { total: 2 },
    },
  });

  it('an orderedObject cannot cross as it is (the service thread died of this); through them it crosses with its order', () => {
    expect(() => post(answer())).toThrow(/could not be cloned/);
    const back = fromCloneable(post(toCloneable(answer())));
    expect(JSON.stringify(back)).toBe(JSON.stringify(answer()));
    expect(Object.keys((back as ReturnType<typeof answer>).body.data[0]!.fields)).toEqual(['b', '10', '2', 'a']);
  });

  it('a plain object with keys that look like numbers keeps its order too; a __proto__ key stays an own key', () => {
    const v = { map: { '2': 'two', '10': 'ten' }, odd: JSON.parse('{"__proto__":{"polluted":true},"1":1}') as object };
    const back = fromCloneable(post(toCloneable(v))) as typeof v;
    expect(JSON.stringify(back)).toBe(JSON.stringify(v));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a value with no key that looks like a number is posted as it is, not copied', () => {
    const v = { data: [{ id: 'x', fields: { b: 1, имя: 2 } }], bytes: new Uint8Array([1, 2]) };
    expect(toCloneable(v)).toBe(v);
  });
});
