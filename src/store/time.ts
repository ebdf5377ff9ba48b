/** Timestamps as the API writes them: ISO 8601, seconds, `+00:00`. */

/** Format a time the API's way: `2026-01-01T00:00:00+00:00`. */
export function isoTime(d: Date = new Date()): string {
  return d.toISOString().slice(0, 19) + '+00:00';
}

/** Parse any ISO 8601 text into the API's form; throws on a bad time. */
export function normalizeTime(text: string): string {
  const d = new Date(text);
  if (Number.isNaN(d.getTime())) throw new Error(`not an ISO 8601 time: ${text}`);
  return isoTime(d);
}

/** Unix seconds of an API timestamp. */
export function unixSeconds(iso: string): number {
  return Math.floor(new Date(iso).getTime() / 1000);
}
