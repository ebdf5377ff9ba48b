/**
 * `mcp --http --auth key`: the API key of the HTTP request being answered, for the backend's
 * calls of that request alone. The key lives in the request's async context only, in a holder
 * emptied when the request's response ends: work that goes on after it (a search index's sync)
 * finds no key and is refused, so nothing of the key is kept past its request.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const current = new AsyncLocalStorage<{ key: string | undefined }>();

/** Runs `fn` with `key` as the request's key until `ended` is called (the response closed). */
export function withRequestKey<T>(key: string, fn: (ended: () => void) => T): T {
  const holder: { key: string | undefined } = { key };
  return current.run(holder, () => fn(() => (holder.key = undefined)));
}

/** The key of the request being answered; undefined outside one, or once it ended. */
export function requestKey(): string | undefined {
  return current.getStore()?.key;
}
