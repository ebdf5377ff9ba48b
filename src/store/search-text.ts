/**
 * How contact fields become search terms, and how a query is read, in one place so that the
 * index and the query fold text the same way. Registered as SQL functions on every connection
 * (`db.ts`), so the triggers that keep the index call exactly this code.
 *
 * FTS5's `unicode61 remove_diacritics 2` folds Latin accents only: "Фёдор" keeps its "ё" and
 * "Σοφία" its tonos. So words are folded here first, for every script: compatibility forms
 * (full-width, ligatures) decomposed, combining accents and vowel points dropped, lower case.
 */

/** Combining marks that are accents or vowel points (Latin, Greek, Cyrillic, Hebrew, Arabic). */
const ACCENTS =
  /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed]/g;
/** An apostrophe inside a word ("O'Brien", "d’Arc"). */
const INNER_APOSTROPHE = /(?<=\p{L})['’`ʼ](?=\p{L})/gu;

/** Text folded for matching: accents dropped in every script, lower case, NFC. */
function foldText(text: string): string {
  return text.normalize('NFKD').replace(ACCENTS, '').normalize('NFC').toLowerCase();
}

/**
 * The words of a name as the index keeps them: the folded name, plus each word written with an
 * apostrophe also joined up ("o'brien" → "o'brien obrien"), so both spellings find it.
 */
export function searchWords(text: string | null): string | null {
  if (text === null || text === '') return null;
  const folded = foldText(text);
  const joined = folded.match(/[\p{L}\p{N}]+(?:['’`ʼ][\p{L}\p{N}]+)+/gu)?.map((w) => w.replace(INNER_APOSTROPHE, ''));
  return joined?.length ? `${folded} ${joined.join(' ')}` : folded;
}

/** The digits of a phone, last digit first, so a suffix of the number is a prefix of the key. */
export function phoneKey(phone: string | null): string | null {
  if (phone === null) return null;
  const digits = phone.replace(/\D/g, '');
  return digits.length === 0 ? null : [...digits].reverse().join('');
}

/** ASCII lower case only, as SQLite's lower() (usernames and emails are keyed that way). */
export function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** What a query can be, besides words of a name. */
export interface ParsedQuery {
  /** The query as typed, trimmed. */
  text: string;
  /** Digits of a phone-like query ("+7 (916) 555-12-34" → "79165551234"), or undefined. */
  digits?: string;
  /** A whole number: a contact id or a messenger id. */
  number?: string;
  /** An email address, ASCII lower case. */
  email?: string;
  /** A username without its `@`, ASCII lower case. */
  username?: string;
  /** Folded words for the name index (letters and digits only). */
  words: string[];
  /** Written as an identifier (an email, a @username, a number): words are searched only when it finds nobody. */
  identifier: boolean;
}

/** Shortest phone suffix that is searched as a phone (shorter digit runs are ids only). */
export const MIN_PHONE_DIGITS = 7;

/** Read a query: which identifier it could be, and its words. */
export function parseQuery(query: string): ParsedQuery {
  const text = query.trim();
  const out: ParsedQuery = { text, words: [], identifier: false };
  if (/^\+?[\d\s().\-\u2012-\u2015]+$/.test(text)) {
    const digits = text.replace(/\D/g, '');
    if (digits.length > 0) out.digits = digits;
    if (/^\d+$/.test(text)) out.number = text;
  }
  if (/^[^\s@]+@[^\s@]+$/.test(text)) out.email = asciiLower(text);
  else if (/^@?[\p{L}\p{N}_.\-]+$/u.test(text)) out.username = asciiLower(text.replace(/^@/, ''));
  out.identifier = out.digits !== undefined || out.email !== undefined || text.startsWith('@');
  if (/\p{L}/u.test(text)) {
    out.words = (foldText(out.email ? text.slice(0, text.indexOf('@')) : text).match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 16);
  }
  return out;
}

/** A token as FTS5's unicode61 tokenizer cuts one: letters, numbers, private use. */
const TOKEN = /[\p{L}\p{N}\p{Co}]+/gu;

/** The words the index keeps of a name or handles: `searchWords`, cut into tokens as FTS5 cuts them. */
export function searchTokens(text: string | null): string[] {
  return searchWords(text)?.match(TOKEN) ?? [];
}

/** A query word is matched as a prefix when it has 2+ characters and is not a number (a number's prefix would stand for thousands of ids). */
export function asPrefix(word: string): boolean {
  return [...word].length >= 2 && !/^\d+$/.test(word);
}

/**
 * Every bot id as the same number of characters (base 36, 11 characters hold every safe
 * integer), so a bot's tag and a word never run into another bot's: the index keeps each word
 * as `<tag><word>`, one term per bot, and a search within a bot reads only that bot's terms.
 */
const TAG_CHARS = 11; // SEARCH_BY_BOT's prefix indexes are this plus 2 to 6 characters.

function botTag(botId: number): string {
  return botId.toString(36).padStart(TAG_CHARS, '0');
}

/** The index text of a name or handles in a bot: each word folded (`searchWords`) behind the bot's tag. */
export function taggedWords(botId: number, text: string | null): string | null {
  const words = searchTokens(text);
  if (words.length === 0) return null;
  const tag = botTag(botId);
  return words.map((w) => tag + w).join(' ');
}

/** A word of a bot as an FTS5 string ("quoted", quotes doubled), as a prefix when `asPrefix`. */
function ftsWord(tag: string, word: string, prefix: boolean): string {
  const quoted = `"${tag}${word.replace(/"/g, '""')}"`;
  return prefix && asPrefix(word) ? `${quoted}*` : quoted;
}

/** How a query's words are matched: whole words in the name, whole words anywhere, prefixes anywhere. */
export type WordMatch = 'name' | 'words' | 'prefixes';

/**
 * The FTS5 expression for a query's words within these bots: every word must match, in the
 * name (`name`) or in the name or a handle; as whole words, or (`prefixes`) each word as a
 * prefix; all of them words of one bot.
 */
export function ftsExpression(words: readonly string[], botIds: readonly number[], match: WordMatch): string {
  const columns = match === 'name' ? 'name' : '{name handles}';
  const perBot = botIds.map((b) => `(${words.map((w) => ftsWord(botTag(b), w, match === 'prefixes')).join(' ')})`);
  return `${columns} : (${perBot.join(' OR ')})`;
}
