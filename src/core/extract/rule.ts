import { refuseArgument } from '../../base/describe.js';
import type { FactTag } from '../fact.js';
import { clipEndRedacted } from '../../base/secrets.js';
import { collapseWhitespace, trimEndOf } from '../../base/text.js';

/** A fact as a rule proposes it; the extractor adds id, time, source and confidence. */
export interface FactDraft {
  readonly subject: string;
  readonly relation: string;
  readonly object: string;
  readonly tags: ReadonlyArray<FactTag>;
}

/** What a rule knows besides the result. */
export interface RuleContext {
  /** The dispatch's task id, normalized. */
  readonly taskId: string;
  /** `task:{taskId}`, the subject of task-level facts. */
  readonly taskSubject: string;
}

/** A named, pure extraction rule. A rule that throws becomes one warning naming it. */
export interface ExtractionRule<Result> {
  readonly name: string;
  readonly extract: (result: Result, context: RuleContext) => ReadonlyArray<FactDraft>;
}

/** The longest object taken from free text. */
export const FREE_TEXT_LIMIT = 120;
export { PATH_LIMIT, pathText } from '../fact.js';

/**
 * `text`, refused with a TypeError when it is no string (a rule's field read as null): a
 * programmer's mistake, said plainly rather than as a failure deep inside the text functions.
 */
const checkedText = (text: string): string => {
  if (typeof text !== 'string') refuseArgument('the text', text, 'a string');
  return text;
};

/**
 * Free text as a fact object: whitespace-collapsed, clipped to 120 characters ending in `...`,
 * with a secret the clip makes redacted.
 */
export const freeText = (text: string): string =>
  clipEndRedacted(collapseWhitespace(checkedText(text)), FREE_TEXT_LIMIT);

const PLACEHOLDERS = new Set([
  'none',
  'n/a',
  'na',
  'nil',
  'null',
  'nothing',
  '-',
  '--',
  '\u2014',
  '\u2013',
  'no follow-up',
  'no follow-ups',
  'no follow up',
  'no follow ups',
  'no follow-up actions',
  'no further action',
  'no further actions',
  'not applicable',
]);

/** The longest placeholder: an entry longer than this, once its final `.`s and `!`s are gone, is not one. */
const LONGEST_PLACEHOLDER = Math.max(...[...PLACEHOLDERS].map((placeholder) => placeholder.length));

/**
 * True for an entry that says "nothing here" (`none`, `n/a`, `-`, ...), compared
 * case-insensitively, final `.`s and `!`s aside. Linear in the entry's length.
 */
export const isPlaceholder = (text: string): boolean => {
  const bare = trimEndOf(collapseWhitespace(checkedText(text)), '.!');
  return bare === '' || (bare.length <= LONGEST_PLACEHOLDER && PLACEHOLDERS.has(bare.toLowerCase()));
};
