/**
 * Maps whose key order is part of the answer (a list's `fields`, a record's slugs), and the
 * JSON writer that keeps it: a JS object puts integer-like keys first, PHP does not. An empty
 * map is written as `[]`, as PHP writes an empty array.
 */
import { randomBytes } from 'node:crypto';

interface Frame {
  nonce: string;
  parts: string[];
}
let frame: Frame | null = null;
/** Placeholders carry a per-process random prefix and a counter: no user text can forge one. */
const PREFIX = randomBytes(8).toString('hex');
let serial = 0;
/** Every placeholder of this process, built once: `"\u0000<prefix>:<frame>:<part>"`. */
const TOKEN = new RegExp(`"\\\\u0000${PREFIX}:(\\d+):(\\d+)"`, 'g');

export class OrderedMap<V = unknown> {
  constructor(readonly entries: ReadonlyArray<readonly [string, V]>) {}

  get size(): number {
    return this.entries.length;
  }

  get(key: string): V | undefined {
    return this.entries.find(([k]) => k === key)?.[1];
  }

  /** Called by JSON.stringify: inside `toJsonText` a placeholder, else a plain object. */
  toJSON(): unknown {
    if (this.entries.length === 0) return [];
    if (!frame) return Object.fromEntries(this.entries);
    const f = frame;
    const body = this.entries
      .map(([k, v]) => {
        const text = JSON.stringify(v);
        return text === undefined ? undefined : `${JSON.stringify(k)}:${text}`;
      })
      .filter((x) => x !== undefined)
      .join(',');
    f.parts.push(`{${body}}`);
    return `\u0000${f.nonce}:${f.parts.length - 1}`;
  }
}

/** JSON text of `value`, with every OrderedMap written in its own order. */
export function toJsonText(value: unknown): string {
  const outer = frame;
  const f: Frame = { nonce: `${PREFIX}:${serial++}`, parts: [] };
  frame = f;
  try {
    const text = JSON.stringify(value) ?? 'null';
    if (f.parts.length === 0) return text;
    const own = f.nonce.slice(PREFIX.length + 1);
    const expand = (s: string): string =>
      s.replace(TOKEN, (m, frameNo: string, i: string) => (frameNo === own ? expand(f.parts[Number(i)]!) : m));
    return expand(text);
  } finally {
    frame = outer;
  }
}

/** Keys a JS object would move to the front (array-index-like). */
const INDEX_KEY = /^(0|[1-9][0-9]{0,9})$/;

function hasIndexKey(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(hasIndexKey);
  if (v === null || typeof v !== 'object') return false;
  for (const [k, x] of Object.entries(v)) if (INDEX_KEY.test(k) || hasIndexKey(x)) return true;
  return false;
}

/**
 * JSON.parse that keeps the text's key order where a JS object would lose it: an object with
 * an index-like key ("10", "2") becomes an OrderedMap; every other value is as JSON.parse
 * gives it. Throws SyntaxError on invalid JSON, like JSON.parse.
 */
export function parseOrderedJson(text: string): unknown {
  const plain: unknown = JSON.parse(text);
  if (!hasIndexKey(plain)) return plain;
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
      if (entries.some(([k]) => INDEX_KEY.test(k))) return new OrderedMap(entries);
      const o: Record<string, unknown> = {};
      for (const [k, v] of entries) if (k !== '__proto__') o[k] = v;
      return o;
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
