/**
 * The contact search on PostgreSQL (the SQLite part: ../search.ts, whose algorithm runs here
 * over this index). SQLite's triggers call our JavaScript folding; PostgreSQL cannot, so the
 * store writes a contact's index rows itself (`reindex`), in the transaction of every write of
 * a contact (create or update, admin delete, seed), from the same functions: a query and the
 * index fold text the same way on both stores. A word matches a whole token as FTS5's
 * unicode61 tokenizer cuts them (letters, numbers, private use), or with `prefixes` a token's
 * start.
 */
import type { ContactRow } from '../contacts.js';
import type { SearchIndex } from '../search.js';
import { asciiLower, phoneKey, searchWords, type WordMatch } from '../search-text.js';
import type { PgConnection } from './connection.js';

const TOKEN = /[\p{L}\p{N}\p{Co}]+/gu;

function tokens(text: string | null): string[] {
  return text === null ? [] : (text.match(TOKEN) ?? []);
}

/** Every prefix of 2 or more characters of each token (a token is one of its own). */
function prefixes(words: readonly string[]): string[] {
  const out = new Set<string>();
  for (const w of words) {
    const chars = [...w];
    for (let n = 2; n <= chars.length; n++) out.add(chars.slice(0, n).join(''));
  }
  return [...out];
}

/** SQLite's trim(): spaces only. */
const trimSpaces = (s: string) => s.replace(/^ +| +$/g, '');

type Indexed = Pick<
  ContactRow,
  | 'id'
  | 'bot_id'
  | 'name'
  | 'phone'
  | 'email'
  | 'telegram_id'
  | 'telegram_username'
  | 'max_user_id'
  | 'max_username'
  | 'vk_user_id'
  | 'viber_id'
>;

/** The identifier keys of a contact, as SEARCH_SCHEMA's contact_search_key_source makes them. */
function keys(c: Indexed): string[] {
  const out = new Set<string>();
  const phone = phoneKey(c.phone);
  if (phone !== null) out.add(`p:${phone}`);
  if (c.email !== null && trimSpaces(c.email) !== '') out.add(`e:${asciiLower(trimSpaces(c.email))}`);
  for (const u of [c.telegram_username, c.max_username])
    if (u !== null && trimSpaces(u) !== '') out.add(`u:${asciiLower(trimSpaces(u).replace(/^@+/, ''))}`);
  const id = c.telegram_id ?? c.max_user_id ?? c.vk_user_id ?? c.viber_id;
  if (id !== null) out.add(`i:${id}`);
  return [...out];
}

/** Write the index rows of these contacts again from what they hold now (none for one not listed). */
export function reindex(c: PgConnection, ids: readonly number[]): void {
  if (ids.length === 0) return;
  c.query('DELETE FROM contact_words WHERE contact_id = ANY($1::bigint[])', [ids]);
  c.query('DELETE FROM contact_search_keys WHERE contact_id = ANY($1::bigint[])', [ids]);
  const rows = c.query<Indexed>(
    `SELECT id, bot_id, name, phone, email, telegram_id, telegram_username, max_user_id, max_username, vk_user_id, viber_id
     FROM contacts WHERE id = ANY($1::bigint[]) AND preview = 0 AND deleted_at IS NULL`,
    [ids],
  ).rows;
  if (rows.length === 0) return;
  const words = rows.map((r) => {
    const at = r.email === null ? -1 : r.email.indexOf('@');
    const handles = [r.telegram_username, r.max_username, at > 0 ? r.email!.slice(0, at) : null].filter((h) => h !== null).join(' ');
    const name = tokens(searchWords(r.name));
    const all = [...new Set([...name, ...tokens(searchWords(handles))])];
    return { id: r.id, bot: r.bot_id, name: JSON.stringify(name), all: JSON.stringify(all), prefixes: JSON.stringify(prefixes(all)) };
  });
  c.query(
    `INSERT INTO contact_words (contact_id, bot_id, name_words, all_words, prefixes)
     SELECT id, bot, ARRAY(SELECT jsonb_array_elements_text(n)), ARRAY(SELECT jsonb_array_elements_text(a)), ARRAY(SELECT jsonb_array_elements_text(p))
     FROM unnest($1::bigint[], $2::bigint[], $3::jsonb[], $4::jsonb[], $5::jsonb[]) AS w(id, bot, n, a, p)`,
    [words.map((w) => w.id), words.map((w) => w.bot), words.map((w) => w.name), words.map((w) => w.all), words.map((w) => w.prefixes)],
  );
  const k = rows.flatMap((r) => keys(r).map((key) => [key, r.id, r.bot_id] as const));
  if (k.length > 0) {
    c.query('INSERT INTO contact_search_keys (key, contact_id, bot_id) SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[])', [
      k.map((x) => x[0]),
      k.map((x) => x[1]),
      k.map((x) => x[2]),
    ]);
  }
}

/** The word condition of a match class: $2 words wanted whole, $3 words wanted as prefixes (none but for `prefixes`). */
const WORDS: Record<WordMatch, string> = {
  name: 'name_words @> $2::text[] AND prefixes @> $3::text[]',
  words: 'all_words @> $2::text[] AND prefixes @> $3::text[]',
  prefixes: 'all_words @> $2::text[] AND prefixes @> $3::text[]',
};

/** As ftsWord: a word is a prefix when it has 2+ characters and is not a number. */
function split(words: readonly string[], match: WordMatch): [string[], string[]] {
  if (match !== 'prefixes') return [[...words], []];
  const asPrefix = (w: string) => [...w].length >= 2 && !/^\d+$/.test(w);
  return [words.filter((w) => !asPrefix(w)), words.filter(asPrefix)];
}

/** The index of SEARCH_SCHEMA on PostgreSQL, as the lookups a search is made of. */
export function pgSearchIndex(c: PgConnection): SearchIndex {
  return {
    byId: (id, bots) =>
      c.query<{ id: number }>(
        'SELECT id FROM contacts WHERE id = $1 AND bot_id = ANY($2::bigint[]) AND preview = 0 AND deleted_at IS NULL',
        [id, bots],
      ).rows,
    byKey: (key, bots, limit) =>
      c.query<{ id: number }>(
        'SELECT contact_id AS id FROM contact_search_keys WHERE key = $1 AND bot_id = ANY($2::bigint[]) ORDER BY contact_id LIMIT $3',
        [key, bots, limit],
      ).rows,
    byKeyRange: (lo, hi, bots, limit) =>
      c.query<{ id: number }>(
        'SELECT contact_id AS id FROM contact_search_keys WHERE key >= $1 AND key < $2 AND bot_id = ANY($3::bigint[]) ORDER BY key, contact_id LIMIT $4',
        [lo, hi, bots, limit],
      ).rows,
    words: (words, bots, match, candidates, want) =>
      c.query<{ id: number }>(
        `SELECT id FROM contacts WHERE id IN (
           SELECT contact_id FROM contact_words WHERE bot_id = ANY($1::bigint[]) AND ${WORDS[match]} ORDER BY contact_id LIMIT $4)
         ORDER BY length(name), id LIMIT $5`,
        [bots, ...split(words, match), candidates, want],
      ).rows,
    countWords: (words, bots, match, cap) =>
      c.one<{ n: number }>(
        `SELECT count(*) AS n FROM (SELECT 1 FROM contact_words WHERE bot_id = ANY($1::bigint[]) AND ${WORDS[match]} LIMIT $4) m`,
        [bots, ...split(words, match), cap],
      )!.n,
  };
}
