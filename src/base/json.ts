/**
 * A bound on JSON before it is parsed: text nested thousands deep parses, but overflows the
 * stack of whatever walks the value recursively afterwards (`JSON.stringify` among them); and
 * JSON parsed with a refusal in words that quote none of the text.
 */
import * as E from 'fp-ts/lib/Either.js';
import { escapeForLine } from './text.js';

/** True when `text` holds more than `limit` opening brackets (`[` or `{`), counted natively, not character by character. */
const hasMoreOpeningsThan = (text: string, limit: number): boolean => {
  let count = 0;
  for (const bracket of ['[', '{'])
    for (let at = text.indexOf(bracket); at !== -1; at = text.indexOf(bracket, at + 1)) {
      count += 1;
      if (count > limit) return true;
    }
  return false;
};

/**
 * True when the JSON text nests arrays and objects more than `limit` deep. One pass over the
 * characters, brackets inside strings not counted (and none at all when the text has too few
 * brackets to be that deep, as almost every line has); for a text that is not JSON the answer is
 * only a bound, which is all a check before parsing needs.
 */
export const exceedsJsonDepth = (text: string, limit: number): boolean => {
  if (!hasMoreOpeningsThan(text, limit)) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code === 0x22) {
      // Skip the string: to the next quote that no backslash escapes.
      for (i += 1; i < text.length; i += 1) {
        const inside = text.charCodeAt(i);
        if (inside === 0x5c) i += 1;
        else if (inside === 0x22) break;
      }
    } else if (code === 0x5b || code === 0x7b) {
      depth += 1;
      if (depth > limit) return true;
    } else if (code === 0x5d || code === 0x7d) depth -= 1;
  }
  return false;
};

/**
 * True when `value` nests arrays and objects more than `limit` deep. Walked with a stack of its
 * own, never by recursion, so a value too deep for `JSON.stringify` is measured without
 * overflowing; a value that refers to itself counts as infinitely deep.
 */
export const exceedsValueDepth = (value: unknown, limit: number): boolean => {
  const pending: Array<readonly [unknown, number]> = [[value, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next;
    if (typeof node !== 'object' || node === null) continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) pending.push([child, depth + 1]);
  }
  return false;
};

/**
 * The excerpt the engine quotes in its refusal, cut short at either end or not:
 * `Unexpected token 'g', ..."t": ghp_a1"... is not valid JSON`.
 */
const QUOTED_EXCERPT = /, (?:\.\.\.)?"[\s\S]*"(?:\.\.\.)? is not valid JSON$/u;

/**
 * Why `JSON.parse` refused a text, without the excerpt of it the engine quotes: the text is a
 * model's or a file's, and its first characters may be a secret (a token written where a string
 * belonged) or try to break the line the reason is shown on.
 */
const jsonParseReason = (error: SyntaxError): string =>
  // The token it names is quoted raw (`Unexpected token '\u2028'`): written as its escape.
  escapeForLine(error.message.replace(QUOTED_EXCERPT, ' (not valid JSON)'));

/**
 * A JSON text's value, or why the parser refused it without quoting it (`jsonParseReason`).
 * Every refusal of JSON that a user, a log, a store or a model sees is worded here: the engine's
 * own message would put a token written where a string belonged in all of them.
 */
export const parseJson = (text: string): E.Either<string, unknown> => {
  try {
    return E.right(JSON.parse(text) as unknown);
  } catch (error) {
    // JSON.parse of a string throws only a SyntaxError (it parses without recursing): anything else is a bug.
    if (!(error instanceof SyntaxError)) throw error;
    return E.left(jsonParseReason(error));
  }
};
