/**
 * Contact search over an index of `SEARCH_SCHEMA` (store/search.ts: the service's database,
 * SQLite's or PostgreSQL's, and the remote index file all have it), for findContacts.
 *
 * A query is tried as every identifier it could be, each an index seek: a contact id, a
 * messenger id, a phone (whole, or a suffix of 7+ digits: a prefix range over reversed
 * digits), an email, a username. Then as words: whole words of the name, then whole words of the
 * name or a handle, then each word as a prefix; within each, shorter names first (more of the
 * name matched). Exact identifiers come first, then names. Only contacts of the given bots are
 * ever read.
 *
 * No bm25: ranking every match costs in proportion to the matches (a first name shared by 30 000
 * contacts of a million took 100 ms and more), while these classes read at most CANDIDATES
 * matches each, in rowid order, which FTS5 gives without sorting.
 */
import type { MatchKind } from '../mcp/contact-search.js';
import type { HitDetails, Lookup, Meanwhile, SearchIndex, WordMatches } from '../store/search.js';
import { MIN_PHONE_DIGITS, parseQuery, phoneKey } from '../store/search-text.js';

interface SearchHit {
  id: number;
  matched: MatchKind;
}

export interface SearchResult {
  /** Best first, at most `limit`. */
  hits: SearchHit[];
  /** How many contacts match in all, counted up to TOTAL_CAP. */
  total: number;
  /** There may be more than `total` (the count stopped at TOTAL_CAP). */
  capped: boolean;
  /** What the answer shows of every hit, when the index gave it with the matches (`lookupsAndWords`). */
  details?: HitDetails;
}

/** Matches are counted up to this many: a count past it costs more than it tells. */
const TOTAL_CAP = 1000;
/** Matches of each class read to pick the best of (shortest names). */
const CANDIDATES = 200;
/** Phone numbers without a country code are at least this long ("9165551234"). */
const NATIONAL_DIGITS = 10;

/** Contacts whose phone ends in the digits `rev` reverses: one range of the key index. */
function phoneSuffix(rev: string): Lookup {
  // Keys are `p:` and digits; ':' sorts right after '9', so this range is every key starting with `p:<rev>`.
  return { from: `p:${rev}`, to: `p:${rev}:` };
}

/** A query over an index's lookups: the contacts that match, best first. */
export class ContactSearch {
  /** Over the lookups of an index: SQLite's (`sqliteSearchIndex`) or PostgreSQL's. */
  constructor(private readonly s: SearchIndex) {}

  /**
   * Contacts of `botIds` that match `query`, best first. `meanwhile` (the caller's checks) runs
   * once before the answer: while the first statement is under way where the index can (see
   * `Meanwhile`), else once the search is done.
   */
  search(query: string, botIds: readonly number[], limit: number, meanwhile?: Meanwhile): SearchResult {
    let ran = meanwhile === undefined;
    const once = () => {
      if (ran) return;
      ran = true;
      meanwhile!();
    };
    const result = this.find(query, botIds, limit, meanwhile && once);
    once();
    return result;
  }

  private find(query: string, botIds: readonly number[], limit: number, meanwhile: Meanwhile | undefined): SearchResult {
    const q = parseQuery(query);
    if (botIds.length === 0 || limit <= 0 || q.text === '') return { hits: [], total: 0, capped: false };
    const bots = botIds;
    const found = new Map<number, MatchKind>();
    const add = (rows: { id: number }[], kind: MatchKind) => {
      for (const r of rows) if (!found.has(r.id)) found.set(r.id, kind);
    };
    // Every identifier the query could be, looked up at once; their contacts are taken in this order.
    const lookups: Array<[Lookup, MatchKind]> = [];
    if (q.number !== undefined && Number.isSafeInteger(Number(q.number))) lookups.push([{ id: Number(q.number) }, 'id']);
    if (q.number !== undefined) lookups.push([{ key: `i:${q.number}` }, 'messenger_id']);
    if (q.text !== q.number) lookups.push([{ key: `i:${q.text}` }, 'messenger_id']); // Viber ids are any text
    // The phone suffix's lookup, then the national form's, taken only when the suffix found nobody new.
    let suffix = -1;
    let national = -1;
    if (q.digits !== undefined) {
      const rev = phoneKey(q.digits)!;
      lookups.push([{ key: `p:${rev}` }, 'phone']);
      if (q.digits.length >= MIN_PHONE_DIGITS) {
        suffix = lookups.push([phoneSuffix(rev), 'phone']) - 1;
        // A national form with a trunk prefix ("8 916 …" for "+7 916 …"): its last 10 digits.
        if (q.digits.length > NATIONAL_DIGITS) national = lookups.push([phoneSuffix(rev.slice(0, NATIONAL_DIGITS)), 'phone']) - 1;
      }
    }
    if (q.email !== undefined) lookups.push([{ key: `e:${q.email}` }, 'email']);
    if (q.username !== undefined) lookups.push([{ key: `u:${q.username}` }, 'username']);
    const list = lookups.map(([l]) => l);
    const take = (rows: { id: number }[][]) => {
      let beforeSuffix = 0;
      rows.forEach((rows, i) => {
        if (i === suffix) beforeSuffix = found.size;
        if (i !== national || found.size === beforeSuffix) add(rows, lookups[i]![1]);
      });
    };
    const readWords = q.words.length > 0;
    let matches: WordMatches | undefined;
    let details: HitDetails | undefined;
    if (readWords && !q.identifier && this.s.lookupsAndWords) {
      // Words are read whatever the lookups find: both at once, with what the answer shows.
      const n = { limit: TOTAL_CAP, candidates: CANDIDATES, want: limit, cap: TOTAL_CAP };
      const both = this.s.lookupsAndWords(list, q.words, bots, n, meanwhile);
      take(both.lookups);
      // A lookup found someone (a Viber id that reads as words): more names are wanted, read again.
      if (found.size === 0) ({ words: matches, details } = both);
    } else if (list.length > 0) take(this.s.lookups(list, bots, TOTAL_CAP, meanwhile));

    let nameTotal = 0;
    const names: number[] = [];
    if (readWords && !(q.identifier && found.size > 0)) {
      const want = limit + found.size;
      matches ??= this.s.wordMatches(q.words, botIds, CANDIDATES, want, TOTAL_CAP);
      for (const rows of matches.classes) if (names.length < want) for (const r of rows) if (!names.includes(r.id)) names.push(r.id);
      nameTotal = matches.total;
    }
    const exact = found.size;
    const alsoExact = names.filter((id) => found.has(id)).length;
    for (const id of names) if (!found.has(id)) found.set(id, 'name');
    const hits = [...found].slice(0, limit).map(([id, matched]) => ({ id, matched }));
    const total = exact + nameTotal - alsoExact;
    return { hits, total: Math.min(total, TOTAL_CAP), capped: total >= TOTAL_CAP, details };
  }
}
