/**
 * An export file read in parts, each within the result budget: a JSONL or CSV export of a big
 * bot is megabytes, and a resource read hands all of it to the model at once. The file is
 * indexed once (where each line starts and what it costs as JSON text), then a part is the
 * lines from an offset that fit. A CSV row whose quoted cell holds a line break stays one line.
 * Exports are written once and never change, so the index is kept for the last few files.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';

/** One file's lines: byte offsets (one more than the lines: the end) and JSON-text cost. */
interface LineIndex {
  size: number;
  mtimeMs: number;
  starts: number[];
  costs: number[];
  /** Where the default parts start, by the room they were cut for. */
  parts: Map<number, number[]>;
}

const KEPT = 4;
/** What a read of a part holds beside the lines (a note, the URIs, `_meta`): less than this. */
const PART_OVERHEAD = 1_000;

/** Characters of JSON text a part's lines may take within the result budget. */
export function partRoom(budget: number): number {
  return Math.max(1, budget - PART_OVERHEAD);
}
const cache = new Map<string, LineIndex>();

/**
 * What one byte adds to the length of the text as a JSON string: ASCII that JSON escapes
 * (quote, backslash, control characters) more than 1; a UTF-8 lead byte 1 (2 for a character
 * past U+FFFF, a surrogate pair in JavaScript), continuation bytes 0.
 */
const COST = new Uint8Array(256).map((_, b) => {
  if (b === 0x22 || b === 0x5c) return 2;
  if (b === 0x08 || b === 0x09 || b === 0x0a || b === 0x0c || b === 0x0d) return 2;
  if (b < 0x20) return 6;
  if (b < 0x80) return 1;
  if (b < 0xc0) return 0;
  return b >= 0xf0 ? 2 : 1;
});

function indexOf(path: string, csv: boolean): LineIndex {
  const st = statSync(path);
  const known = cache.get(path);
  if (known && known.size === st.size && known.mtimeMs === st.mtimeMs) return known;
  const starts = [0];
  const costs: number[] = [];
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    let pos = 0;
    let cost = 0;
    let quoted = false;
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, pos);
      if (n === 0) break;
      for (let i = 0; i < n; i++) {
        const b = buf[i]!;
        cost += COST[b]!;
        if (csv && b === 0x22) quoted = !quoted;
        else if (b === 0x0a && !quoted) {
          starts.push(pos + i + 1);
          costs.push(cost);
          cost = 0;
        }
      }
      pos += n;
    }
    if (pos > starts[starts.length - 1]!) {
      starts.push(pos);
      costs.push(cost);
    }
  } finally {
    closeSync(fd);
  }
  const index = { size: st.size, mtimeMs: st.mtimeMs, starts, costs, parts: new Map<number, number[]>() };
  cache.delete(path);
  cache.set(path, index);
  while (cache.size > KEPT) cache.delete(cache.keys().next().value!);
  return index;
}

/** The lines from `offset` that fit in `room` characters of JSON text (at least one), at most `limit`. */
function partEnd(ix: LineIndex, offset: number, room: number, limit: number): number {
  const total = ix.costs.length;
  let end = offset;
  let used = 0;
  while (end < total && end - offset < limit && (end === offset || used + ix.costs[end]! <= room)) used += ix.costs[end++]!;
  return end;
}

export interface Part {
  /** The lines, each with its line break. */
  text: string;
  /** Index of the first line (from 0) and how many lines this part holds. */
  offset: number;
  lines: number;
  /** Lines in the file, and parts when read from the start at the default size. */
  total: number;
  parts: number;
  /** Which of those parts this one is (from 1), when it starts where one does. */
  part?: number;
  /** Set when a single line was over the room and is shown cut to this many characters. */
  cutAt?: number;
}

/**
 * Lines `offset` .. of the file, as many as fit in `room` characters of JSON text (and no more
 * than `limit`). A line longer than the room alone is the whole part, cut to fit.
 */
export function readPart(path: string, o: { csv: boolean; offset: number; limit?: number; room: number }): Part {
  const ix = indexOf(path, o.csv);
  const total = ix.costs.length;
  const offset = Math.min(o.offset, total);
  const end = partEnd(ix, offset, o.room, o.limit ?? Number.MAX_SAFE_INTEGER);
  // The default parts: from line 0, as many lines as fit, one after another.
  let partStarts = ix.parts.get(o.room);
  if (!partStarts) {
    partStarts = [];
    for (let at = 0; at < total; at = partEnd(ix, at, o.room, Number.MAX_SAFE_INTEGER)) partStarts.push(at);
    ix.parts.set(o.room, partStarts);
  }
  const parts = partStarts.length;
  const at = partStarts.indexOf(offset);
  const part = at >= 0 ? at + 1 : undefined;
  const from = ix.starts[offset]!;
  const length = ix.starts[end]! - from;
  let text = '';
  if (length > 0) {
    const buf = Buffer.allocUnsafe(length);
    const fd = openSync(path, 'r');
    try {
      readSync(fd, buf, 0, length, from);
    } finally {
      closeSync(fd);
    }
    text = buf.toString('utf8');
  }
  let cutAt: number | undefined;
  if (end - offset === 1 && ix.costs[offset]! > o.room) {
    // One line over the budget by itself: its start, so the part stays within the budget.
    let keep = Math.max(0, o.room - 8);
    while (keep > 0 && JSON.stringify(text.slice(0, keep)).length - 2 > o.room - 8) keep = Math.floor(keep * 0.9);
    text = `${text.slice(0, keep)}…\n`;
    cutAt = keep;
  }
  return {
    text,
    offset,
    lines: end - offset,
    total,
    parts,
    ...(part !== undefined ? { part } : {}),
    ...(cutAt !== undefined ? { cutAt } : {}),
  };
}
