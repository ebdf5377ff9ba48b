/**
 * Opening a remote Workspace API as the MCP server's backend (`--remote`, WORKSPACE_BASE_URL):
 * its base URL checked for form, its key with getMe (`openRemote`), or under `--auth key` each
 * request's own key (`openRemoteByKey`); the search index files and the audit trail in the data
 * folder. The built-in service's opening, and what both give the server, are mcp-backend.ts's.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { log } from '../common/log.js';
import type { KeyOwner } from '../mcp/auth/callers.js';
import { requestKey, withRequestKey } from '../mcp/auth/request-key.js';
import { SeenIds } from '../mcp/seen.js';
import type { RemoteBackend } from '../remote/client.js';
import { UsageError } from './args.js';
import { dataDirFor, type BackendSetup, type Configured, type Wired } from './mcp-backend.js';
import { makeDataDir } from './open.js';
import type { SearchParts } from './search-wiring.js';
import { StartError } from './start-error.js';

/** The remote mode's audit trail, in its data folder. */
const AUDIT_FILE = 'audit.jsonl';

/** The client of a remote Workspace API (`src/remote/`). */
async function createRemoteBackend(baseUrl: string, apiKey: string | (() => string | undefined)): Promise<RemoteBackend> {
  // Loaded only for --remote: undici is a fair part of the local server's cold start.
  const { RemoteBackend } = await import('../remote/client.js');
  try {
    return new RemoteBackend({ baseUrl, apiKey });
  } catch (e) {
    throw new UsageError(`--remote ${baseUrl}: ${(e as Error).message}`);
  }
}

/**
 * The remote base URL, checked for form before anything is sent: http(s), ending in `/v1`
 * (`https://host/api/v1`). A URL without it gets the one to use instead.
 */
function remoteBaseUrl(raw: string, source: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new StartError(`${source} ${raw} is not a URL: give the API's base URL, e.g. https://host/api/v1`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new StartError(`${source} ${raw} is not an http(s) URL: give the API's base URL, e.g. https://host/api/v1`);
  const path = url.pathname.replace(/\/+$/, '');
  if (/\/v1$/.test(path)) return `${url.origin}${path}`;
  // A method URL (…/api/v1/getMe) names its base; otherwise add what is missing.
  const base = /^(.*\/v1)\/[^/]+$/.exec(path)?.[1] ?? (path.endsWith('/api') ? `${path}/v1` : `${path}/api/v1`);
  throw new StartError(`${source} ${raw} is not the API's base URL, which ends in /api/v1: use ${url.origin}${base}`);
}

/**
 * `--auth key` on a remote API: each call with the key of the request it serves; the owner
 * learnt from getMe (switched off, it cannot tell who calls: 503); each owner's own search
 * index and directory.
 */
async function openRemoteByKey(baseUrl: string, configured: Configured): Promise<BackendSetup> {
  const dataDir = dataDirFor(undefined);
  const backend = await createRemoteBackend(baseUrl, requestKey);
  if (!process.env.WORKSPACE_DATA_DIR) makeDataDir(dataDir);
  const [{ remoteSearch }, { JsonlAuditTrail }] = await Promise.all([import('./search-wiring.js'), import('../mcp/money/audit.js')]);
  // The search of wire() is no one's: each owner has their own (searchOf).
  const wired: Wired = {
    backend,
    audit: new JsonlAuditTrail(join(dataDir, AUDIT_FILE)),
    ...remoteSearch(backend, dataDir, { baseUrl, seen: new SeenIds() }),
  };
  const searches = new Set<SearchParts>();
  /** The owner of the key in scope, by getMe upstream. */
  const remoteOwner = async (): Promise<KeyOwner> => {
    const r = await backend.call('getMe', {});
    const body = r.body as { message?: unknown; data?: { id?: unknown } } | undefined;
    if (r.status === 200 && typeof body?.data?.id === 'number' && body.data.id > 0) return { id: body.data.id };
    if (r.status === 410) return { status: 503, message: 'getMe is switched off on this API, and --auth key learns from it who calls' };
    return {
      status: r.status === 200 ? 502 : r.status,
      message: typeof body?.message === 'string' ? body.message : `status ${r.status}`,
    };
  };
  let closed = false;
  return {
    scope: `remote ${baseUrl}`,
    dataDir,
    wire: () => Promise.resolve(wired),
    // No key to check getMe with: ready once the URL answers at all.
    ready: () => firstAnswer(baseUrl, () => closed),
    keyed: {
      within: withRequestKey,
      owner: (key) => withRequestKey(key, (ended) => remoteOwner().finally(ended)),
      scopeOf: (ownerId) => `remote ${baseUrl} owner ${ownerId}`,
      searchOf(ownerId) {
        // Each owner's own ids seen: one person's answers never show in another's getWorkspace.
        const seen = new SeenIds();
        const search = remoteSearch(backend, dataDir, { baseUrl, ...configured, seen });
        searches.add(search);
        return {
          ...search,
          // The same ids for the owner's context (which records them) and directory (which shows them).
          seen,
          async close() {
            searches.delete(search);
            await search.contacts.close?.();
          },
        };
      },
    },
    async close() {
      closed = true;
      for (const s of searches) await s.contacts.close?.();
      await wired.contacts.close?.();
      await backend.close();
    },
    banner: { remote: baseUrl },
  };
}

/**
 * `--auth key`'s first check of a remote API: getMe sent with no key until anything answers over
 * HTTP (a 401 too: the URL is up), every 2 s meanwhile (once `closed()`, no more), each wait
 * `unref`'d: a server that stops is not held by it.
 */
async function firstAnswer(baseUrl: string, closed: () => boolean): Promise<void> {
  for (let tries = 1; !closed(); tries++) {
    try {
      const r = await fetch(`${baseUrl}/getMe`, { headers: { Accept: 'application/json' }, signal: AbortSignal.timeout(10_000) });
      await r.body?.cancel();
      log.info({ status: r.status }, 'the remote API answers: ready');
      return;
    } catch (e) {
      if (tries === 1) log.warn({ err: e }, `the remote API ${baseUrl} does not answer yet: not ready until it does`);
    }
    await new Promise((r) => setTimeout(r, 2000).unref());
  }
}

/** A remote Workspace API at `raw` (`--remote` or WORKSPACE_BASE_URL, named by `source`): its key checked with getMe first. */
export async function openRemote(raw: string, source: string, configured: Configured, seen: SeenIds, keyed = false): Promise<BackendSetup> {
  const baseUrl = remoteBaseUrl(raw, source);
  if (keyed) return openRemoteByKey(baseUrl, configured);
  const apiKey = process.env.WORKSPACE_API_KEY;
  if (!apiKey)
    throw new StartError(
      `--remote needs the API key in WORKSPACE_API_KEY${apiKey === '' ? ' (it is set but empty)' : ''}: set it to your key of ${baseUrl}`,
    );
  const dataDir = dataDirFor(undefined);
  const backend = await createRemoteBackend(baseUrl, apiKey);
  const { checkRemote } = await import('../remote/client.js');
  // A key that fails getMe (401, 402, 403), an unreachable URL or another kind of server is a
  // start-up error, found before the state file is made.
  let me;
  try {
    me = await checkRemote(backend, baseUrl);
  } catch (e) {
    await backend.close();
    throw new StartError((e as Error).message);
  }
  if (!process.env.WORKSPACE_DATA_DIR) makeDataDir(dataDir);
  const [{ remoteSearch }, { JsonlAuditTrail }] = await Promise.all([import('./search-wiring.js'), import('../mcp/money/audit.js')]);
  const search = remoteSearch(backend, dataDir, { baseUrl, ...configured, seen });
  const wired: Wired = { backend, audit: new JsonlAuditTrail(join(dataDir, AUDIT_FILE)), ...search };
  return {
    // By the key, not by getMe's owner: getMe may be switched off (then it answers 410).
    scope: `remote ${baseUrl} key ${createHash('sha256').update(apiKey).digest('hex')}`,
    ownerId: me.id || undefined,
    dataDir,
    wire: () => Promise.resolve(wired),
    async close() {
      await search.contacts.close?.();
      await backend.close();
    },
    banner: {
      remote: baseUrl,
      owner: me.id
        ? {
            id: me.id,
            name: me.name,
            via: 'WORKSPACE_API_KEY',
            ...(configured.botId !== undefined ? { defaultBot: configured.botId } : {}),
          }
        : undefined,
    },
  };
}
