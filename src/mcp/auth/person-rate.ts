/**
 * `--person-rate`: how many requests a minute one person may make once who they are is known,
 * so that no one starves the others on a team's server. A sliding window over the current and
 * the last minute, per owner, in this process.
 */

/** Requests per person in the current and the last minute: a sliding window's count. */
export class PersonRate {
  private minute = 0;
  private now = new Map<number, number>();
  private last = new Map<number, number>();
  /** `perMinute`: the bound; 0 or less, no bound. */
  constructor(readonly perMinute: number) {}

  /** Counts a request of `owner`; the seconds to wait when over the bound, else undefined. */
  take(owner: number, at = Date.now()): number | undefined {
    if (this.perMinute <= 0) return undefined;
    // A time of a minute already past (a request that waited) counts in the current one: the window only moves forward.
    const minute = Math.max(Math.floor(at / 60_000), this.minute);
    if (minute !== this.minute) {
      this.last = minute === this.minute + 1 ? this.now : new Map();
      this.now = new Map();
      this.minute = minute;
    }
    const into = minute === Math.floor(at / 60_000) ? (at % 60_000) / 60_000 : 0;
    const count = (this.now.get(owner) ?? 0) + (this.last.get(owner) ?? 0) * (1 - into);
    if (count >= this.perMinute) return Math.max(1, Math.ceil(60 - (at % 60_000) / 1000));
    this.now.set(owner, (this.now.get(owner) ?? 0) + 1);
    return undefined;
  }
}
