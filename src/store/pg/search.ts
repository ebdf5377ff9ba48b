/**
 * The contact search on PostgreSQL (the SQLite part: ../search.ts, whose algorithm runs here
 * over this index). SQLite's triggers call our JavaScript folding; PostgreSQL cannot, so the
 * store writes a contact's index rows itself (`reindex`), in the transaction of every write of
 * a contact (create or update, admin delete, seed), from the same functions: a query and the
 * index fold text the same way on both stores. A word matches a whole token as FTS5's
 * unicode61 tokenizer cuts them (letters, numbers, private use), or with `prefixes` a token's
 * start.
 *
 * The words are terms of a btree (`contact_terms`, migration 6), one row per bot, term and
 * contact: `n` and each whole token of the name, `h` and each of a handle's that is not the
 * name's, `p` and each prefix of 2 to PREFIX_CHARS characters; every row also holds the
 * contact's tokens (`tokens`: " name tokens | handle tokens "). So a word's contacts are one
 * index range in id order, which a LIMIT stops early (a count to 1000, the first 200 by id),
 * and a query of several words reads the rarest word's range only, checking the other words
 * (and a prefix longer than the index keeps) in the tokens of each row it reads.
 */
import type { ContactRow } from '../contacts.js';
import { WORD_MATCHES, type HitDetails, type HitRow, type Lookup, type Meanwhile, type SearchIndex, type WordMatches } from '../search.js';
import { asciiLower, asPrefix, phoneKey, searchTokens, type WordMatch } from '../search-text.js';
import type { PgConnection } from './connection.js';
import { OWNER_BOTS } from './projects.js';

/** Prefixes up to this many characters are terms of their own (as SQLite's prefix indexes); a longer one is checked in the tokens. */
const PREFIX_CHARS = 6;

/** A contact's index rows: its terms, and its tokens as every row holds them. */
function indexed(nameTokens: readonly string[], handleTokens: readonly string[]): { terms: Set<string>; tokens: string } {
  const name = [...new Set(nameTokens)];
  const handles = [...new Set(handleTokens)].filter((t) => !name.includes(t));
  const terms = new Set([...name.map((t) => `n${t}`), ...handles.map((t) => `h${t}`)]);
  for (const token of [...name, ...handles]) {
    // A number is never searched as a prefix (asPrefix), so no prefix of digits is kept.
    const chars = [...token];
    for (let n = 2; n <= Math.min(chars.length, PREFIX_CHARS); n++) {
      const prefix = chars.slice(0, n).join('');
      if (asPrefix(prefix)) terms.add(`p${prefix}`);
    }
  }
  return { terms, tokens: ` ${name.join(' ')} | ${handles.join(' ')} ` };
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
  c.query('DELETE FROM contact_terms WHERE contact_id = ANY($1::bigint[])', [ids]);
  c.query('DELETE FROM contact_search_keys WHERE contact_id = ANY($1::bigint[])', [ids]);
  const rows = c.query<Indexed>(
    `SELECT id, bot_id, name, phone, email, telegram_id, telegram_username, max_user_id, max_username, vk_user_id, viber_id
     FROM contacts WHERE id = ANY($1::bigint[]) AND preview = 0 AND deleted_at IS NULL`,
    [ids],
  ).rows;
  if (rows.length === 0) return;
  const t: { bot: number[]; term: string[]; id: number[]; tokens: string[]; chars: number[] } = {
    bot: [],
    term: [],
    id: [],
    tokens: [],
    chars: [],
  };
  for (const r of rows) {
    const nameChars = [...r.name].length;
    const at = r.email === null ? -1 : r.email.indexOf('@');
    const handles = [r.telegram_username, r.max_username, at > 0 ? r.email!.slice(0, at) : null].filter((h) => h !== null).join(' ');
    const { terms, tokens } = indexed(searchTokens(r.name), searchTokens(handles));
    for (const term of terms) {
      t.bot.push(r.bot_id);
      t.term.push(term);
      t.id.push(r.id);
      t.tokens.push(tokens);
      t.chars.push(nameChars);
    }
  }
  if (t.term.length > 0)
    c.query(
      // In the index's order: each insert lands next to the one before (much faster for a batch).
      `INSERT INTO contact_terms (bot_id, term, contact_id, tokens, name_chars)
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::int[]) u(b, t, c, k, n) ORDER BY b, t, c`,
      [t.bot, t.term, t.id, t.tokens, t.chars],
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

/** A query word as the index reads it: the terms whose contacts it is among (one or two), and what the tokens must hold. */
interface WordTerms {
  terms: [string, string | null];
  /**
   * A LIKE pattern the tokens must match: "% word %" for a whole token, "% word %|%" for a whole
   * token of the name (before the one "|"), "% word%" for a prefix. (LIKE, not strpos: strpos
   * counts characters to the match, which costs in a text of several bytes a character.)
   */
  like: string;
  chars: number;
  /** Every row of its terms holds it (all but a prefix longer than the index keeps): leading, it needs no check. */
  held: boolean;
}

/** A word as LIKE reads it literally (a token holds none of these, but a query is anyone's). */
const literal = (w: string) => w.replace(/[\\%_]/g, '\\$&');

/** A query's words as terms: whole in the name, whole anywhere, or (`prefixes`) each as a prefix when `asPrefix`. */
function wordTerms(words: readonly string[], match: WordMatch): WordTerms[] {
  return words.map((w) => {
    const chars = [...w];
    const like = `% ${literal(w)}`;
    if (match === 'name') return { terms: [`n${w}`, null], like: `${like} %|%`, chars: chars.length, held: true };
    if (match === 'words' || !asPrefix(w)) return { terms: [`n${w}`, `h${w}`], like: `${like} %`, chars: chars.length, held: true };
    const held = chars.length <= PREFIX_CHARS;
    return { terms: [`p${chars.slice(0, PREFIX_CHARS).join('')}`, null], like: `${like}%`, chars: chars.length, held };
  });
}

/**
 * SQL for the first `limit` contacts by id (their ids and name lengths), of any of the bots $1,
 * whose tokens hold every word; `p` adds a parameter. The first word leads: within each bot,
 * its terms' contacts in id order (which the LIMIT stops early), each row's tokens checked for
 * the other words, then for the first one only where its terms do not already say it (`held`).
 */
function matching(words: readonly WordTerms[], p: (v: unknown) => string, limit: string): string {
  const checked = [...words.slice(1), ...(words[0]!.held ? [] : [words[0]!])];
  const checks = checked.map((w) => ` AND t.tokens LIKE ${p(w.like)}`).join('');
  const range = (term: string | null) =>
    `(SELECT t.contact_id, t.name_chars FROM contact_terms t WHERE t.bot_id = b.bot AND t.term = ${p(term)}::text${checks}
      ORDER BY t.contact_id LIMIT ${limit})`;
  const [a, b] = words[0]!.terms;
  return `(SELECT m.contact_id, m.name_chars FROM unnest($1::bigint[]) b(bot) CROSS JOIN LATERAL (
    SELECT u.contact_id, u.name_chars FROM (${range(a)} UNION ALL ${range(b)}) u ORDER BY u.contact_id LIMIT ${limit}) m
    ORDER BY m.contact_id LIMIT ${limit})`;
}

/** How often each of the most common terms is, by PostgreSQL's statistics of the column (ANALYZE): the rest are rarer. */
type Frequencies = ReadonlyMap<string, number>;

/** The words, the rarest first (the one to lead): by their terms' frequencies, then the longest, then as asked. */
function rarestFirst(words: readonly WordTerms[], freq: Frequencies): WordTerms[] {
  const f = (w: WordTerms) => w.terms.reduce((n, t) => n + (t === null ? 0 : (freq.get(t) ?? 0)), 0);
  return words
    .map((w, i) => ({ w, i, f: f(w) }))
    .sort((x, y) => x.f - y.f || y.w.chars - x.w.chars || x.i - y.i)
    .map((x) => x.w);
}

/**
 * SQL for every class of a query's words (k 0-2: id, name_chars), its rows ordered by k, then
 * name length, then id: each class's `want` shortest names of its first `candidates`, a class
 * read only while the ones before it hold fewer than `want` contacts between them; and (k 3,
 * the id column) how many contacts match as prefixes, counted up to `cap` (the prefix class is
 * the first `candidates` of those). $1 is the bots; `p` adds a parameter.
 */
function wordMatchesSql(
  words: readonly string[],
  p: (v: unknown) => string,
  candidates: number,
  want: number,
  cap: number,
  freq: Frequencies,
): string {
  const [cand, wanted, capped] = [p(candidates), p(want), p(cap)];
  const [name, anywhere, prefixes] = WORD_MATCHES.map((match) => rarestFirst(wordTerms(words, match), freq));
  const best = (from: string, gate: string) =>
    `SELECT contact_id AS id, name_chars FROM ${from} r ${gate} ORDER BY name_chars, contact_id LIMIT ${wanted}`;
  return `WITH
    c0 AS MATERIALIZED (${best(matching(name!, p, cand), '')}),
    c1 AS MATERIALIZED (${best(matching(anywhere!, p, cand), `WHERE (SELECT count(*) FROM c0) < ${wanted}`)}),
    pm AS MATERIALIZED ${matching(prefixes!, p, capped)},
    c2 AS MATERIALIZED (${best(
      `(SELECT * FROM pm ORDER BY contact_id LIMIT ${cand})`,
      `WHERE (SELECT count(*) FROM (SELECT id FROM c0 UNION SELECT id FROM c1) s) < ${wanted}`,
    )})
    SELECT 0 AS k, id, name_chars FROM c0 UNION ALL SELECT 1, id, name_chars FROM c1 UNION ALL SELECT 2, id, name_chars FROM c2
    UNION ALL SELECT 3, count(*), 0 FROM pm
    ORDER BY 1, 3, 2`;
}

/**
 * SQL for each lookup's contacts (i: the lookup's place, id, n: its order within the lookup),
 * at most `limit` each: a key's by id, a range's by key, then id (for one key, the same order).
 * $1 is the bots; `p` adds a parameter.
 */
function lookupsSql(lookups: readonly Lookup[], p: (v: unknown) => string, limit: string): string {
  // Every statement uses `limit`, so that its parameter's type is known whichever lookups there are.
  if (lookups.length === 0) return `SELECT 0 AS i, 0::bigint AS id, 0::bigint AS n WHERE false LIMIT ${limit}`;
  const one = (l: Lookup, i: number) =>
    'id' in l
      ? `SELECT ${i} AS i, id, 0::bigint AS n FROM contacts WHERE id = ${p(l.id)} AND bot_id = ANY($1::bigint[]) AND preview = 0 AND deleted_at IS NULL
         LIMIT ${limit}`
      : `SELECT ${i} AS i, contact_id AS id, row_number() OVER (ORDER BY key, contact_id) AS n FROM (SELECT key, contact_id FROM contact_search_keys
         WHERE ${'key' in l ? `key = ${p(l.key)}` : `key >= ${p(l.from)} AND key < ${p(l.to)}`} AND bot_id = ANY($1::bigint[])
         ORDER BY key, contact_id LIMIT ${limit}) k`;
  return lookups.map((l, i) => `(${one(l, i)})`).join(' UNION ALL ');
}

type Tagged = { contact_id: number; name: string };
type AccountDetail = HitDetails['accounts'] extends Map<number, (infer A)[]> ? A : never;

/**
 * SQL for what a search's answer shows of the contacts `ids` names (an array expression), as one
 * JSON object: their rows, tags (in order) and accounts (by id), and how many contacts the bots
 * `bots` list (their block counts).
 */
const detailsJson = (ids: string, bots: string) => `json_build_object(
  'rows', (SELECT coalesce(json_agg(json_build_object('id', id, 'bot_id', bot_id, 'name', name, 'messenger', messenger, 'phone', phone,
      'email', email, 'telegram_username', telegram_username, 'max_username', max_username) ORDER BY id), '[]') FROM contacts WHERE id = ANY(${ids})),
  'tags', (SELECT coalesce(json_agg(json_build_object('contact_id', contact_id, 'name', name) ORDER BY contact_id, position), '[]')
      FROM contact_tags WHERE contact_id = ANY(${ids})),
  'accounts', (SELECT coalesce(json_agg(json_build_object('contact_id', contact_id, 'id', id, 'currency', currency, 'amount', amount,
      'blocked_at', blocked_at) ORDER BY contact_id, id), '[]') FROM contact_accounts WHERE contact_id = ANY(${ids})),
  'listed', (SELECT coalesce(sum(n), 0) FROM contact_blocks WHERE bot_id = ANY(${bots})))`;

const DETAILS = `SELECT ${detailsJson('$1::bigint[]', '$2::bigint[]')} AS d`;

type DetailsJson = { rows: HitRow[]; tags: Tagged[]; accounts: (AccountDetail & { contact_id: number })[]; listed: number };

/** HitDetails from detailsJson's object. */
function hitDetails(d: DetailsJson): HitDetails {
  const tags = new Map<number, string[]>();
  for (const t of d.tags) tags.set(t.contact_id, [...(tags.get(t.contact_id) ?? []), t.name]);
  const accounts = new Map<number, AccountDetail[]>();
  for (const { contact_id, ...a } of d.accounts) accounts.set(contact_id, [...(accounts.get(contact_id) ?? []), a]);
  return { rows: d.rows, tags, accounts, listed: d.listed };
}

/** The word classes and the count from wordMatchesSql's rows (k, id). */
function wordMatchesOf(rows: Iterable<{ k: number; id: number }>): WordMatches {
  const classes: { id: number }[][] = WORD_MATCHES.map(() => []);
  let total = 0;
  for (const r of rows) {
    if (r.k === WORD_MATCHES.length) total = r.id;
    else classes[r.k]!.push({ id: r.id });
  }
  return { classes, total };
}

/** Each lookup's contacts from lookupsSql's rows (i, id), in their order. */
function lookupsOf(n: number, rows: Iterable<{ i: number; id: number }>): { id: number }[][] {
  const out: { id: number }[][] = Array.from({ length: n }, () => []);
  for (const r of rows) out[r.i]!.push({ id: r.id });
  return out;
}

/** How long the terms' frequencies are kept before they are read again (autovacuum's ANALYZE renews them now and then). */
const FREQUENCIES_MS = 10 * 60_000;

/** The index of SEARCH_SCHEMA on PostgreSQL, as the lookups a search is made of, on the connection `conn` gives. */
export function pgSearchIndex(conn: () => PgConnection): SearchIndex {
  let freq: { at: number; terms: Frequencies } | undefined;
  const frequencies = (): Frequencies => {
    if (freq === undefined || Date.now() - freq.at > FREQUENCIES_MS) {
      const row = conn().one<{ terms: string[] | null; freqs: number[] | null }>(
        `SELECT most_common_vals::text::text[] AS terms, most_common_freqs AS freqs FROM pg_stats
         WHERE schemaname = current_schema() AND tablename = 'contact_terms' AND attname = 'term'`,
      );
      freq = { at: Date.now(), terms: new Map((row?.terms ?? []).map((t, i) => [t, row!.freqs![i]!])) };
    }
    return freq.terms;
  };
  /** A prepared statement's rows, with the caller's work done while it runs (`Meanwhile`). */
  const run = <R>(sql: string, params: unknown[], meanwhile: Meanwhile | undefined): R[] => {
    if (!meanwhile) return conn().query<R>(sql, params, { prepared: true }).rows;
    const sent = conn().begin<R>(sql, params, { prepared: true });
    meanwhile();
    return sent().rows;
  };
  /** A statement's text and parameters, $1 the bots. */
  const statement = (bots: readonly number[], build: (p: (v: unknown) => string) => string) => {
    const params: unknown[] = [bots];
    const sql = build((v) => `$${params.push(v)}`);
    return { sql, params };
  };
  return {
    lookups: (lookups, bots, limit, meanwhile) => {
      if (lookups.length === 0) return [];
      const { sql, params } = statement(bots, (p) => `${lookupsSql(lookups, p, p(limit))} ORDER BY 1, 3`);
      return lookupsOf(lookups.length, run<{ i: number; id: number }>(sql, params, meanwhile));
    },
    details: (ids, bots) => hitDetails(conn().query<{ d: DetailsJson }>(DETAILS, [ids, bots], { prepared: true }).rows[0]!.d),
    wordMatches: (words, bots, candidates, want, cap) => {
      const { sql, params } = statement(bots, (p) => wordMatchesSql(words, p, candidates, want, cap, frequencies()));
      return wordMatchesOf(conn().query<{ k: number; id: number }>(sql, params, { prepared: true }).rows);
    },
    ownerBots: (ownerId) => {
      const sent = conn().begin<{ id: number }>(OWNER_BOTS, [ownerId], { prepared: true });
      return () => sent().rows.map((r) => r.id);
    },
    lookupsAndWords: (lookups, words, bots, n, meanwhile) => {
      const { sql, params } = statement(
        bots,
        (p) => `WITH lk AS MATERIALIZED (${lookupsSql(lookups, p, p(n.limit))}),
          wm AS MATERIALIZED (${wordMatchesSql(words, p, n.candidates, n.want, n.cap, frequencies())})
          SELECT json_build_object(
            'lookups', (SELECT coalesce(json_agg(json_build_object('i', i, 'id', id) ORDER BY i, n), '[]') FROM lk),
            'words', (SELECT coalesce(json_agg(json_build_object('k', k, 'id', id) ORDER BY k, name_chars, id), '[]') FROM wm),
            'details', ${detailsJson('ARRAY(SELECT id FROM wm WHERE k < 3 AND NOT EXISTS (SELECT FROM lk))', '$1::bigint[]')}) AS d`,
      );
      const d = run<{
        d: { lookups: { i: number; id: number }[]; words: { k: number; id: number }[]; details: DetailsJson };
      }>(sql, params, meanwhile)[0]!.d;
      return { lookups: lookupsOf(lookups.length, d.lookups), words: wordMatchesOf(d.words), details: hitDetails(d.details) };
    },
  };
}
