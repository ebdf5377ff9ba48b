/**
 * The contact search index of `SEARCH_SCHEMA` (migrations 6 and 9) as lookups, each an index seek:
 * the service's database and the remote index file both have it. Which lookups a query is
 * tried as, and in what order, is the MCP server's (state/contact-query.ts), over these
 * lookups or PostgreSQL's (pg/search.ts).
 */
import type { AccountRow } from './contact-accounts.js';
import type { ContactRow } from './contacts.js';
import type { Db } from './db.js';
import { ftsExpression, type WordMatch } from './search-text.js';

const IN_JSON = 'IN (SELECT value FROM json_each(?))';

/** How a query's words are tried, best first: whole words of the name, whole words anywhere, each word as a prefix. */
export const WORD_MATCHES: readonly WordMatch[] = ['name', 'words', 'prefixes'];

export interface WordMatches {
  /** Each class's contacts, in the order of WORD_MATCHES. */
  classes: { id: number }[][];
  /** Contacts matching as prefixes, counted up to the cap. */
  total: number;
}

/** A found contact as a search's answer shows it. */
export type HitRow = Pick<ContactRow, 'id' | 'bot_id' | 'name' | 'messenger' | 'phone' | 'email' | 'telegram_username' | 'max_username'>;

export interface HitDetails {
  rows: HitRow[];
  tags: Map<number, string[]>;
  accounts: Map<number, Pick<AccountRow, 'id' | 'currency' | 'amount' | 'blocked_at'>[]>;
  /** Contacts the bots list. */
  listed: number;
}

/** One identifier lookup: a listed contact by id, an exact key, or the keys from `from` (inclusive) to `to` (exclusive). */
export type Lookup = { id: number } | { key: string } | { from: string; to: string };

/**
 * The caller's own work to run while a search's first statement is under way (the owner's
 * checks, on the store's connection): where a round trip costs (PostgreSQL), `lookups` and
 * `lookupsAndWords` call it once, after the statement is sent and before its answer is read;
 * when it throws, so does the call. An index that sends nothing ahead ignores it, and
 * `ContactSearch` runs it once the search is done. A call that fails before it sends its
 * statement (a query PostgreSQL cannot hold) does not run it: the caller sees that.
 */
export type Meanwhile = () => void;

/**
 * The lookups a search is made of, each answered from the index: SQLite's (FTS5 and the key
 * table, below) or PostgreSQL's (pg/search.ts). Ids come back in the order each query gives.
 */
export interface SearchIndex {
  /**
   * Each lookup's contacts in these bots, at most `limit` each, in the lookups' order: by id
   * for an id or a key, by key then id for a range. All of them at once (one round trip on
   * PostgreSQL).
   */
  lookups(lookups: readonly Lookup[], bots: readonly number[], limit: number, meanwhile?: Meanwhile): { id: number }[][];
  /**
   * A query's words matched in each class of WORD_MATCHES in turn: of the first `candidates`
   * contacts (by id) whose words match, the `want` with the shortest names; and how many
   * contacts match as prefixes (the widest class), counted up to `cap`. A class may come back
   * empty once the classes before it hold `want` contacts between them (it is not read then).
   */
  wordMatches(words: readonly string[], bots: readonly number[], candidates: number, want: number, cap: number): WordMatches;
  /**
   * What a search's answer shows of the contacts it found, and how many contacts the bots list,
   * in one round trip. Only where a round trip costs (PostgreSQL); elsewhere the store's own
   * reads (rowsByIds, tagsByContact, listByContacts, count) give the same.
   */
  details?(ids: readonly number[], bots: readonly number[]): HitDetails;
  /**
   * `lookups` and `wordMatches` at once, in one round trip, for a query whose words are read
   * whatever its lookups find; with the details of the words' contacts when the lookups found
   * nobody (else the words are read again with more wanted, and their details then). Only where
   * a round trip costs (PostgreSQL).
   */
  lookupsAndWords?(
    lookups: readonly Lookup[],
    words: readonly string[],
    bots: readonly number[],
    n: { limit: number; candidates: number; want: number; cap: number },
    meanwhile?: Meanwhile,
  ): { lookups: { id: number }[][]; words: WordMatches; details: HitDetails };
  /**
   * The ids of an owner's live bots, as the store's `projects.ownerBotIds`, read on the
   * index's own connection: the statement is sent at once and its answer read by calling the
   * function returned, so that the caller's checks on the store's connection run meanwhile.
   * Only where a round trip costs (PostgreSQL).
   */
  ownerBots?(ownerId: number): () => number[];
}

/** The index of SEARCH_SCHEMA in a SQLite database (the service's, or the remote index file). */
export function sqliteSearchIndex(db: Db): SearchIndex {
  const s = {
    byId: db.prepare<[number, string], { id: number }>(
      `SELECT id FROM contacts WHERE id = ? AND bot_id ${IN_JSON} AND preview = 0 AND deleted_at IS NULL`,
    ),
    byKey: db.prepare<[string, string, number], { id: number }>(
      `SELECT contact_id AS id FROM contact_search_keys WHERE key = ? AND bot_id ${IN_JSON} ORDER BY contact_id LIMIT ?`,
    ),
    byKeyRange: db.prepare<[string, string, string, number], { id: number }>(
      `SELECT contact_id AS id FROM contact_search_keys WHERE key >= ? AND key < ? AND bot_id ${IN_JSON}
       ORDER BY key, contact_id LIMIT ?`,
    ),
    words: db.prepare<[string, number, number], { id: number }>(
      `SELECT id FROM contacts WHERE id IN (SELECT rowid FROM contact_words WHERE contact_words MATCH ? LIMIT ?)
       ORDER BY length(name), id LIMIT ?`,
    ),
    countWords: db.prepare<[string, number], { n: number }>(
      'SELECT count(*) AS n FROM (SELECT rowid FROM contact_words WHERE contact_words MATCH ? LIMIT ?)',
    ),
  };
  return {
    lookups: (lookups, bots, limit) => {
      const json = JSON.stringify(bots);
      return lookups.map((l) =>
        'id' in l ? s.byId.all(l.id, json) : 'key' in l ? s.byKey.all(l.key, json, limit) : s.byKeyRange.all(l.from, l.to, json, limit),
      );
    },
    wordMatches: (words, bots, candidates, want, cap) => {
      const seen = new Set<number>();
      const classes = WORD_MATCHES.map((match) => {
        if (seen.size >= want) return [];
        const rows = s.words.all(ftsExpression(words, bots, match), candidates, want);
        for (const r of rows) seen.add(r.id);
        return rows;
      });
      return { classes, total: s.countWords.get(ftsExpression(words, bots, 'prefixes'), cap)!.n };
    },
  };
}
