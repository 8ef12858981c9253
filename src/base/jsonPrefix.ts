/**
 * Whether a text is the beginning of a JSON array or object cut short: what a writer stopped at a
 * limit leaves, as against prose that merely holds a bracket (`{ by "category"` is no JSON at all).
 */

/** What the reader expects next inside the open containers. */
type Expected = 'value' | 'valueOrClose' | 'key' | 'keyOrClose' | 'colon' | 'commaOrClose';

const WHITESPACE = /[ \t\n\r]/u;
const NUMBER_CHAR = /[-+.eE\d]/u;
const LITERAL_CHAR = /[a-z]/u;
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/u;
/** What a cut at the end of the text may leave of a number. */
const NUMBER_START = /^-?(?:(?:0|[1-9]\d*)(?:\.\d*)?|(?:0|[1-9]\d*)(?:\.\d+)?[eE][+-]?\d*)?$/u;
const LITERALS = ['true', 'false', 'null'] as const;
const ESCAPED = /["\\/bfnrt]/u;
/** The hex digits of a `\u` escape, fewer where the text ends. */
const HEX_DIGITS = /^[\dA-Fa-f]{0,4}$/u;

/**
 * The end of the string whose opening quote is at `start` (the index after its closing quote),
 * `text.length` when the text ends inside it, or -1 at a character no string may hold there.
 */
const stringEnd = (text: string, start: number): number => {
  for (let i = start + 1; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code === 0x22) return i + 1;
    if (code < 0x20) return -1;
    if (code !== 0x5c) continue;
    const escape = text[i + 1];
    if (escape === undefined) return text.length;
    if (escape === 'u') {
      if (!HEX_DIGITS.test(text.slice(i + 2, i + 6))) return -1;
      i += 5;
    } else if (ESCAPED.test(escape)) i += 1;
    else return -1;
  }
  return text.length;
};

/** The end of the run of characters matching `pattern` from `start`. */
const runEnd = (text: string, start: number, pattern: RegExp): number => {
  let end = start;
  while (end < text.length && pattern.test(text[end]!)) end += 1;
  return end;
};

/** A number or literal is whole or, where the text ends, may still become one. */
const isScalar = (run: string, numeric: boolean, atEnd: boolean): boolean =>
  numeric
    ? (atEnd ? NUMBER_START : NUMBER).test(run)
    : LITERALS.some((literal) => (atEnd ? literal.startsWith(run) : literal === run));

/**
 * How far the text from the bracket at `start` reads as a JSON array or object left open:
 * `text.length` when all of it does (cut anywhere: inside a string, an escape, a number or a
 * literal too), otherwise the index of the first character that does not, or that closes it
 * (`start` when no bracket opens there). One pass, linear in the text.
 */
export const openJsonEnd = (text: string, start: number): number => {
  if (text[start] !== '{' && text[start] !== '[') return start;
  /** The open containers, innermost last: true for an object. */
  const objects: boolean[] = [];
  let expected: Expected = 'value';
  let i = start;
  while (i < text.length) {
    const char = text[i]!;
    const wantsValue: boolean = expected === 'value' || expected === 'valueOrClose';
    const wantsKey: boolean = expected === 'key' || expected === 'keyOrClose';
    const numeric = char === '-' || (char >= '0' && char <= '9');
    if (WHITESPACE.test(char)) i += 1;
    else if ((char === '{' || char === '[') && wantsValue) {
      objects.push(char === '{');
      expected = char === '{' ? 'keyOrClose' : 'valueOrClose';
      i += 1;
    } else if (char === '"' && (wantsValue || wantsKey)) {
      const end = stringEnd(text, i);
      if (end === -1) return i;
      expected = wantsKey ? 'colon' : 'commaOrClose';
      i = end;
    } else if (
      (char === '}' && (expected === 'keyOrClose' || expected === 'commaOrClose') && objects.at(-1) === true) ||
      (char === ']' && (expected === 'valueOrClose' || expected === 'commaOrClose') && objects.at(-1) === false)
    ) {
      objects.pop();
      if (objects.length === 0) return i;
      expected = 'commaOrClose';
      i += 1;
    } else if (char === ':' && expected === 'colon') {
      expected = 'value';
      i += 1;
    } else if (char === ',' && expected === 'commaOrClose') {
      expected = objects.at(-1) === true ? 'key' : 'value';
      i += 1;
    } else if (wantsValue && (numeric || LITERAL_CHAR.test(char))) {
      const end = runEnd(text, i, numeric ? NUMBER_CHAR : LITERAL_CHAR);
      if (!isScalar(text.slice(i, end), numeric, end === text.length)) return i;
      expected = 'commaOrClose';
      i = end;
    } else return i;
  }
  return text.length;
};
