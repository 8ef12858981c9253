/**
 * Code-aware terms for ranking. Text is split the way code is written: paths into segments
 * with the file name kept whole and split (`src/auth/loginRoute.ts` -> src, auth, loginroute,
 * login, route, ts), identifiers on camelCase, PascalCase, snake_case and kebab-case (keeping
 * the joined compound, so `rateLimit` and `rate-limit` meet), lowercased, stopwords dropped and
 * Porter-stemmed so `validate`, `validation` and `validates` meet. Chinese, Japanese and Korean
 * words are not segmented: each run of their letters gives its overlapping bigrams, a run of one
 * letter that letter, as Lucene's CJKBigramFilter does (`登录页面` -> 登录, 录页, 页面).
 */
import { stemmer } from 'stemmer';
import { eng } from 'stopword';
import { memoize } from '../../base/memo.js';
import { normalizePath } from '../../base/path.js';

const STOPWORDS: ReadonlySet<string> = new Set(eng);

/** `task:12` names a task, not a topic: it carries no terms. */
const TASK_REFERENCE = /^task:\S*$/iu;

/** Runs of characters that can belong to a word, identifier or path. */
const RAW_TOKEN = /[\p{L}\p{N}_\-./\\:@#]+/gu;

/** Identifier parts: an acronym run, a capitalized or lowercase word, or a number. */
const IDENTIFIER_PART = /\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?\p{Ll}+|\p{Lu}+|\p{N}+/gu;

const FILE_EXTENSION = /^(.+)\.([\p{L}\p{N}]{1,8})$/u;

/** A character at or above U+3000, where kana, Hangul syllables and CJK ideographs lie: only such text is split by script. */
const WIDE_CHARACTER = /[^\u0000-\u2fff]/u;

/** The letters of Chinese, Japanese and Korean writing (kana's prolonged sound mark and 々 included), as a class. */
const CJK_CLASS = '[\\p{scx=Han}\\p{scx=Hiragana}\\p{scx=Katakana}\\p{scx=Hangul}]';

/** A letter of Chinese, Japanese or Korean writing. */
const CJK_LETTER = new RegExp(`^${CJK_CLASS}$`, 'u');

/** A run of such letters (within a token, whose characters are letters, digits and a few joiners). */
const CJK_RUN = new RegExp(`${CJK_CLASS}+`, 'gu');

/** A token of such letters alone: a run of words, not one word or path, read up to MAX_CJK_TOKEN_LENGTH. */
const CJK_TOKEN = new RegExp(`^${CJK_CLASS}+$`, 'u');

/** A word with where it came from: stopwords are dropped from prose but kept in paths (`up.rs`, `new/`). */
interface Word {
  readonly word: string;
  readonly fromPath: boolean;
}

/** A word long enough to rank: 2 characters or more, or a CJK letter (a run of one letter is a word). */
const isLongEnough = (word: string): boolean => word.length >= 2 || CJK_LETTER.test(word);

const keepTerm = ({ word, fromPath }: Word): boolean => isLongEnough(word) && (fromPath || !STOPWORDS.has(word));

/**
 * The words of each run of CJK letters in `identifier`: its overlapping bigrams, or its one letter
 * (code points, not UTF-16 units: `𠮷野` is a bigram). One pass over the run: a run of any length
 * costs its length.
 */
const cjkWords = (identifier: string, fromPath: boolean, out: Word[]): void => {
  for (const run of identifier.match(CJK_RUN) ?? []) {
    const letters = Array.from(run);
    if (letters.length === 1) out.push({ word: run, fromPath });
    for (let at = 1; at < letters.length; at += 1) out.push({ word: letters[at - 1]! + letters[at]!, fromPath });
  }
};

/**
 * The words of one identifier or path segment: the compound (when split) and its parts, then the
 * bigrams of its CJK letters (which no part holds: `API設計` gives `api` and `設計`).
 */
const identifierWords = (identifier: string, fromPath: boolean, out: Word[]): void => {
  const pieces = identifier.split(/[_\-.:@#]+/u).filter((piece) => piece !== '');
  const parts = pieces.flatMap((piece) => piece.match(IDENTIFIER_PART) ?? []);
  if (parts.length > 1) out.push({ word: parts.join('').toLowerCase(), fromPath });
  for (const part of parts) out.push({ word: part.toLowerCase(), fromPath });
  if (WIDE_CHARACTER.test(identifier)) cjkWords(identifier, fromPath, out);
};

/** The segments of a path that carry words (not `.` or `..`). */
const pathSegments = (path: string): string[] =>
  path.split(/[/\\]+/u).filter((segment) => segment !== '' && segment !== '.' && segment !== '..');

/** The raw words of one path segment: the last is a file name, its stem (whole and split) and its extension. */
const segmentWords = (segment: string, isFileName: boolean, out: Word[]): void => {
  const file = isFileName ? FILE_EXTENSION.exec(segment) : null;
  if (file === null) {
    identifierWords(segment, true, out);
    return;
  }
  identifierWords(file[1]!, true, out);
  out.push({ word: file[2]!.toLowerCase(), fromPath: true });
};

/** The raw words of a path: each directory, the file name's stem (whole and split) and its extension. */
const pathWords = (path: string, out: Word[]): void => {
  const segments = pathSegments(path);
  segments.forEach((segment, index) => segmentWords(segment, index === segments.length - 1, out));
};

const EXTENSION = /^\p{L}[\p{L}\p{N}]{0,7}$/u;

/**
 * True for a token written like a path: with a directory separator, or a file name (two or more
 * characters before its first dot, and an extension of a letter and up to 7 letters or digits).
 * Found with index lookups, not a pattern that backtracks: tokens come from untrusted text.
 */
export const isPathLike = (token: string): boolean => {
  if (token.includes('/') || token.includes('\\')) return true;
  const first = token.indexOf('.');
  return first >= 2 && EXTENSION.test(token.slice(token.lastIndexOf('.') + 1));
};

/**
 * Tokens longer than this carry no term: no word, identifier or path of a fact is this long
 * (paths are clipped to 200 characters), and skipping them keeps every pattern below linear
 * in the text, whatever a model writes. A run of CJK letters alone is the exception: it is many
 * words written without spaces, and its bigrams are read in one pass (`cjkWords`).
 */
export const MAX_TOKEN_LENGTH = 512;

/**
 * A token longer than this carries no term, even a run of CJK letters: no sentence runs this long
 * without punctuation, which no token holds, and its letters would each be a string and its
 * bigrams a term.
 */
const MAX_CJK_TOKEN_LENGTH = 100_000;

/**
 * Texts up to this many characters are tokenized by one global match. The engine's regexp stack
 * holds the loop of one match over about 4 million characters outside Latin-1 (3 million matched,
 * 5 million overflowed it), and a history line may hold a prompt of 16 MB.
 */
const MATCHED_WHOLE = 1_000_000;

/** A piece of a token, of at most 4,096 characters: pieces that meet are one token. */
const RAW_PIECE = /[\p{L}\p{N}_\-./\\:@#]{1,4096}/gu;

const EDGE_PUNCTUATION: ReadonlySet<string> = new Set(['.', ':', '-', '_', '@', '#']);

/** The token without leading and trailing punctuation of `edges` (a loop: a pattern anchored at the end backtracks). */
const trimEdges = (token: string, edges: ReadonlySet<string> = EDGE_PUNCTUATION, trailing = edges): string => {
  let start = 0;
  let end = token.length;
  while (start < end && edges.has(token[start]!)) start += 1;
  while (end > start && trailing.has(token[end - 1]!)) end -= 1;
  return token.slice(start, end);
};

const PATH_TRAILING: ReadonlySet<string> = new Set([...EDGE_PUNCTUATION, ',', ';']);

const NO_TOKENS: ReadonlyArray<string> = Object.freeze([]);

const PATH_SEPARATORS: ReadonlySet<string> = new Set(['/', '\\']);

/** What joins the parts of one name: a CJK run after one, or before one and a letter or digit, stays in its name. */
const NAME_JOINERS: ReadonlySet<string> = new Set(['_', '-']);

const LETTER_OR_DIGIT = /^[\p{L}\p{N}]$/u;

/**
 * Chinese, Japanese and Korean writers put a path right against their words (`src/config.tsを修正して`,
 * `修复src/db/pool.ts中的连接泄漏`), so a token splits where a run of CJK letters meets other
 * characters, except where the run is part of a path's own name (`docs/設計.md`, `src/한글.ts`):
 * - after the run, before a path separator, or before `.`, `_` or `-` and a letter or digit (an
 *   extension, or more of the name: `設計.md`, `設計/`, `設計_v2.md`);
 * - before the run, after a path separator, `_` or `-` (the run starts a segment or a name's part),
 *   or, when the run is kept after it, after characters that a separator starts and no `.` or
 *   CJK letter ends (`docs/API設計.md`; `src/a.tsと設計.md` splits before `と`: a file name ended).
 * Without word segmentation a run of words and a name is one run: `これは設計.md` stays whole.
 */
const splitCjkRuns = (token: string, out: string[]): void => {
  const chars = Array.from(token);
  let piece = 0;
  let segmentStarted = false;
  let segmentPlain = false;
  let at = 0;
  const cut = (end: number): void => {
    if (end > piece) out.push(chars.slice(piece, end).join(''));
    piece = end;
  };
  while (at < chars.length) {
    const char = chars[at]!;
    if (!CJK_LETTER.test(char)) {
      const separator = PATH_SEPARATORS.has(char);
      segmentStarted ||= separator;
      segmentPlain = separator || (segmentPlain && char !== '.');
      at += 1;
      continue;
    }
    const start = at;
    while (at < chars.length && CJK_LETTER.test(chars[at]!)) at += 1;
    const after = chars[at];
    const keptAfter =
      after !== undefined &&
      (PATH_SEPARATORS.has(after) ||
        ((after === '.' || NAME_JOINERS.has(after)) && LETTER_OR_DIGIT.test(chars[at + 1] ?? '')));
    const before = chars[start - 1];
    const keptBefore =
      before === undefined ||
      PATH_SEPARATORS.has(before) ||
      NAME_JOINERS.has(before) ||
      (keptAfter && segmentStarted && segmentPlain);
    if (!keptBefore) cut(start);
    if (!keptAfter) cut(at);
    segmentPlain = false;
  }
  cut(chars.length);
};

const isShortToken = (token: string): boolean => token.length <= MAX_TOKEN_LENGTH;

/**
 * A token of at most MAX_CJK_TOKEN_LENGTH characters that carries terms: at most MAX_TOKEN_LENGTH
 * characters, or CJK letters alone (their bigrams cost their length).
 */
const isReadToken = (token: string): boolean => isShortToken(token) || CJK_TOKEN.test(token);

/**
 * The tokens of CJK text: those past MAX_CJK_TOKEN_LENGTH dropped, each holding a wide character
 * split by `splitCjkRuns`, then the ones read kept.
 */
const scriptTokens = (tokens: ReadonlyArray<string>): ReadonlyArray<string> => {
  const out: string[] = [];
  for (const token of tokens) {
    if (token.length > MAX_CJK_TOKEN_LENGTH) continue;
    if (WIDE_CHARACTER.test(token)) splitCjkRuns(token, out);
    else out.push(token);
  }
  return out.every(isReadToken) ? out : out.filter(isReadToken);
};

/**
 * The raw tokens of a long text, matched a piece at a time (`MATCHED_WHOLE`): a token longer than
 * any token read is kept only as long as it must be to be dropped as too long.
 */
const piecedTokens = (text: string): string[] => {
  const out: string[] = [];
  let token = '';
  let end = -1;
  RAW_PIECE.lastIndex = 0;
  for (let piece = RAW_PIECE.exec(text); piece !== null; piece = RAW_PIECE.exec(text)) {
    if (piece.index !== end && token !== '') {
      out.push(token);
      token = '';
    }
    if (token.length <= MAX_CJK_TOKEN_LENGTH) token += piece[0];
    end = piece.index + piece[0].length;
  }
  if (token !== '') out.push(token);
  return out;
};

/**
 * The raw tokens of a text, at most MAX_TOKEN_LENGTH characters each but for runs of CJK letters
 * (one array: a global match builds no match objects), split where CJK words meet a path
 * (`splitCjkRuns`).
 */
const rawTokens = (text: string): ReadonlyArray<string> => {
  const matched = text.length <= MATCHED_WHOLE ? text.match(RAW_TOKEN) : piecedTokens(text);
  if (matched === null) return NO_TOKENS;
  if (WIDE_CHARACTER.test(text)) return scriptTokens(matched);
  return matched.every(isShortToken) ? matched : matched.filter(isShortToken);
};

const MEMO_LIMIT = 50_000;

/** The Porter stem of a lowercase word (memoized: vocabularies are small, stemming is not free). */
const stem = memoize(MEMO_LIMIT, (word: string) => (/^\p{N}+$/u.test(word) ? word : stemmer(word)));

const NO_TERMS: ReadonlyArray<string> = Object.freeze([]);

/** The ranking terms of raw words: the kept ones, stemmed. */
const keptTerms = (words: ReadonlyArray<Word>): ReadonlyArray<string> => {
  const kept = words.filter(keepTerm).map(({ word }) => stem(word));
  return kept.length === 0 ? NO_TERMS : Object.freeze(kept);
};

/** The ranking terms of one path segment (the last is a file name). */
const segmentTerms = (segment: string, isFileName: boolean): ReadonlyArray<string> => {
  const out: Word[] = [];
  segmentWords(segment, isFileName, out);
  return keptTerms(out);
};

/** The ranking terms of a directory (memoized: directories recur in many paths; file names are not, most name one file, and the text they are part of is). */
const directoryTerms = memoize(MEMO_LIMIT, (segment: string) => segmentTerms(segment, false));

/** The ranking terms of a path: its segments' terms, in order. */
const pathTerms = (path: string): ReadonlyArray<string> => {
  const segments = pathSegments(path);
  const terms: string[] = [];
  for (let index = 0; index < segments.length; index += 1) {
    const segment = segments[index]!;
    const found = index === segments.length - 1 ? segmentTerms(segment, true) : directoryTerms(segment);
    for (let j = 0; j < found.length; j += 1) terms.push(found[j]!);
  }
  return terms.length === 0 ? NO_TERMS : Object.freeze(terms);
};

/** The ranking terms of one raw token. */
const computeTokenTerms = (raw: string): ReadonlyArray<string> => {
  const token = trimEdges(raw);
  if (token === '' || TASK_REFERENCE.test(token)) return NO_TERMS;
  if (isPathLike(token)) return pathTerms(token);
  const out: Word[] = [];
  identifierWords(token, false, out);
  return keptTerms(out);
};

const memoizedTokenTerms = memoize(MEMO_LIMIT, computeTokenTerms);

/**
 * A token past MAX_TOKEN_LENGTH (a run of CJK letters, up to MAX_CJK_TOKEN_LENGTH) is not kept in
 * a memo table: the tables are bounded by their count of entries, and one such entry, its text
 * and its bigrams, takes megabytes where a word takes bytes.
 */
const isUnmemoized = (raw: string): boolean => raw.length > MAX_TOKEN_LENGTH;

/**
 * The ranking terms of one raw token, memoized (the words of a session repeat far more than
 * the texts they are part of) unless it holds a directory separator: most such paths name a
 * new file, and would only grow the table the words are looked up in, making every lookup
 * slower and starting it again sooner (their directories are memoized, and so are the texts
 * they are part of).
 */
const tokenTerms = (raw: string): ReadonlyArray<string> =>
  isUnmemoized(raw) || raw.includes('/') || raw.includes('\\') ? computeTokenTerms(raw) : memoizedTokenTerms(raw);

/**
 * The ranking terms of `text`, with repeats (term frequency matters). Memoized: the store
 * reads a fact's terms again when the fact leaves the index, and a task's context when it
 * changes, and a few thousand texts cover everything still indexed in a long session.
 */
export const textTerms = memoize(8_192, (text: string): ReadonlyArray<string> => {
  const all: string[] = [];
  const tokens = rawTokens(text);
  for (let i = 0; i < tokens.length; i += 1) {
    const terms = tokenTerms(tokens[i]!);
    for (let j = 0; j < terms.length; j += 1) all.push(terms[j]!);
  }
  return Object.freeze(all);
});

/** The query terms of one raw token: its words of 2 characters or more (or a CJK letter), stemmed. */
const computeQueryTokenTerms = (raw: string): ReadonlyArray<string> => {
  const token = trimEdges(raw);
  if (token === '' || TASK_REFERENCE.test(token)) return NO_TERMS;
  const out: Word[] = [];
  if (isPathLike(token)) pathWords(token, out);
  else identifierWords(token, false, out);
  const terms = out.filter(({ word }) => isLongEnough(word)).map(({ word }) => stem(word));
  return terms.length === 0 ? NO_TERMS : Object.freeze(terms);
};

const memoizedQueryTokenTerms = memoize(MEMO_LIMIT, computeQueryTokenTerms);

/** The query terms of one raw token (memoized as `tokenTerms` is). */
const queryTokenTerms = (raw: string): ReadonlyArray<string> =>
  isUnmemoized(raw) ? computeQueryTokenTerms(raw) : memoizedQueryTokenTerms(raw);

/**
 * The distinct terms of a query. Stopwords stay in: they are indexed only where a path holds
 * them, so "make up take a lock" finds `src/commands/up.rs` and matches no prose.
 */
export const queryTerms = (text: string): string[] => {
  const terms = new Set<string>();
  for (const raw of rawTokens(text)) for (const term of queryTokenTerms(raw)) terms.add(term);
  return [...terms];
};

/**
 * Path-like tokens of a text (with a directory separator or a file extension), each in the one
 * spelling extraction gives a file's subject (`normalizePath`: `.\src\a.ts:12` is `src/a.ts`).
 * The text is read as Unicode NFC first: a decomposed letter would otherwise end its token.
 */
export const mentionedPaths = (text: string): string[] => {
  const out: string[] = [];
  for (const raw of rawTokens(text.normalize('NFC'))) {
    const relative = raw.startsWith('./') || raw.startsWith('.\\') ? raw.slice(2) : raw;
    const token = trimEdges(relative, EDGE_PUNCTUATION, PATH_TRAILING);
    if (token !== '' && !TASK_REFERENCE.test(token) && isPathLike(token) && /\p{L}/u.test(token))
      out.push(normalizePath(token));
  }
  return out;
};
