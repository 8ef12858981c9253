/**
 * What a run writes, and its validation: a successful run (after a verified checkpoint) may
 * give a summary, decisions, a checklist, claims and pinned rules; a failed run gives the step,
 * the error and the next action. Every input is checked (lengths, caps, secrets, known ids)
 * before anything is applied, so a refused run changes nothing.
 */
import * as E from 'fp-ts/lib/Either.js';
import { number } from '../base/count.js';
import { kindOf } from '../base/describe.js';
import { isRecord } from '../base/record.js';
import { collapseWhitespace, isBlank } from '../base/text.js';
import { type ClaimInput, recordClaim } from './ledger.js';
import {
  type ChecklistItem,
  type CliSessions,
  CONTEXT_LIMITS,
  type ContextError,
  DECISION_STATUSES,
  DEFAULT_PINNED_RULES,
  type DecisionStatus,
  type EvidenceLedger,
  isContextTime,
  type RunFailure,
  type SharedContext,
} from './model.js';
import { isToolRule, pinnedRulesProblem } from './pinned.js';
import { secretProblem } from './secrets.js';

/** What a run that passed its checks (tests green, diff applied) writes. Every field is optional. */
export interface SucceededRun {
  readonly status: 'succeeded';
  /** The new working summary; without it the current summary is re-verified at this state. */
  readonly summary?: string;
  readonly featureRequest?: string;
  readonly pinRules?: ReadonlyArray<string>;
  /** Who pins `pinRules` (`Name <email>`), shown with each; the Node shell gives the git author's identity by default. */
  readonly pinnedBy?: string;
  /** Rules users pinned, to unpin; the tool's own rules cannot be. */
  readonly unpinRules?: ReadonlyArray<string>;
  /** New open decisions; each gets the next id (`D1`, `D2`, ...). */
  readonly decisions?: ReadonlyArray<string>;
  /** Decisions to settle, by id. */
  readonly settle?: ReadonlyArray<{ readonly id: string; readonly status: DecisionStatus }>;
  /** Replaces the checklist: steps as text (not done yet) or as items. */
  readonly checklist?: ReadonlyArray<string | ChecklistItem>;
  /** Claims for the evidence ledger; one without the evidence it needs refuses the whole write. */
  readonly claims?: ReadonlyArray<ClaimInput>;
  /** Tool sessions to remember on this machine (written to the `*.local.json` file only). */
  readonly sessions?: CliSessions;
}

/** What a failed run writes: the step, the error and the next action, nothing else. */
export interface FailedRun {
  readonly status: 'failed';
  readonly failedStep: string;
  readonly error: string;
  readonly nextAction: string;
  readonly sessions?: CliSessions;
}

/** How a run ended, and what it leaves for the next session. */
export type RunOutcome = SucceededRun | FailedRun;

/** A refused input, in one line. */
export const invalid = (message: string): ContextError => ({ code: 'invalid', message });

/** A text `field` may not hold: it holds a secret (refused, naming the field). */
const noSecret = (field: string, text: string): E.Either<ContextError, string> => {
  const problem = secretProblem(field, text);
  return problem === undefined ? E.right(text) : E.left({ code: 'secret', message: problem });
};

const oneLine = (what: string, value: unknown, max: number): E.Either<ContextError, string> => {
  const text = typeof value === 'string' ? collapseWhitespace(value) : '';
  if (text === '') return E.left(invalid(`${what} is empty`));
  return text.length <= max
    ? noSecret(what, text)
    : E.left(invalid(`${what} is ${number(text.length)} characters, over the limit of ${number(max)}`));
};

const allLines = (
  what: string,
  values: ReadonlyArray<unknown> | undefined,
  max: number,
): E.Either<ContextError, string[]> => {
  const out: string[] = [];
  for (const [index, value] of (values ?? []).entries()) {
    const text = oneLine(`${what} ${index + 1}`, value, max);
    if (E.isLeft(text)) return text;
    out.push(text.right);
  }
  return E.right(out);
};

/** The list fields of a successful run: each, when given, must be a list (a caller's text or object is refused, not read as one). */
const LIST_FIELDS = ['pinRules', 'unpinRules', 'decisions', 'settle', 'checklist', 'claims'] as const;

const listsGiven = (outcome: SucceededRun): E.Either<ContextError, true> => {
  const wrong = LIST_FIELDS.find((name) => outcome[name] !== undefined && !Array.isArray(outcome[name]));
  if (wrong !== undefined) return E.left(invalid(`${wrong} is ${kindOf(outcome[wrong])}, not a list`));
  // Who pins is text, as the rules are: a number or an object is refused, not read as one.
  return outcome.pinnedBy === undefined || typeof outcome.pinnedBy === 'string'
    ? E.right(true)
    : E.left(invalid(`pinnedBy is ${kindOf(outcome.pinnedBy)}, not text`));
};

/** A value a caller gave, quoted in a message: text as JSON, anything else by its kind. */
const quoted = (value: unknown): string => (typeof value === 'string' ? JSON.stringify(value) : kindOf(value));

/** `at`, when a context file can hold it. */
export const validTime = (at: number): E.Either<ContextError, number> =>
  isContextTime(at)
    ? E.right(at)
    : E.left(invalid(`${String(at)} is not a time in whole epoch milliseconds between the years 0000 and 9999`));

/** A successful run's input once every field passed its checks. */
export interface ValidatedSuccess {
  readonly summary?: string;
  readonly featureRequest?: string;
  readonly pinnedRules: ReadonlyArray<string>;
  readonly pinnedBy: Readonly<Record<string, string>>;
  readonly decisions: ReadonlyArray<string>;
  readonly checklist?: ReadonlyArray<ChecklistItem>;
  readonly ledger: EvidenceLedger;
}

/**
 * Every limit counts UTF-16 units, as the bundle's budget does: said when that is not what a
 * reader counts, so a summary of emoji refused as twice their number is not a riddle.
 */
const countedInUnits = (text: string): string => {
  const points = [...text].length;
  return points === text.length
    ? ''
    : ` (counted in UTF-16 units, as every limit is: a character beyond U+FFFF, such as an emoji, counts as two; it holds ${number(points)} characters)`;
};

const validateSummary = (summary: unknown): E.Either<ContextError, string | undefined> => {
  if (summary === undefined) return E.right(undefined);
  if (typeof summary !== 'string') return E.left(invalid('the summary is not text'));
  const text = summary.trim();
  // An empty summary would wipe the one stored: leaving it out keeps that one (verified again).
  // Invisible characters only (U+200B) are as empty: such a summary shows nothing.
  if (isBlank(text)) return E.left(invalid('the summary is empty: leave it out to keep the current one'));
  return text.length <= CONTEXT_LIMITS.summary
    ? noSecret('the summary', text)
    : E.left(
        invalid(
          `the summary is ${number(text.length)} characters, over the limit of ${number(CONTEXT_LIMITS.summary)}${countedInUnits(text)}: keep it short, point at files instead`,
        ),
      );
};

/** Who pins a rule when nobody said. */
const UNKNOWN_PINNER = 'an unknown user';

/**
 * The rules after this run: the tool's own always (one a hand edit removed is back), then the
 * users' rules less those unpinned, then those pinned now, each added one with who pinned it.
 * The tool's own rules cannot be unpinned.
 */
const validateRules = (
  context: SharedContext,
  outcome: SucceededRun,
): E.Either<ContextError, Pick<ValidatedSuccess, 'pinnedRules' | 'pinnedBy'>> => {
  const added = allLines('pinned rule', outcome.pinRules, CONTEXT_LIMITS.rule);
  if (E.isLeft(added)) return added;
  const unpinned = outcome.unpinRules ?? [];
  const notText = Array.from(unpinned, (rule) => rule as unknown).findIndex((rule) => typeof rule !== 'string');
  if (notText >= 0) return E.left(invalid(`rule to unpin ${notText + 1} is ${kindOf(unpinned[notText])}, not text`));
  const removed = new Set(unpinned.map((rule) => collapseWhitespace(rule)));
  const own = [...removed].find(isToolRule);
  if (own !== undefined)
    return E.left(invalid(`"${own}" comes with the tool and cannot be unpinned: it binds every role of every session`));
  const unknown = [...removed].find((rule) => !context.pinnedRules.includes(rule));
  if (unknown !== undefined) return E.left(invalid(`"${unknown}" is not a pinned rule`));
  const rules = [
    ...DEFAULT_PINNED_RULES,
    ...context.pinnedRules.filter((rule) => !isToolRule(rule) && !removed.has(rule)),
  ];
  const pinners = Object.entries(context.pinnedBy ?? {}).filter(([rule]) => rules.includes(rule));
  const pinner = noSecret('who pins the rules', collapseWhitespace(outcome.pinnedBy ?? '') || UNKNOWN_PINNER);
  if (E.isLeft(pinner)) return pinner;
  const kept = rules.length;
  for (const rule of added.right)
    if (!rules.includes(rule)) {
      rules.push(rule);
      pinners.push([rule, pinner.right.slice(0, CONTEXT_LIMITS.keyPart)]);
    }
  // Entries, not assignments: a rule named `__proto__` is an entry like any other.
  const by: Record<string, string> = Object.fromEntries(pinners);
  // A rule pinned now must fit with every mark; the rules kept stay as the releases that pinned them counted them.
  const problem = pinnedRulesProblem(rules, by, rules.length > kept ? 'rendered' : 'asPinned');
  return problem === undefined ? E.right({ pinnedRules: rules, pinnedBy: by }) : E.left(invalid(problem));
};

const validateChecklist = (
  items: SucceededRun['checklist'],
): E.Either<ContextError, ReadonlyArray<ChecklistItem> | undefined> => {
  if (items === undefined) return E.right(undefined);
  if (items.length > CONTEXT_LIMITS.checklist)
    return E.left(invalid(`a checklist holds at most ${CONTEXT_LIMITS.checklist} steps`));
  const steps = allLines(
    'step',
    items.map((item) => (typeof item === 'string' ? item : item?.text)),
    CONTEXT_LIMITS.checklistItem,
  );
  return E.map((texts: string[]) =>
    texts.map((text, i) => ({ text, done: typeof items[i] === 'object' && items[i]?.done === true })),
  )(steps);
};

/** Each decision to settle is `{ id, status }` with a known id and a status a decision can have. */
const validateSettlements = (context: SharedContext, settle: SucceededRun['settle']): E.Either<ContextError, true> => {
  // Read as a list (holes as undefined), so a hole is refused as what it is, not skipped.
  for (const [index, entry] of Array.from(settle ?? [], (item) => item as unknown).entries()) {
    if (!isRecord(entry))
      return E.left(invalid(`decision to settle ${index + 1} is ${kindOf(entry)}, not { id, status }`));
    if (!context.openDecisions.some((decision) => decision.id === entry['id']))
      return E.left(invalid(`there is no decision ${quoted(entry['id'])}`));
    if (!(DECISION_STATUSES as ReadonlyArray<unknown>).includes(entry['status']))
      return E.left(
        invalid(
          `decision ${quoted(entry['id'])} cannot be settled as ${quoted(entry['status'])}: a status is ${DECISION_STATUSES.join(', ')}`,
        ),
      );
  }
  return E.right(true);
};

const validateClaims = (
  ledger: EvidenceLedger,
  claims: SucceededRun['claims'],
  at: number,
): E.Either<ContextError, EvidenceLedger> => {
  let current = ledger;
  for (const [index, claim] of Array.from(claims ?? [], (item) => item as unknown).entries()) {
    if (!isRecord(claim)) return E.left(invalid(`claim ${index + 1} is ${kindOf(claim)}, not a claim`));
    const next = recordClaim(current, { ...(claim as unknown as ClaimInput), at: (claim['at'] as number) ?? at });
    if (E.isLeft(next))
      return E.left({
        code: next.left.code === 'secret' ? 'secret' : 'invalid',
        message: `claim ${index + 1} refused: ${next.left.reason}`,
      });
    current = next.right;
  }
  return E.right(current);
};

/** Checks everything a successful run gives against `context`, before anything is applied. */
export const validateSuccess = (
  context: SharedContext,
  outcome: SucceededRun,
  at: number,
): E.Either<ContextError, ValidatedSuccess> => {
  const lists = listsGiven(outcome);
  if (E.isLeft(lists)) return lists;
  const summary = validateSummary(outcome.summary);
  if (E.isLeft(summary)) return summary;
  const feature =
    outcome.featureRequest === undefined
      ? E.right(undefined)
      : oneLine('the feature request', outcome.featureRequest, CONTEXT_LIMITS.featureRequest);
  if (E.isLeft(feature)) return feature;
  const rules = validateRules(context, outcome);
  if (E.isLeft(rules)) return rules;
  const given = allLines('decision', outcome.decisions, CONTEXT_LIMITS.decision);
  if (E.isLeft(given)) return given;
  // A decision already recorded (a retried command) is not added again.
  const decisions = given.right.filter(
    (text, i) => given.right.indexOf(text) === i && !context.openDecisions.some((known) => known.text === text),
  );
  if (context.openDecisions.length + decisions.length > CONTEXT_LIMITS.decisions)
    return E.left(invalid(`a context holds at most ${CONTEXT_LIMITS.decisions} decisions`));
  const settled = validateSettlements(context, outcome.settle);
  if (E.isLeft(settled)) return settled;
  const checklist = validateChecklist(outcome.checklist);
  if (E.isLeft(checklist)) return checklist;
  const ledger = validateClaims(context.evidenceLedger, outcome.claims, at);
  if (E.isLeft(ledger)) return ledger;
  return E.right({
    ...(summary.right === undefined ? {} : { summary: summary.right }),
    ...(feature.right === undefined ? {} : { featureRequest: feature.right }),
    ...rules.right,
    decisions,
    ...(checklist.right === undefined ? {} : { checklist: checklist.right }),
    ledger: ledger.right,
  });
};

/** Checks a failed run's step, error and next action; the failure as it will be recorded at `at`. */
export const validateFailure = (outcome: FailedRun, at: number): E.Either<ContextError, RunFailure> => {
  const step = oneLine('the failed step', outcome.failedStep, CONTEXT_LIMITS.runText);
  if (E.isLeft(step)) return step;
  const error = oneLine('the error', outcome.error, CONTEXT_LIMITS.runText);
  if (E.isLeft(error)) return error;
  const next = oneLine('the next action', outcome.nextAction, CONTEXT_LIMITS.runText);
  if (E.isLeft(next)) return next;
  return E.right({ failedStep: step.right, error: error.right, nextAction: next.right, at });
};
