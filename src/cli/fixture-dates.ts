/**
 * A fixture dated relative to its seeding (`"relative_dates": true`, as the demo is): every
 * `*_at` time of its entries moves forward by the same whole number of days, so that the newest
 * lands within the last day before now, the spacing and the times of day kept. The demo's
 * "who joined last week" then finds contacts whenever it is seeded. Other fixtures are loaded as
 * written.
 */

const DAY_MS = 24 * 60 * 60 * 1000;

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

/** The `*_at` fields of the fixture's entries that hold a time: [entry, key, ms]. */
function times(fixture: Obj): Array<[Obj, string, number]> {
  const found: Array<[Obj, string, number]> = [];
  for (const list of Object.values(fixture)) {
    if (!Array.isArray(list)) continue;
    for (const entry of list) {
      if (!isObj(entry)) continue;
      for (const [key, v] of Object.entries(entry)) {
        if (!key.endsWith('_at') || typeof v !== 'string') continue;
        const ms = Date.parse(v);
        if (Number.isFinite(ms)) found.push([entry, key, ms]);
      }
    }
  }
  return found;
}

/** The fixture as seeded at `now`: moved when it asks for it (a copy), else itself. */
export function relativeDates(fixture: unknown, now: number): unknown {
  if (!isObj(fixture) || fixture.relative_dates !== true) return fixture;
  const copy = structuredClone(fixture);
  const found = times(copy);
  if (found.length === 0) return copy;
  const newest = Math.max(...found.map(([, , ms]) => ms));
  // Whole days, never backwards: a fixture newer than now stays as written.
  const days = Math.max(0, Math.floor((now - newest) / DAY_MS));
  for (const [entry, key, ms] of found) entry[key] = new Date(ms + days * DAY_MS).toISOString().replace(/\.000Z$/, 'Z');
  return copy;
}
