/**
 * The pinned-rules section. Pinned rules are never truncated in a bundle, so they must fit its
 * largest pinned budget whole: `pinRule` refuses a rule that would not, and decoding refuses a
 * file whose rules do not.
 */
import { collapseWhitespace } from '../base/text.js';

/** The header line of the pinned-rules section. */
export const PINNED_HEADER = '## Pinned rules';

/** The most characters the pinned section may take, header included (the spec's 250–350 range). */
export const PINNED_SECTION_MAX = 350;

/** One rule as a bundle line. */
export const pinnedLine = (rule: string): string => `- ${collapseWhitespace(rule)}`;

/** The length of the pinned section of `rules`, as every bundle renders it. */
export const pinnedSectionLength = (rules: ReadonlyArray<string>): number =>
  [PINNED_HEADER, ...rules.map(pinnedLine)].join('\n').length;

/** Why `rules` cannot be pinned together, or undefined when they fit. */
export const pinnedRulesProblem = (rules: ReadonlyArray<string>): string | undefined => {
  const length = pinnedSectionLength(rules);
  return length <= PINNED_SECTION_MAX
    ? undefined
    : `pinned rules would take ${length} characters as rendered, over the ${PINNED_SECTION_MAX} every bundle reserves for them: unpin or shorten a rule`;
};
