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
  const f: Frame = { nonce: `${PREFIX}${(serial++).toString(36)}`, parts: [] };
  frame = f;
  try {
    const text = JSON.stringify(value) ?? 'null';
    if (f.parts.length === 0) return text;
    const token = new RegExp(`"\\\\u0000${f.nonce}:(\\d+)"`, 'g');
    const expand = (s: string): string => s.replace(token, (_m, i: string) => expand(f.parts[Number(i)]!));
    return expand(text);
  } finally {
    frame = outer;
  }
}
