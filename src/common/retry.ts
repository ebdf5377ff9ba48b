/**
 * Waiting out a rate limit, one way for every caller: one abortable `sleep`, Retry-After read
 * one way, and one loop that sends again while the answer is 429. A 429 was not carried out, so
 * sending it again is safe for any method; the remote client and exportContacts share the loop.
 * A neutral module: it imports nothing of ours, and any layer may use it.
 */

/** What the loop reads of an answer (an API answer, `ApiResponse`, is one). */
interface Answer {
  status: number;
  headers: Record<string, string>;
}

/** A header, whatever the case of its name. */
export function headerOf(headers: Record<string, string>, name: string): string | undefined {
  const lower = name.toLowerCase();
  const k = Object.keys(headers).find((h) => h.toLowerCase() === lower);
  return k === undefined ? undefined : headers[k];
}

/** Wait `ms`; rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Seconds until a refused (429) call may be sent again: Retry-After, else the window's reset. */
export function retryAfterSeconds(headers: Record<string, string>, now = Date.now()): number {
  const header = (name: string) => headerOf(headers, name);
  const after = header('retry-after');
  if (after !== undefined) {
    // Delay-seconds or an HTTP date (RFC 9110).
    const seconds = /^\d+$/.test(after.trim()) ? Number(after) : (Date.parse(after) - now) / 1000;
    if (Number.isFinite(seconds)) return Math.max(1, Math.ceil(seconds));
  }
  const reset = Number(header('x-ratelimit-reset'));
  if (Number.isFinite(reset) && reset > 0) return Math.max(1, Math.ceil(reset - now / 1000));
  // The spec's window is a minute.
  return 60;
}

export interface WaitOut429Options {
  /** How many 429s to wait out before the last one is the answer. */
  retries: number;
  /** Longest single wait, in ms (a Retry-After past it is cut to it). */
  maxWaitMs?: number;
  signal?: AbortSignal;
  /** Told of each wait before it starts. */
  onWait?: (ms: number) => void | Promise<void>;
  /** The sleep to use (tests pass one that returns at once). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * Send, and send again while the answer is 429, waiting what Retry-After says each time, at
 * most `retries` times. Rejects if the signal aborts during a wait.
 */
export async function waitOut429<R extends Answer>(send: () => Promise<R>, o: WaitOut429Options): Promise<R> {
  for (let waited = 0; ; waited++) {
    const res = await send();
    if (res.status !== 429 || waited >= o.retries) return res;
    const ms = Math.min(retryAfterSeconds(res.headers) * 1000, o.maxWaitMs ?? Number.POSITIVE_INFINITY);
    await o.onWait?.(ms);
    await (o.sleep ?? sleep)(ms, o.signal);
  }
}
