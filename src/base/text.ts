/**
 * Text normalization shared by extraction, validation and rendering. Fact text comes from
 * model output, so every field that reaches a prompt passes through `collapseWhitespace`.
 */

/** Whitespace, C0/C1 controls, line and paragraph separators and bidi controls: anything that could break or disguise a line. */
const LINE_BREAKING_CLASS = String.raw`[\s\p{Cc}\p{Zl}\p{Zp}\u202A-\u202E\u2066-\u2069]`;
const LINE_BREAKING = new RegExp(`${LINE_BREAKING_CLASS}+`, 'gu');

/**
 * Texts up to this many characters are collapsed by one replace. The engine's regexp stack holds
 * the loop of one match over about 8 million characters of a text outside Latin-1, and a history
 * line may hold a text of 16 Mi.
 */
const COLLAPSED_WHOLE = 1_000_000;

/** A piece of a run of LINE_BREAKING, of at most 4,096 characters: pieces that meet are one run. */
const LINE_BREAKING_PIECE = new RegExp(`${LINE_BREAKING_CLASS}{1,4096}`, 'gu');

/**
 * Other invisible characters: format characters (zero-width spaces and joiners, direction marks,
 * the Arabic letter mark, tag characters, the soft hyphen) and the rest of Unicode's
 * default-ignorable code points (Hangul fillers, variation selectors, the combining grapheme
 * joiner). They render as nothing, so they are removed rather than turned into a space. They
 * can hide text from a reader, or smuggle instructions past one (tag characters spell ASCII
 * invisibly); a field of Hangul fillers alone would render as a blank one.
 */
const INVISIBLE_CLASS = String.raw`(?![\u202A-\u202E\u2066-\u2069])[\p{Cf}\p{Default_Ignorable_Code_Point}]`;
const INVISIBLE = new RegExp(INVISIBLE_CLASS, 'gu');
const ANY_INVISIBLE = new RegExp(INVISIBLE_CLASS, 'u');

/** True for a code unit the collapsing pattern may match (anything but a plain visible character). */
const mayBreakLine = (code: number): boolean =>
  code <= 0x20 ||
  (code >= 0x7f && code <= 0xa0) ||
  code === 0x1680 ||
  (code >= 0x2000 && code <= 0x200a) ||
  (code >= 0x2028 && code <= 0x202f) ||
  code === 0x205f ||
  (code >= 0x2066 && code <= 0x2069) ||
  code === 0x3000 ||
  code === 0xfeff ||
  // Invisible characters (see INVISIBLE); any surrogate, so astral ones (tag characters) are checked by the pattern.
  code === 0xad ||
  code === 0x34f ||
  (code >= 0x600 && code <= 0x605) ||
  code === 0x61c ||
  code === 0x6dd ||
  code === 0x70f ||
  code === 0x890 ||
  code === 0x891 ||
  code === 0x8e2 ||
  code === 0x115f ||
  code === 0x1160 ||
  code === 0x17b4 ||
  code === 0x17b5 ||
  (code >= 0x180b && code <= 0x180f) ||
  (code >= 0x200b && code <= 0x200f) ||
  (code >= 0x2060 && code <= 0x206f) ||
  code === 0x3164 ||
  (code >= 0xd800 && code <= 0xdfff) ||
  (code >= 0xfe00 && code <= 0xfe0f) ||
  code === 0xffa0 ||
  (code >= 0xfff0 && code <= 0xfffb);

/** True when `text` is already collapsed: single spaces between visible characters only. */
const isCollapsed = (text: string): boolean => {
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if ((code > 0x20 && code < 0x7f) || !mayBreakLine(code)) continue;
    if (code !== 0x20 || i === 0 || i === text.length - 1 || text.charCodeAt(i - 1) === 0x20) return false;
  }
  return true;
};

/** `text` without its invisible format characters: what every renderer of stored text shows of it. */
export const removeInvisible = (text: string): string => text.replace(INVISIBLE, '');

/** True when `text` holds a character `removeInvisible` removes: a cheap test before a copy. */
export const hasInvisible = (text: string): boolean => ANY_INVISIBLE.test(text);

/** Every run of LINE_BREAKING in `text` as one space, a long text's a piece at a time (`COLLAPSED_WHOLE`). */
const spacedRuns = (text: string): string => {
  if (text.length <= COLLAPSED_WHOLE) return text.replace(LINE_BREAKING, ' ');
  let end = -1;
  return text.replace(LINE_BREAKING_PIECE, (piece: string, at: number) => {
    const joined = at === end;
    end = at + piece.length;
    return joined ? '' : ' ';
  });
};

/** Trims, removes invisible format characters and turns every run of whitespace or control characters into one space. */
export const collapseWhitespace = (text: string): string =>
  isCollapsed(text) ? text : spacedRuns(text.replace(INVISIBLE, '')).trim();

/**
 * True for text that shows nothing: empty, or only whitespace, control characters and invisible
 * format characters (U+200B, U+200D, U+2060, U+FEFF, ...), all of which `collapseWhitespace`
 * removes. Such text is blank wherever text is required: it renders as nothing, and a field made
 * of it would be a fact about nothing a reader can see. Stops at the first visible character.
 */
export const isBlank = (text: string): boolean => {
  for (let i = 0; i < text.length; i += 1) if (!mayBreakLine(text.charCodeAt(i))) return false;
  return collapseWhitespace(text) === '';
};

/** A UTF-16 unit of a surrogate pair standing alone (the `u` flag matches a whole pair as one code point). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/gu;

/**
 * `text` with each lone surrogate replaced by U+FFFD, as UTF-8 encodes it: fact ids hash the
 * UTF-8 of a fact's text, so two texts differing only in lone surrogates would share an id.
 */
export const wellFormed = (text: string): string => text.replace(LONE_SURROGATE, '\uFFFD');

/** How many bytes `text` takes in UTF-8 (a lone surrogate as the U+FFFD that replaces it), counted without encoding it. */
export const utf8Length = (text: string): number => {
  let bytes = 0;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    const paired = code >= 0xd800 && code <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    if (paired) i += 1;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : paired ? 4 : 3;
  }
  return bytes;
};

/**
 * `text` without its final run of characters from `set` (ASCII). A scan from the end: a pattern
 * such as `/[.!]+$/` tries the run from each of its positions, quadratic in its length.
 */
export const trimEndOf = (text: string, set: string): string => {
  let end = text.length;
  while (end > 0 && set.includes(text[end - 1]!)) end -= 1;
  return end === text.length ? text : text.slice(0, end);
};

const ELLIPSIS = '...';

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

/** Clips to at most `max` UTF-16 units, ending in `...`, never splitting a surrogate pair. */
export const clipEnd = (text: string, max: number): string => {
  if (text.length <= max) return text;
  if (max <= ELLIPSIS.length) return ELLIPSIS.slice(0, Math.max(0, max));
  let cut = max - ELLIPSIS.length;
  if (isHighSurrogate(text.charCodeAt(cut - 1))) cut -= 1;
  return text.slice(0, cut) + ELLIPSIS;
};

/** Clips to at most `max` UTF-16 units keeping the end and starting with `...` (a path's file name matters most). */
export const clipStart = (text: string, max: number): string => {
  if (text.length <= max) return text;
  if (max <= ELLIPSIS.length) return ELLIPSIS.slice(0, Math.max(0, max));
  let start = text.length - (max - ELLIPSIS.length);
  if (isLowSurrogate(text.charCodeAt(start))) start += 1;
  return ELLIPSIS + text.slice(start);
};

/** The most characters of a text `quoteText` quotes, before its `...`. */
const QUOTED_LENGTH = 40;

/**
 * What a quoted text writes as a JSON escape besides what `JSON.stringify` escapes: anything that
 * could break, hide or disguise a line (C1 controls, format characters and the other invisible
 * ones, separators other than the space), and the `|` that joins the hook's notices, so no quoted
 * text forges another notice.
 */
const ESCAPED = /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{Zl}\p{Zp}|]|(?! )\p{Zs}/gu;

const escapeUnits = (text: string): string =>
  text
    .split('')
    .map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .join('');

/**
 * A message that may hold untrusted text (a parser's own message quoting its input) made safe
 * for one line: what `quoteText` escapes is written as JSON escapes, the rest left as it is.
 */
export const escapeForLine = (text: string): string => text.replace(ESCAPED, escapeUnits);

/**
 * Untrusted text (an id, a model's field) quoted for a message: a JSON string (`JSON.parse`
 * reads it back) of its first 40 characters, then `...`. It cannot flood the message, close its
 * quote, break its line, or write the `|` that joins the hook's notices.
 */
export const quoteText = (value: string): string =>
  escapeForLine(JSON.stringify(clipEnd(value, QUOTED_LENGTH + ELLIPSIS.length)));
