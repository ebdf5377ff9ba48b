/**
 * Objects whose key order is part of the answer (a list's `fields`, a record's slugs, a
 * contact's `utm`). A JS object puts integer-like keys ("10", "2") first; PHP keeps the order
 * they were written. `orderedObject` keeps it in the data itself: when a key is integer-like it
 * is a Proxy whose own keys come in the given order, so JSON.stringify, Object.keys and every
 * transport that serialises it (HTTP, stdio, Streamable HTTP) write the API's order; otherwise
 * a plain object, which keeps insertion order anyway. An empty map is `[]`, as PHP writes an
 * empty array. Between threads (a structured clone, which cannot copy a Proxy) it travels
 * through `toCloneable` / `fromCloneable`. A neutral module: it imports nothing of ours, and any
 * layer may use it.
 */

/** Keys a JS object would move to the front (array-index-like). */
const INDEX_KEY = /^(0|[1-9][0-9]{0,9})$/;

/** An object with the keys of `entries`, in that order, wherever it is read or written. */
export function orderedObject<V>(entries: Iterable<readonly [string, V]>): Record<string, V> {
  const target: Record<string, V> = {};
  const keys: string[] = [];
  let indexLike = false;
  for (const [k, v] of entries) {
    if (!Object.hasOwn(target, k)) {
      keys.push(k);
      if (!indexLike && INDEX_KEY.test(k)) indexLike = true;
    }
    // Plain assignment keeps the object fast to serialise; `__proto__` alone must be defined
    // (an assignment would set the prototype).
    if (k === '__proto__') Object.defineProperty(target, k, { value: v, writable: true, enumerable: true, configurable: true });
    else target[k] = v;
  }
  if (keys.length === 0) return [] as unknown as Record<string, V>;
  if (!indexLike) return target;
  return new Proxy(target, {
    ownKeys: () => [...keys],
    defineProperty(t, k, desc) {
      if (typeof k === 'string' && !Object.hasOwn(t, k)) keys.push(k);
      return Reflect.defineProperty(t, k, desc);
    },
    deleteProperty(t, k) {
      const i = typeof k === 'string' ? keys.indexOf(k) : -1;
      if (i >= 0) keys.splice(i, 1);
      return Reflect.deleteProperty(t, k);
    },
  });
}

function hasIndexKey(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(hasIndexKey);
  if (v === null || typeof v !== 'object') return false;
  for (const [k, x] of Object.entries(v)) if (INDEX_KEY.test(k) || hasIndexKey(x)) return true;
  return false;
}

/**
 * JSON.parse that keeps the text's key order where a JS object would lose it: an object with
 * an index-like key ("10", "2") becomes an `orderedObject`; every other value is as JSON.parse
 * gives it. Throws SyntaxError on invalid JSON, like JSON.parse.
 */
export function parseOrderedJson(text: string): unknown {
  const plain: unknown = JSON.parse(text);
  if (!hasIndexKey(plain)) return plain;
  // The text is valid JSON (JSON.parse took it): a walk that trusts its structure.
  let i = 0;
  const ws = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\n' || text[i] === '\r' || text[i] === '\t')) i++;
  };
  const str = (): string => {
    const start = i;
    i++; // opening quote
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (): unknown => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const entries: Array<[string, unknown]> = [];
      ws();
      if (text[i] === '}') {
        i++;
        return {};
      }
      for (;;) {
        ws();
        const k = str();
        ws();
        i++; // colon
        entries.push([k, value()]);
        ws();
        if (text[i++] === '}') break;
      }
      return orderedObject(entries);
    }
    if (c === '[') {
      i++;
      const out: unknown[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return out;
      }
      for (;;) {
        out.push(value());
        ws();
        if (text[i++] === ']') break;
      }
      return out;
    }
    if (c === '"') return str();
    const m = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 400));
    i += m![0].length;
    return JSON.parse(m![0]) as unknown;
  };
  return value();
}

function isPlainObject(v: object): boolean {
  const p: unknown = Object.getPrototypeOf(v);
  return p === Object.prototype || p === null;
}

/** Sets own property `k`, also `__proto__` (which an assignment would take as the prototype). */
function put(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
  else o[k] = v;
}

/**
 * `v` made ready for a structured clone (postMessage to another thread), which cannot copy an
 * `orderedObject` (a Proxy: DataCloneError) and would put the integer-like keys of any other
 * object first: each plain object with an index-like key becomes a Map, which keeps its order
 * through the clone. `v` itself when nothing needed that (most answers); else a copy, which
 * `fromCloneable` turns back on the other side.
 */
export function toCloneable(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const x = toCloneable(v[i]);
      if (x !== v[i]) (out ??= v.slice())[i] = x;
    }
    return out ?? v;
  }
  if (!isPlainObject(v)) return v;
  const entries = Object.entries(v);
  let indexLike = false;
  let changed = false;
  for (const e of entries) {
    if (!indexLike && INDEX_KEY.test(e[0])) indexLike = true;
    const x = toCloneable(e[1]);
    if (x !== e[1]) {
      e[1] = x;
      changed = true;
    }
  }
  if (indexLike) return new Map(entries);
  if (!changed) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of entries) put(out, k, x);
  return out;
}

/** The value `toCloneable` made, as structured clone gave it on this side: its Maps `orderedObject`s again (in place). */
export function fromCloneable(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (v instanceof Map) return orderedObject([...(v as Map<string, unknown>)].map(([k, x]) => [k, fromCloneable(x)] as const));
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = fromCloneable(v[i]);
    return v;
  }
  if (!isPlainObject(v)) return v;
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    const x = fromCloneable(o[k]);
    if (x !== o[k]) put(o, k, x);
  }
  return v;
}
