/**
 * Keys a JSON object gives more than once (`{"env": {...}, "env": {...}}`): `JSON.parse` keeps
 * the last and drops the others, which a rewrite of a settings file would then lose for good,
 * and which leave a model's answer meaning two things.
 */

import { quoteText } from './text.js';

/** The index just past the string that opens at `start` (a `"`), or the text's end. */
export const endOfString = (json: string, start: number): number => {
  for (let at = start + 1; at < json.length; at += 1) {
    const char = json[at];
    if (char === '\\') at += 1;
    else if (char === '"') return at + 1;
  }
  return json.length;
};

/** The only whitespace JSON allows between its tokens. */
const JSON_WHITESPACE = ' \t\n\r';

/**
 * Calls `visit` with each key of a JSON document (valid JSON), in the order of the text: the key,
 * where its string starts and ends (its quotes included), and the keys its object gave before it;
 * stops at the first `visit` that returns true. A scan of the text: a parsed object holds neither
 * a key given twice nor, for keys that read as array indices, their order.
 */
export const visitKeys = (
  json: string,
  visit: (key: string, start: number, end: number, before: ReadonlySet<string>) => boolean,
): void => {
  // The keys seen in each open object, innermost last; an open array holds none.
  const open: Array<Set<string> | undefined> = [];
  // The punctuation before a string: a key follows an object's `{` or `,`.
  let before = '';
  for (let at = 0; at < json.length;) {
    const char = json[at]!;
    if (char === '"') {
      const end = endOfString(json, at);
      const keys = open.at(-1);
      if (keys !== undefined && (before === '{' || before === ',')) {
        const key = JSON.parse(json.slice(at, end)) as string;
        if (visit(key, at, end, keys)) return;
        keys.add(key);
      }
      before = '"';
      at = end;
      continue;
    }
    if (char === '{') open.push(new Set());
    else if (char === '[') open.push(undefined);
    else if (char === '}' || char === ']') open.pop();
    if (!JSON_WHITESPACE.includes(char)) before = char;
    at += 1;
  }
};

/**
 * The first key of a JSON document (valid JSON) that an object of it gives twice, or undefined
 * when none does. A scan of the text: the parsed value no longer holds the key given first.
 */
export const findDuplicateKey = (json: string): string | undefined => {
  let twice: string | undefined;
  visitKeys(json, (key, _start, _end, before) => {
    if (before.has(key)) twice = key;
    return twice !== undefined;
  });
  return twice;
};

/**
 * Why a JSON document (valid JSON) says two things, in words (`it gives the key "pairs" twice in
 * one object`), or undefined when no object of it gives a key twice.
 */
export const repeatedKeyReason = (json: string): string | undefined => {
  const twice = findDuplicateKey(json);
  return twice === undefined ? undefined : `it gives the key ${quoteText(twice)} twice in one object`;
};
