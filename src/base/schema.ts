/**
 * How a zod issue reads in an error message: its path in the document as code would write it
 * (`notes.sessions[0].facts[1]`), then what is wrong there. Every decoder of an input document
 * names the offending field this way.
 */
import type { z } from 'zod';

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
