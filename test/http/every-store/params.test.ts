/**
 * Query strings of plain `name=value` pairs are read without qs; the answer must be what qs
 * gives (with the server's options) for every such string, repeated names and odd parts included.
 */
import fc from 'fast-check';
import qs from 'qs';
import { describe, expect, it } from 'vitest';
import { parseParams, QS_OPTIONS } from '../../../src/http/server.js';

/** qs's own answer, in key order; undefined when PHP's list rule (keys 0, 1, 2 …) applies on top of it. */
function viaQs(text: string): Array<[string, unknown]> | undefined {
  const entries = Object.entries(qs.parse(text, QS_OPTIONS));
  return entries.length > 0 && entries.every(([k], i) => k === String(i)) ? undefined : entries;
}

describe('flat query strings', () => {
  it('read as qs reads them: the first = splits, the last of a repeated name wins, empty and prototype names are dropped', () => {
    const cases = [
      'a=1&a=2',
      'b=1&a=2&b=3',
      'toString=1&b',
      '=x&&a==b',
      'constructor=1&__proto__=2&c=3',
      '10=x&2=y&k=z',
      'a.b=1&a-b=2',
      'x',
    ];
    for (const text of cases) expect(Object.entries(parseParams(text))).toEqual(viaQs(text));
    expect(parseParams('0=a&1=b')).toEqual(['a', 'b']);
  });

  it('any string of names, values, = and & gives what qs gives', () => {
    const piece = fc.constantFrom(
      'a',
      'b',
      'id',
      '0',
      '1',
      '7',
      '10',
      '=',
      '&',
      '.',
      '-',
      '_',
      '~',
      'toString',
      'hasOwnProperty',
      'é',
      '?',
      '#',
    );
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 30 }).map((xs) => xs.join('')),
        (text) => {
          const expected = viaQs(text);
          fc.pre(expected !== undefined && text !== '');
          expect(Object.entries(parseParams(text))).toEqual(expected);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
