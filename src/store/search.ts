/**
 * The contact search index of `SEARCH_SCHEMA` (migrations 6 and 9) as lookups, each an index seek:
 * the service's database and the remote index file both have it. Which lookups a query is
 * tried as, and in what order, is the MCP server's (state/contact-query.ts), over these
 * lookups or PostgreSQL's (pg/search.ts).
 */
import type { Db } from './db.js';
import { ftsExpression, type WordMatch } from './search-text.js';

const IN_JSON = 'IN (SELECT value FROM json_each(?))';

/**
 * The lookups a search is made of, each answered from the index: SQLite's (FTS5 and the key
 * table, below) or PostgreSQL's (pg/search.ts). Ids come back in the order each query gives.
 */
export interface SearchIndex {
  /** The contact with this id, if it is listed in one of the bots. */
  byId(id: number, bots: readonly number[]): { id: number }[];
  /** Contacts with this exact key, by id, at most `limit`. */
  byKey(key: string, bots: readonly number[], limit: number): { id: number }[];
  /** Contacts with a key from `lo` (inclusive) to `hi` (exclusive), by key then id. */
  byKeyRange(lo: string, hi: string, bots: readonly number[], limit: number): { id: number }[];
  /** Of the first `candidates` contacts (by id) whose words match, the `want` with the shortest names. */
  words(words: readonly string[], bots: readonly number[], match: WordMatch, candidates: number, want: number): { id: number }[];
  /** How many contacts' words match, counted up to `cap`. */
  countWords(words: readonly string[], bots: readonly number[], match: WordMatch, cap: number): number;
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
    byId: (id, bots) => s.byId.all(id, JSON.stringify(bots)),
    byKey: (key, bots, limit) => s.byKey.all(key, JSON.stringify(bots), limit),
    byKeyRange: (lo, hi, bots, limit) => s.byKeyRange.all(lo, hi, JSON.stringify(bots), limit),
    words: (words, bots, match, candidates, want) => s.words.all(ftsExpression(words, bots, match), candidates, want),
    countWords: (words, bots, match, cap) => s.countWords.get(ftsExpression(words, bots, match), cap)!.n,
  };
}
