/**
 * How a zod issue reads in an error message: its path in the document as code would write it
 * (`notes.sessions[0].facts[1]`), then what is wrong there. Every decoder of an input document
 * names the offending field this way.
 */
import type { z } from 'zod';
import { clipEndRedacted, withoutSecrets } from './secrets.js';
import { escapeForLine } from './text.js';

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
  const message = issueMessage(issue);
  return message.startsWith(':') ? `${where}${message}` : `${where} ${message}`;
};

/** What kind of JSON value this is, in words: `null`, `an array`, `an object`, `a string`, ... (`nothing` for a missing field). */
export const describeKind = (value: unknown): string =>
  value === undefined
    ? 'nothing (it is missing)'
    : value === null
      ? 'null'
      : Array.isArray(value)
        ? 'an array'
        : typeof value === 'object'
          ? 'an object'
          : `a ${typeof value}`;

/** A field's value in a message: a string quoted (clipped), any other value by its kind. */
export const describeValue = (value: unknown): string =>
  typeof value === 'string' ? quoteValue(value) : describeKind(value);

/**
 * What is wrong at an issue's path, in words: zod's own message, but for a field that is
 * missing, which zod words as received `undefined`.
 */
const issueMessage = (issue: z.core.$ZodIssue): string =>
  issue.code === 'invalid_type' && /received undefined$/u.test(issue.message)
    ? `is missing (expected ${String(issue.expected)})`
    : issue.message;

/** Longest value quoted in a message: a 10 MB field must not make a 10 MB message. */
const QUOTE_LIMIT = 80;

/**
 * A value as JSON for a message, clipped; its kind in words when it has no JSON form. A number
 * that is not finite (`1e400` parses to Infinity) is named as such: JSON would write it as null.
 * A secret in it is redacted before the clip, which could otherwise keep a part of one no shape
 * matches: the value may be anything an input held, and the message is printed and kept. What
 * JSON leaves raw and could break, hide or disguise a line (a C1 control, U+2028, a direction
 * override, ...) is written as its escape (`escapeForLine`), as `quoteText` writes it.
 */
export const quoteValue = (value: unknown): string => {
  if (typeof value === 'number' && !Number.isFinite(value)) return `${String(value)} (not a finite number)`;
  try {
    const json = JSON.stringify(withoutSecrets(value));
    return json === undefined ? describeKind(value) : escapeForLine(clipEndRedacted(json, QUOTE_LIMIT));
  } catch {
    return describeKind(value);
  }
};

/** Issues listed in one message at most; the rest are counted. */
const LISTED_ISSUES = 10;

/** Every issue as `path: message`, joined by `; `; past the tenth, only how many more there are. */
export const formatIssues = (issues: ReadonlyArray<z.core.$ZodIssue>): string => {
  const listed = issues.slice(0, LISTED_ISSUES).map((issue) => `${formatPath(issue.path)}: ${issueMessage(issue)}`);
  const more = issues.length - listed.length;
  return more > 0 ? `${listed.join('; ')}; and ${more} more` : listed.join('; ');
};
