/**
 * Client-side pacing: at most `limit` requests in any `windowMs`, counted at send time. Any
 * minute of the service's fixed window then holds at most `limit` of ours; the margin below
 * the service's 120 absorbs latency jitter.
 */
export class Pacer {
  private readonly sent: number[] = [];
  private chain: Promise<void> = Promise.resolve();

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** Wait for a slot (in order of asking); `onWait` hears of any wait. */
  take(signal?: AbortSignal, onWait?: (ms: number) => void): Promise<void> {
    if (this.limit <= 0) return Promise.resolve();
    const turn = this.chain.then(async () => {
      for (;;) {
        const t = this.now();
        while (this.sent.length > 0 && t - this.sent[0]! >= this.windowMs) this.sent.shift();
        if (this.sent.length < this.limit) {
          this.sent.push(t);
          return;
        }
        const wait = this.sent[0]! + this.windowMs - t;
        onWait?.(wait);
        await this.sleep(wait, signal);
      }
    });
    this.chain = turn.catch(() => undefined);
    return turn;
  }
}
