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
import type { SearchIndex } from '../store/search.js';
import { MIN_PHONE_DIGITS, parseQuery, phoneKey, type WordMatch } from '../store/search-text.js';

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
}

/** Matches are counted up to this many: a count past it costs more than it tells. */
const TOTAL_CAP = 1000;
/** Matches of each class read to pick the best of (shortest names). */
const CANDIDATES = 200;
const WORD_MATCHES: readonly WordMatch[] = ['name', 'words', 'prefixes'];
/** Phone numbers without a country code are at least this long ("9165551234"). */
const NATIONAL_DIGITS = 10;

/** A query over an index's lookups: the contacts that match, best first. */
export class ContactSearch {
  /** Over the lookups of an index: SQLite's (`sqliteSearchIndex`) or PostgreSQL's. */
  constructor(private readonly s: SearchIndex) {}

  /** Contacts of `botIds` that match `query`, best first. */
  search(query: string, botIds: readonly number[], limit: number): SearchResult {
    const q = parseQuery(query);
    if (botIds.length === 0 || limit <= 0 || q.text === '') return { hits: [], total: 0, capped: false };
    const bots = botIds;
    const found = new Map<number, MatchKind>();
    // Exact identifiers are few; all of them are counted, up to the cap.
    const add = (rows: { id: number }[], kind: MatchKind) => {
      for (const r of rows) if (!found.has(r.id)) found.set(r.id, kind);
    };
    const key = (k: string, kind: MatchKind) => add(this.s.byKey(k, bots, TOTAL_CAP), kind);

    if (q.number !== undefined && Number.isSafeInteger(Number(q.number))) add(this.s.byId(Number(q.number), bots), 'id');
    if (q.number !== undefined) key(`i:${q.number}`, 'messenger_id');
    if (q.text !== q.number) key(`i:${q.text}`, 'messenger_id'); // Viber ids are any text
    if (q.digits !== undefined) {
      const rev = phoneKey(q.digits)!;
      key(`p:${rev}`, 'phone');
      if (q.digits.length >= MIN_PHONE_DIGITS) {
        const before = found.size;
        this.phoneSuffix(rev, bots, add);
        // A national form with a trunk prefix ("8 916 …" for "+7 916 …"): its last 10 digits.
        if (found.size === before && q.digits.length > NATIONAL_DIGITS) this.phoneSuffix(rev.slice(0, NATIONAL_DIGITS), bots, add);
      }
    }
    if (q.email !== undefined) key(`e:${q.email}`, 'email');
    if (q.username !== undefined) key(`u:${q.username}`, 'username');

    let nameTotal = 0;
    const names: number[] = [];
    if (q.words.length > 0 && !(q.identifier && found.size > 0)) {
      const want = limit + found.size;
      for (const match of WORD_MATCHES) {
        if (names.length < want)
          for (const r of this.s.words(q.words, botIds, match, CANDIDATES, want)) if (!names.includes(r.id)) names.push(r.id);
        if (match === 'prefixes') nameTotal = this.s.countWords(q.words, botIds, match, TOTAL_CAP);
      }
    }
    const exact = found.size;
    const alsoExact = names.filter((id) => found.has(id)).length;
    for (const id of names) if (!found.has(id)) found.set(id, 'name');
    const hits = [...found].slice(0, limit).map(([id, matched]) => ({ id, matched }));
    const total = exact + nameTotal - alsoExact;
    return { hits, total: Math.min(total, TOTAL_CAP), capped: total >= TOTAL_CAP };
  }

  /** Contacts whose phone ends in the digits `rev` reverses: one range of the key index. */
  private phoneSuffix(rev: string, bots: readonly number[], add: (rows: { id: number }[], kind: MatchKind) => void): void {
    // Keys are `p:` and digits; ':' sorts right after '9', so this range is every key starting with `p:<rev>`.
    add(this.s.byKeyRange(`p:${rev}`, `p:${rev}:`, bots, TOTAL_CAP), 'phone');
  }
}
