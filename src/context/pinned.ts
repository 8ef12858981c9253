/**
 * The pinned-rules section. The tool's own rules come first and bind every role; a rule a user
 * pinned is marked as theirs, with who pinned it, so text from a repository never passes for
 * the tool's. Pinned rules are never truncated in a bundle, so they must fit its largest pinned
 * budget whole, marks included: pinning refuses a rule that would not, and decoding keeps apart
 * a context whose rules do not.
 */
import { number } from '../base/count.js';
import { collapseWhitespace } from '../base/text.js';
import { checkedList } from './arguments.js';
import { DEFAULT_PINNED_RULES } from './model.js';
import { clipEndRedacted } from './secrets.js';

/** The header line of the pinned-rules section. */
export const PINNED_HEADER = '## Pinned rules';

/** The most characters the pinned section may take, header included (the spec's 250–350 range). */
export const PINNED_SECTION_MAX = 350;

/** True for a rule that comes with the tool: it cannot be unpinned. */
export const isToolRule = (rule: string): boolean => DEFAULT_PINNED_RULES.includes(rule);

/** The name of who pinned a rule, as a mark shows it: the name of `Name <email>`, clipped; `a user` when unknown. */
export const pinnerName = (by: string | undefined): string => {
  const name = collapseWhitespace((by ?? '').replace(/\s*<[^>]*>\s*$/u, ''));
  return name === '' ? 'a user' : clipEndRedacted(name, 16);
};

/**
 * Who pinned `rule`, read from the record's own entries only: a rule is untrusted text, and
 * `constructor` or `__proto__` must not read what every object inherits.
 */
const pinnerOf = (by: Readonly<Record<string, string>> | undefined, rule: string): string | undefined =>
  by !== undefined && Object.hasOwn(by, rule) ? by[rule] : undefined;

/** The mark a user's rule carries in a bundle: `[pinned by NAME] `. */
export const pinnedMark = (by: string | undefined): string => `[pinned by ${pinnerName(by)}] `;

/**
 * The tool's rules (also one a hand edit removed), then the users' rules, each with its mark, or
 * (`recorded`) with it only where who pinned it is recorded.
 */
const markedRuleTexts = (
  rules: ReadonlyArray<string>,
  by: Readonly<Record<string, string>>,
  marks: 'every' | 'recorded',
): ReadonlyArray<string> => [
  ...DEFAULT_PINNED_RULES,
  ...rules
    .filter((rule) => !isToolRule(rule))
    .map((rule) =>
      marks === 'recorded' && pinnerOf(by, rule) === undefined
        ? collapseWhitespace(rule)
        : `${pinnedMark(pinnerOf(by, rule))}${collapseWhitespace(rule)}`,
    ),
];

/**
 * The rules a bundle shows, in order: every rule of the tool's (also one a hand edit removed),
 * then the users' rules, each with its mark.
 */
export const pinnedRuleTexts = (
  rules: ReadonlyArray<string>,
  by: Readonly<Record<string, string>> = {},
): ReadonlyArray<string> => markedRuleTexts(rules, by, 'every');

/** One rule as a bundle line. */
export const pinnedLine = (rule: string): string => `- ${collapseWhitespace(rule)}`;

const sectionLength = (texts: ReadonlyArray<string>): number =>
  [PINNED_HEADER, ...texts.map(pinnedLine)].join('\n').length;

/** The length of the pinned section of `rules`, as every bundle renders it. */
export const pinnedSectionLength = (rules: ReadonlyArray<string>, by: Readonly<Record<string, string>> = {}): number =>
  sectionLength(pinnedRuleTexts(rules, by));

/**
 * The length of the pinned section as the releases that pinned `rules` counted it: a rule whose
 * pinner is recorded with its mark, as this version pins it; one without (pinned by a release
 * before marks, which recorded no pinner and counted none, or whose pinner such a release
 * dropped when it rewrote the file) without its mark. A bundle still shows every mark.
 */
export const pinnedSectionLengthAsPinned = (
  rules: ReadonlyArray<string>,
  by: Readonly<Record<string, string>> = {},
): number => sectionLength(markedRuleTexts(rules, by, 'recorded'));

/**
 * Why `rules` cannot be pinned together, or undefined when they fit: counted as every bundle
 * renders them (`rendered`, for rules pinned now), or as the releases that pinned them counted
 * them (`asPinned`, for rules already stored: see `pinnedSectionLengthAsPinned`).
 */
export const pinnedRulesProblem = (
  rules: ReadonlyArray<string>,
  by: Readonly<Record<string, string>> = {},
  counted: 'rendered' | 'asPinned' = 'rendered',
): string | undefined => {
  checkedList(rules, 'rules', 'rules');
  // Who pinned what, when none (null), reads as nobody said.
  const pinners = typeof by === 'object' && by !== null ? by : {};
  const length = (counted === 'asPinned' ? pinnedSectionLengthAsPinned : pinnedSectionLength)(rules, pinners);
  return length <= PINNED_SECTION_MAX
    ? undefined
    : `pinned rules would take ${number(pinnedSectionLength(rules, pinners))} characters as rendered, over the ${PINNED_SECTION_MAX} every bundle reserves for them: unpin or shorten a rule`;
};

/** The rules as people read them in full (`show`, the dashboard): the tool's, then each user's with `(pinned by Name <email>)`. */
export const pinnedRuleLines = (context: {
  readonly pinnedRules: ReadonlyArray<string>;
  readonly pinnedBy?: Readonly<Record<string, string>>;
}): ReadonlyArray<string> => [
  ...DEFAULT_PINNED_RULES,
  ...context.pinnedRules
    .filter((rule) => !isToolRule(rule))
    .map((rule) => `${rule} (pinned by ${pinnerOf(context.pinnedBy, rule) ?? 'a user'})`),
];
