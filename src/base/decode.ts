/**
 * What every zod decoder of the project shares: issue paths written as a reader writes them
 * (`pairs[3].assertions[0]`), values described in a few words, and messages kept short, since
 * the input they describe may be hostile and any size.
 */
import type { z } from 'zod';
import { clipEnd } from './text.js';

/** A zod issue path as `a.b[2].c`, or `(root)` for the value itself. */
export const formatIssuePath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (out, part) =>
      typeof part === 'number' ? `${out}[${part}]` : out === '' ? String(part) : `${out}.${String(part)}`,
    '',
  ) || '(root)';

/** What kind of JSON value this is, in words: `null`, `an array`, `a string`, ... */
export const describeValue = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;

/** Longest value quoted in a message: a 10 MB field must not make a 10 MB message. */
const QUOTE_LIMIT = 80;

/** A value as JSON for a message, clipped; its kind in words when it has no JSON form. */
export const quoteValue = (value: unknown): string => {
  try {
    const json = JSON.stringify(value);
    return json === undefined ? describeValue(value) : clipEnd(json, QUOTE_LIMIT);
  } catch {
    return describeValue(value);
  }
};

/** Issues listed in one message at most; the rest are counted. */
const LISTED_ISSUES = 10;

/** Every issue as `path: message`, joined by `; `; past the tenth, only how many more there are. */
export const formatIssues = (issues: ReadonlyArray<z.core.$ZodIssue>): string => {
  const listed = issues.slice(0, LISTED_ISSUES).map((issue) => `${formatIssuePath(issue.path)}: ${issue.message}`);
  const more = issues.length - listed.length;
  return more > 0 ? `${listed.join('; ')}; and ${more} more` : listed.join('; ');
};

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
