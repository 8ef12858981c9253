/**
 * Keeping the order of a JSON settings file's keys through a rewrite. A JavaScript object puts
 * the keys that read as array indices (`"7"`, `"2024"`) before all others, in ascending order,
 * whatever order the text gave them: `{"web": ..., "7": ...}` parsed and written back would come
 * out `{"7": ..., "web": ...}`. Such keys are read with a mark before them, which makes them keys
 * like any other, kept where the text put them, and written back without it.
 */
import { visitKeys } from '../../base/jsonKeys.js';

/** The mark: a character no settings key starts with, written by `JSON.stringify` as `\u0000`. */
const MARK = '\u0000';

/**
 * True for a key read with the mark: one of digits (an array index, or a number past them,
 * which the mark leaves as it is), and one that starts with the mark itself, so that taking the
 * mark off gives every key back as the text wrote it.
 */
const isMarked = (key: string): boolean => /^\d+$/u.test(key) || key.startsWith(MARK);

/** A JSON document (valid JSON) whose keys that read as array indices carry the mark (see above). */
export const markIndexKeys = (json: string): string => {
  const parts: string[] = [];
  let from = 0;
  visitKeys(json, (key, start, end) => {
    if (isMarked(key)) {
      parts.push(json.slice(from, start), JSON.stringify(`${MARK}${key}`));
      from = end;
    }
    return false;
  });
  return parts.length === 0 ? json : `${parts.join('')}${json.slice(from)}`;
};

/**
 * The text `JSON.stringify` wrote, indented, of a value read through `markIndexKeys`, with the
 * mark taken off its keys. Indented, every key starts a line, and its string is followed by a
 * `:`, which no string of an array's is.
 */
export const unmarkIndexKeys = (written: string): string =>
  written.replace(/^([ \t]+)"\\u0000((?:[^"\\]|\\.)*)":/gmu, '$1"$2":');
