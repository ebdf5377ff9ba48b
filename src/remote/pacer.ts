import { retryAfterSeconds } from '../common/retry.js';

/**
 * Client-side pacing: at most `limit` requests in any `windowMs`, counted at send time. Any
 * minute of the service's fixed window then holds at most `limit` of ours; the margin below
 * the service's 120 absorbs latency jitter.
 *
 * The service's answers correct it (`observe`): its X-RateLimit-Limit lowers the pace to the
 * same share of a lower limit, and its X-RateLimit-Remaining shows requests this pacer never
 * sent (another process on the same key, or this server before a restart): they are counted
 * as sent at the moment of the answer, so they hold a slot until the service's window has
 * surely ended (it began before the answer and lasts `windowMs`). A 429 holds every request
 * until its Retry-After.
 */
export class Pacer {
  private readonly sent: number[] = [];
  private chain: Promise<void> = Promise.resolve();
  /** The service's own limit, once an answer named it. */
  private upstreamLimit: number | undefined;
  /** No request before this time (a 429's Retry-After). */
  private blockedUntil = 0;

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** The pace: `limit`, or the same share of a lower limit the service named. */
  private pace(): number {
    const u = this.upstreamLimit;
    return u === undefined ? this.limit : Math.min(this.limit, Math.max(1, Math.floor((u * 11) / 12)));
  }

  private prune(t: number): void {
    while (this.sent.length > 0 && t - this.sent[0]! >= this.windowMs) this.sent.shift();
  }

  /** Wait for a slot (in order of asking); `onWait` hears of any wait. */
  take(signal?: AbortSignal, onWait?: (ms: number) => void): Promise<void> {
    if (this.limit <= 0) return Promise.resolve();
    const turn = this.chain.then(async () => {
      for (;;) {
        const t = this.now();
        this.prune(t);
        const pace = this.pace();
        if (t >= this.blockedUntil && this.sent.length < pace) {
          this.sent.push(t);
          return;
        }
        const wait = Math.max(this.blockedUntil - t, this.sent.length < pace ? 0 : this.sent[this.sent.length - pace]! + this.windowMs - t);
        onWait?.(wait);
        await this.sleep(wait, signal);
      }
    });
    this.chain = turn.catch(() => undefined);
    return turn;
  }

  /** What an answer of the service said of its window (its headers, names in lower case). */
  observe(status: number, headers: Record<string, string>): void {
    if (this.limit <= 0) return;
    const t = this.now();
    const limit = Number(headers['x-ratelimit-limit']);
    if (Number.isSafeInteger(limit) && limit > 0) this.upstreamLimit = limit;
    if (status === 429) {
      this.blockedUntil = Math.max(this.blockedUntil, t + retryAfterSeconds(headers, t) * 1000);
      return;
    }
    const remaining = Number(headers['x-ratelimit-remaining']);
    if (this.upstreamLimit === undefined || headers['x-ratelimit-remaining'] === undefined || !Number.isSafeInteger(remaining)) return;
    // The service counted `used` in its window; fewer in ours are requests of others.
    const used = this.upstreamLimit - remaining;
    this.prune(t);
    while (this.sent.length < used) this.sent.push(t);
  }
}
