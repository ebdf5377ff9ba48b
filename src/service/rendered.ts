/**
 * Answers kept with the cached row they are made of (the owner of `getMe`, the list of
 * `getListSchema`), and their JSON text kept with the answer: a request that finds the row in
 * the owner and deprecation cache (store/core-cache.ts) finds its answer, and its bytes, too.
 * Both live in WeakMaps keyed by the row object itself, so they follow the row's freshness
 * rules exactly: when the cache drops the row (a change on this connection, another
 * connection's commit) the next lookup loads a new row object, whose answer is made anew; a row
 * read past the cache (inside a transaction) is a new object each time and its answer is never
 * seen again. Kept answers are frozen: the same object goes to every caller, and a caller that
 * tried to change one would throw instead of changing the next caller's answer.
 */

import { deepFreeze } from '../common/frozen.js';

const ANSWERS = new WeakMap<object, object>();
/** The JSON text of each kept answer as UTF-8 bytes, made on its first write. */
const TEXTS = new WeakMap<object, Buffer | undefined>();

/** The answer made of `row` by `make`, made once for as long as this row object lives. */
export function keptAnswerOf<T extends object>(row: object, make: () => T): T {
  let answer = ANSWERS.get(row) as T | undefined;
  if (answer === undefined) {
    answer = deepFreeze(make());
    ANSWERS.set(row, answer);
    TEXTS.set(answer, undefined);
  }
  return answer;
}

/**
 * The JSON text of an answer's body: for a kept answer its UTF-8 bytes, made once (neither
 * stringified nor encoded again); else the text of JSON.stringify.
 */
export function jsonText(body: unknown): string | Buffer {
  if (body === null || typeof body !== 'object' || !TEXTS.has(body)) return JSON.stringify(body);
  let bytes = TEXTS.get(body);
  if (bytes === undefined) {
    bytes = Buffer.from(JSON.stringify(body), 'utf8');
    TEXTS.set(body, bytes);
  }
  return bytes;
}
