/**
 * `mcp --http --auth key` on a remote API: the API key of the HTTP request being answered, for
 * the backend's calls upstream of that request alone. The key lives in the request's async
 * context only, in a holder emptied when the request's response ends: work that goes on after it
 * (a search index's sync) finds no key and is refused, so nothing of the key is kept past its
 * request. On Node 20 an AsyncLocalStorage in use turns on promise hooks for the whole process,
 * which costs a tool call about a seventh more CPU; so the built-in service does without it:
 * each owner's context acts by the hash of the key it was made for (LocalBackend.byKeyHash),
 * checked at each call, and is reached only by requests carrying that key.
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
