/**
 * What the MCP layer needs of a contact search index, whichever backend it serves: the local
 * service's own index (in its database) or a copy synced from a remote API. The CLI passes an
 * implementation in; this layer knows only these shapes.
 */

/** Which field a contact was found by. */
export type MatchKind = 'id' | 'messenger_id' | 'phone' | 'email' | 'username' | 'name';

/** A contact account, compact. `amount` in minor units. */
export interface CompactAccount {
  id: number;
  currency: string;
  amount: number;
  blocked: boolean;
}

/** A contact as an index holds it. */
interface IndexedContact {
  id: number;
  bot_id: number;
  name: string;
  messenger: string;
  phone: string | null;
  email: string | null;
  telegram_username: string | null;
  max_username: string | null;
  tags: string[];
}

export interface ContactHit extends IndexedContact {
  matched: MatchKind;
  /** Present when the index has them (local); a remote index leaves them to be read live. */
  accounts?: CompactAccount[];
}

/** How fresh and complete the index is, as every answer says (`meta.index`). */
export interface IndexInfo {
  /** `database`: the service's own data, always current. `remote`: a local copy synced from the API. */
  source: 'database' | 'remote';
  /** Contacts in the index (of the bots searched, for `database`). */
  contacts: number;
  /** The index holds every contact that existed at this time (null: never synced in full). */
  as_of: string | null;
  /** A sync is under way (the answer may miss contacts it has not reached). */
  syncing: boolean;
  /** Whether one full pass ever finished. */
  complete: boolean;
  /** Sync progress, e.g. "12000 of 20000". */
  progress?: string;
  /** Why the last sync stopped early. */
  error?: string;
}

export interface FindOptions {
  /** Only these bots; undefined: every bot of the owner. */
  botIds?: readonly number[];
  limit: number;
  /** Remote: sync the index in full before answering. */
  refresh?: boolean;
  /** Remote: false to answer from the index as it is, without waiting for a sync (completions). */
  wait?: boolean;
  signal?: AbortSignal;
  /** Sync progress, one call per page. */
  progress?: (done: number, total: number | undefined, message: string) => void;
}

export interface FindResult {
  hits: ContactHit[];
  total: number;
  /** The count stopped early: there are at least `total`. */
  capped?: boolean;
  index: IndexInfo;
}

/**
 * Whether an API status refuses the key or its owner as such: 401 (a key missing, wrong or
 * regenerated), 402 (pro_required), 403 (a blocked owner; also a contact of another owner's bot,
 * which only a getMe tells apart).
 */
export function refusesOwner(status: number): boolean {
  return status === 401 || status === 402 || status === 403;
}

/** The API refused what the index needed (a bad key, a blocked owner): its status and body. */
export class IndexRefused extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    /** The refusal's headers (Retry-After of a 429). */
    readonly headers: Record<string, string> = {},
  ) {
    super(`the API answered ${status}`);
  }
}

/** A contact search index: the owner's contacts that match a query, best first. */
export interface ContactIndex {
  find(ownerId: number, query: string, opts: FindOptions): Promise<FindResult>;
  /** Contacts an answer of the API showed (a synced copy keeps them at once). */
  observe?(ownerId: number, contacts: Array<Record<string, unknown>>): void;
  close?(): Promise<void> | void;
}

/** Most tags a compact contact shows (the rest are counted in `tags_more`). */
const MAX_TAGS = 20;

export interface CompactContact {
  id: number;
  bot_id: number;
  name: string;
  messenger: string;
  usernames: string[];
  phone: string | null;
  email: string | null;
  tags: string[];
  tags_more?: number;
  matched: MatchKind;
  accounts?: CompactAccount[];
}

/** The compact contact findContacts answers with. */
export function compactContact(hit: ContactHit): CompactContact {
  const usernames = [hit.telegram_username, hit.max_username].filter((u): u is string => !!u).map((u) => `@${u.replace(/^@/, '')}`);
  return {
    id: hit.id,
    bot_id: hit.bot_id,
    name: hit.name,
    messenger: hit.messenger,
    usernames,
    phone: hit.phone,
    email: hit.email,
    tags: hit.tags.slice(0, MAX_TAGS),
    ...(hit.tags.length > MAX_TAGS ? { tags_more: hit.tags.length - MAX_TAGS } : {}),
    matched: hit.matched,
    ...(hit.accounts ? { accounts: hit.accounts } : {}),
  };
}
