/**
 * The registered extraction rules, one row of the contract's fact table each. Rules read the
 * result defensively: a missing or mis-typed field yields no facts, never an exception.
 */
import { isBlank } from '../../base/text.js';
import { deepFreeze } from '../../persistent/freeze.js';
import type { ImplementerResult, ReviewerResult } from './contract.js';
import { readBoolean, readRecords, readString, readStrings } from './fields.js';
import { type ExtractionRule, type FactDraft, freeText, isPlaceholder, pathText } from './rule.js';

/** Text that shows something: text of invisible characters only (U+200B) is as blank as spaces. */
const nonEmpty = (text: string | undefined): text is string => text !== undefined && !isBlank(text);

const unique = (values: ReadonlyArray<string>): string[] => [...new Set(values)];

/** Mentions of a convention, pattern, naming or style rule in reviewer text. */
const CONVENTION_MENTION =
  /\b(?:conventions?|conventional|patterns?|naming|style[sd]?|styling|styleguide|camel\s?case|pascal\s?case|snake[_\s]case|kebab[-\s]case)\b/iu;

/** True when the text names a convention, pattern, naming or style rule. */
export const mentionsConvention = (text: string): boolean => CONVENTION_MENTION.test(text);

const statusRule: ExtractionRule<ImplementerResult> = {
  name: 'implementer.status',
  extract: (result, { taskSubject }) => {
    const status = readString(result, 'status');
    return nonEmpty(status)
      ? [{ subject: taskSubject, relation: 'completed_with', object: freeText(status), tags: ['decision'] }]
      : [];
  },
};

const summaryRule: ExtractionRule<ImplementerResult> = {
  name: 'implementer.summary',
  extract: (result, { taskSubject }) => {
    const summary = readString(result, 'summary');
    return nonEmpty(summary)
      ? [{ subject: taskSubject, relation: 'summary', object: freeText(summary), tags: ['decision'] }]
      : [];
  },
};

const filesChangedRule: ExtractionRule<ImplementerResult> = {
  name: 'implementer.files_changed',
  extract: (result, { taskSubject }) =>
    unique(
      [...readStrings(result, 'files_changed'), ...readStrings(result, 'files_modified')]
        .map(pathText)
        .filter((path) => path !== ''),
    ).map((path) => ({ subject: path, relation: 'modified_by', object: taskSubject, tags: ['file_change'] })),
};

const followUpRule: ExtractionRule<ImplementerResult> = {
  name: 'implementer.follow_up_actions',
  extract: (result, { taskSubject }) =>
    readStrings(result, 'follow_up_actions')
      .filter((action) => !isPlaceholder(action))
      .map((action) => ({
        subject: taskSubject,
        relation: 'requires',
        object: freeText(action),
        tags: ['dependency'],
      })),
};

const testsRule: ExtractionRule<ImplementerResult> = {
  name: 'implementer.tests',
  extract: (result, { taskSubject }) =>
    readRecords(result, 'tests').flatMap((test): FactDraft[] => {
      const command = readString(test, 'command');
      const passed = readBoolean(test, 'passed');
      if (!nonEmpty(command) || passed === undefined) return [];
      const object = freeText(`${command} ${passed ? 'passed' : 'failed'}`);
      return [{ subject: taskSubject, relation: 'tested_by', object, tags: ['test'] }];
    }),
};

const testFailuresRule: ExtractionRule<ImplementerResult> = {
  name: 'implementer.tests.failures',
  extract: (result, { taskSubject }) =>
    readRecords(result, 'tests').flatMap((test) =>
      readStrings(test, 'failures')
        .filter((failure) => !isPlaceholder(failure))
        .map((failure): FactDraft => ({
          subject: taskSubject,
          relation: 'test_failure',
          object: freeText(failure),
          tags: ['test', 'error'],
        })),
    ),
};

const blockedRule: ExtractionRule<ImplementerResult> = {
  name: 'implementer.blocked_by',
  extract: (result, { taskSubject }) => {
    const status = readString(result, 'status')?.trim().toLowerCase();
    if (status !== 'blocked' && status !== 'failed') return [];
    const summary = readString(result, 'summary');
    const object = nonEmpty(summary) ? freeText(summary) : `${status} with no reason given`;
    return [{ subject: taskSubject, relation: 'blocked_by', object, tags: ['error'] }];
  },
};

const assessmentRule: ExtractionRule<ReviewerResult> = {
  name: 'reviewer.assessment',
  extract: (result, { taskSubject }) => {
    const assessment = readString(result, 'assessment');
    return nonEmpty(assessment)
      ? [{ subject: taskSubject, relation: 'reviewed_as', object: freeText(assessment), tags: ['decision'] }]
      : [];
  },
};

const issueSubject = (issue: Readonly<Record<string, unknown>>, taskSubject: string): string => {
  const file = readString(issue, 'file');
  const path = file === undefined ? '' : pathText(file);
  return path === '' ? taskSubject : path;
};

const issuesRule: ExtractionRule<ReviewerResult> = {
  name: 'reviewer.issues',
  extract: (result, { taskSubject }) =>
    readRecords(result, 'issues').flatMap((issue): FactDraft[] => {
      const message = readString(issue, 'message');
      if (!nonEmpty(message)) return [];
      return [
        { subject: issueSubject(issue, taskSubject), relation: 'issue', object: freeText(message), tags: ['error'] },
      ];
    }),
};

const requiredFixesRule: ExtractionRule<ReviewerResult> = {
  name: 'reviewer.required_fixes',
  extract: (result, { taskSubject }) =>
    readStrings(result, 'required_fixes')
      .filter((fix) => !isPlaceholder(fix))
      .map((fix) => ({ subject: taskSubject, relation: 'must_fix', object: freeText(fix), tags: ['convention'] })),
};

const conventionsRule: ExtractionRule<ReviewerResult> = {
  name: 'reviewer.conventions',
  extract: (result, { taskSubject }) =>
    readRecords(result, 'issues').flatMap((issue): FactDraft[] => {
      const message = readString(issue, 'message');
      const fix = readString(issue, 'fix') ?? '';
      if (!nonEmpty(message) || !(mentionsConvention(message) || mentionsConvention(fix))) return [];
      return [
        {
          subject: issueSubject(issue, taskSubject),
          relation: 'convention',
          object: freeText(message),
          tags: ['convention'],
        },
      ];
    }),
};

/** The registered implementer rules, in the order they run. */
export const implementerRules: ReadonlyArray<ExtractionRule<ImplementerResult>> = deepFreeze([
  statusRule,
  summaryRule,
  filesChangedRule,
  followUpRule,
  testsRule,
  testFailuresRule,
  blockedRule,
]);

/** The registered reviewer rules, in the order they run. */
export const reviewerRules: ReadonlyArray<ExtractionRule<ReviewerResult>> = deepFreeze([
  assessmentRule,
  issuesRule,
  requiredFixesRule,
  conventionsRule,
]);
