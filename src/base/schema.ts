/**
 * How a zod issue reads in an error message: its path in the document as code would write it
 * (`notes.sessions[0].facts[1]`), then what is wrong there. Every decoder of an input document
 * names the offending field this way.
 */
import type { z } from 'zod';
import { clipEnd } from './text.js';

/** A zod issue path as code would write it: `a.b[0].c`, or `(root)` for the document itself. */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (out, part) =>
      typeof part === 'number' ? `${out}[${part}]` : out === '' ? String(part) : `${out}.${String(part)}`,
    '',
  ) || '(root)';

/**
 * One line for `issue`, its path under `root` first. A message that is a predicate ("is not an
 * array") follows the path after a space; one starting with a colon (a reason another
 * validator gave) follows it directly.
 */
export const describeIssue = (root: ReadonlyArray<PropertyKey>, issue: z.core.$ZodIssue): string => {
  const where = formatPath([...root, ...issue.path]);
  return issue.message.startsWith(':') ? `${where}${issue.message}` : `${where} ${issue.message}`;
};

/** What kind of JSON value this is, in words: `null`, `an array`, `a string`, ... */
export const describeKind = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;

/** Longest value quoted in a message: a 10 MB field must not make a 10 MB message. */
const QUOTE_LIMIT = 80;

/** A value as JSON for a message, clipped; its kind in words when it has no JSON form. */
export const quoteValue = (value: unknown): string => {
  try {
    const json = JSON.stringify(value);
    return json === undefined ? describeKind(value) : clipEnd(json, QUOTE_LIMIT);
  } catch {
    return describeKind(value);
  }
};

/** Issues listed in one message at most; the rest are counted. */
const LISTED_ISSUES = 10;

/** Every issue as `path: message`, joined by `; `; past the tenth, only how many more there are. */
export const formatIssues = (issues: ReadonlyArray<z.core.$ZodIssue>): string => {
  const listed = issues.slice(0, LISTED_ISSUES).map((issue) => `${formatPath(issue.path)}: ${issue.message}`);
  const more = issues.length - listed.length;
  return more > 0 ? `${listed.join('; ')}; and ${more} more` : listed.join('; ');
};
