/**
 * The MCP server's contact search and workspace directory, wired for each backend:
 * - local: the service's own database (its search index, kept by triggers in every contact
 *   write); each call passes the pipeline's owner checks before it answers, so a blocked owner,
 *   a lapsed plan or a rate limit stops a search as it stops any other call (on PostgreSQL the
 *   search's first statement may be under way meanwhile; its answer is used only after them);
 * - remote: a search index file in the data folder per base URL and owner, synced from the API
 *   (`src/mcp/remote/contact-index.ts`), and what getMe, the configuration and earlier answers showed.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { WorkspaceDirectory } from '../mcp/state.js';
import { RemoteDirectory, type RemoteConfig } from '../mcp/remote/directory.js';
import { SyncedContactIndex, type SyncOptions } from '../mcp/remote/contact-index.js';
import { IndexRefused, type ContactHit, type ContactIndex } from '../mcp/contact-search.js';
import type { AdmitOptions, Backend } from '../api/backend.js';
import { fail } from '../api/errors.js';
import { ContactMirror } from '../state/contact-mirror.js';
import { ContactSearch, type SearchResult } from '../state/contact-query.js';
import type { LocalBackend } from '../service/backend.js';
import { unavailableAnswer } from '../service/pipeline.js';
import type { HitDetails } from '../store/search.js';
import { StoreBadText, StoreUnavailable, type StoreApi } from '../store/store-api.js';
import { isoTime } from '../store/time.js';

export interface SearchParts {
  contacts: ContactIndex;
  directory: WorkspaceDirectory;
}

/**
 * The owner may call the API now (key, plan, block, rate limit, as every method checks first),
 * or IndexRefused. Not through getMe: a getMe past its sunset must not switch search off.
 */
function admit(backend: LocalBackend, o?: AdmitOptions): void {
  const res = backend.admitHere(o);
  if (res) throw new IndexRefused(res.status, res.body, res.headers);
}

/**
 * The same part, each of its calls on this thread's own connection: a shared database
 * (PostgreSQL) lost or too slow is refused as the API refuses it (503 with Retry-After), not
 * as a bug (500). Nothing is written here, so nothing was half-done.
 */
function unavailableRefused<T extends object>(part: T): T {
  const out = {} as Record<string, unknown>;
  for (const [name, call] of Object.entries(part) as Array<[string, (...args: unknown[]) => Promise<unknown>]>) {
    out[name] = async (...args: unknown[]) => {
      try {
        return await call(...args);
      } catch (e) {
        if (e instanceof StoreBadText) {
          // A NUL in the query, which PostgreSQL's text cannot hold: bad input, as the API says it.
          const res = fail.invalid('query', 'The query field must not contain the NUL character.').response();
          throw new IndexRefused(res.status, res.body, res.headers);
        }
        if (!(e instanceof StoreUnavailable)) throw e;
        const res = unavailableAnswer(e);
        throw new IndexRefused(res.status, res.body, res.headers);
      }
    };
  }
  return out as T;
}

/**
 * What a search's answer shows of its hits and how many contacts the bots list: given with the
 * search (PostgreSQL, a query of words), else the index's own read (PostgreSQL), else the
 * store's reads.
 */
export function answerDetails(
  store: Pick<StoreApi, 'search' | 'contacts' | 'contactAccounts'>,
  ids: readonly number[],
  bots: readonly number[],
  given?: HitDetails,
): HitDetails {
  return (
    given ??
    store.search.details?.(ids, bots) ?? {
      rows: store.contacts.rowsByIds(ids),
      tags: store.contacts.tagsByContact(ids),
      accounts: store.contactAccounts.listByContacts(ids),
      listed: store.contacts.count(bots),
    }
  );
}

/** Owners whose bots are remembered at most (a search of one more forgets them all). */
const MAX_REMEMBERED = 10_000;

function sameIds(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

/** Search and directory over the service's own database. */
export function localSearch(store: StoreApi, backend: LocalBackend): SearchParts {
  /**
   * PostgreSQL: each owner's bots as their last search read them. The next search runs with
   * them while the owner is checked and the bots read again on the store's connection (the two
   * round trips overlap), and runs again with the bots read when they changed: no answer is
   * ever made of bots the owner no longer has.
   */
  const botsSeen = new Map<number, number[]>();
  const remember = (ownerId: number, bots: number[]) => {
    if (!botsSeen.has(ownerId) && botsSeen.size >= MAX_REMEMBERED) botsSeen.clear();
    botsSeen.set(ownerId, bots);
  };
  const contacts: ContactIndex = {
    async find(ownerId, query, opts) {
      const only = (own: readonly number[]) => (opts.botIds ? own.filter((b) => opts.botIds!.includes(b)) : own);
      const search = new ContactSearch(store.search);
      const seen = store.search.ownerBots ? botsSeen.get(ownerId) : undefined;
      let bots: readonly number[];
      let result: SearchResult;
      if (seen) {
        let own: number[] = [];
        let checked = false;
        /** The owner's checks; refused, their bots are forgotten, so their next search sends no search ahead of them. */
        const check = () => {
          checked = true;
          try {
            admit(backend);
          } catch (e) {
            botsSeen.delete(ownerId);
            throw e;
          }
        };
        try {
          result = search.search(query, only(seen), opts.limit, () => {
            check();
            own = store.projects.ownerBotIds(ownerId);
          });
        } catch (e) {
          // A search that failed before the checks ran (a query PostgreSQL cannot hold): the
          // owner's refusal, if any, is the answer, as it is for every call.
          if (!checked) check();
          throw e;
        }
        remember(ownerId, own);
        bots = only(own);
        if (!sameIds(bots, only(seen))) result = search.search(query, bots, opts.limit);
      } else {
        // PostgreSQL: the owner's bots are read on the search's connection while the owner is
        // checked on the store's, so the two round trips overlap.
        const ownBots = store.search.ownerBots?.(ownerId);
        admit(backend);
        const own = ownBots ? ownBots() : store.projects.ownerBotIds(ownerId);
        if (ownBots) remember(ownerId, own);
        bots = only(own);
        result = search.search(query, bots, opts.limit);
      }
      const { hits, total, capped, details } = result;
      const ids = hits.map((h) => h.id);
      const d = answerDetails(store, ids, bots, details);
      const rows = new Map(d.rows.map((r) => [r.id, r]));
      const { tags, accounts } = d;
      const found: ContactHit[] = hits.map((h) => {
        const c = rows.get(h.id)!;
        return {
          id: c.id,
          bot_id: c.bot_id,
          name: c.name,
          messenger: c.messenger,
          phone: c.phone,
          email: c.email,
          telegram_username: c.telegram_username,
          max_username: c.max_username,
          tags: tags.get(c.id) ?? [],
          matched: h.matched,
          accounts: (accounts.get(c.id) ?? []).map((a) => ({
            id: a.id,
            currency: a.currency,
            amount: a.amount,
            blocked: a.blocked_at !== null,
          })),
        };
      });
      return {
        hits: found,
        total,
        capped,
        index: { source: 'database', contacts: d.listed, as_of: isoTime(), syncing: false, complete: true },
      };
    },
  };
  const directory: WorkspaceDirectory = {
    async describe(ownerId) {
      admit(backend);
      const o = store.owners.get(ownerId)!;
      const projects = store.directory.projects(ownerId);
      const notes = projects.some((p) => p.role === 'member')
        ? [
            'Projects with role "member" are ones you were invited to: the API cannot reach them or their bots, so their bots are not listed.',
          ]
        : [];
      return {
        owner: { id: o.id, name: o.name, email: o.email, plan: o.plan },
        projects,
        bots: store.directory.bots(ownerId),
        notes,
      };
    },
    async botChoices(ownerId) {
      // Asked as a person types: the owner checked, no request counted.
      admit(backend, { counted: false });
      return store.directory.bots(ownerId).map((b) => ({ id: b.id, name: b.name }));
    },
    async onlyBot(ownerId) {
      const bots = store.projects.ownerBotIds(ownerId);
      return bots.length === 1 ? bots[0] : undefined;
    },
    async currencies(ownerId) {
      admit(backend, { counted: false });
      return store.directory.currencies(ownerId);
    },
  };
  return { contacts: unavailableRefused(contacts), directory: unavailableRefused(directory) };
}

/** The search index file of one remote API and owner, in the data folder. */
function remoteIndexFile(dataDir: string, baseUrl: string, ownerId: number): string {
  const site = createHash('sha256').update(baseUrl.replace(/\/+$/, '')).digest('hex').slice(0, 16);
  return join(dataDir, 'search', `contacts-${site}-${ownerId}.db`);
}

/** Search and directory over a remote API. */
export function remoteSearch(
  backend: Backend,
  dataDir: string,
  config: RemoteConfig & { baseUrl: string },
  sync: SyncOptions = {},
): SearchParts {
  const contacts = new SyncedContactIndex(
    backend,
    (ownerId) => ContactMirror.open(remoteIndexFile(dataDir, config.baseUrl, ownerId)),
    sync,
  );
  return { contacts, directory: new RemoteDirectory(backend, contacts, config) };
}
