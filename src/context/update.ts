/**
 * Pure updates of a context and of a context file. A run's outcome is one event, applied in
 * one `produce` after every input has been validated: a successful run (after a verified
 * checkpoint) may rewrite the summary and records a new checkpoint; a failed run records only
 * what failed and what to do next, and leaves the last good summary as it was.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { deepFreeze, produce } from '../persistent/freeze.js';
import { collapseWhitespace } from '../base/text.js';
import { checkpointAt, type ContextStatus, type RepositorySnapshot } from './checkpoint.js';
import { isSameContextKey, compareContextKeys } from './key.js';
import { type ClaimInput, recordClaim } from './ledger.js';
import {
  type ChecklistItem,
  type CliSessions,
  CONTEXT_LIMITS,
  type ContextError,
  type ContextFile,
  type ContextKey,
  type Decision,
  type DecisionStatus,
  type DroppedEntry,
  DEFAULT_PINNED_RULES,
  type EvidenceLedger,
  type RunFailure,
  type SharedContext,
  isContextTime,
} from './model.js';
import { pinnedRulesProblem } from './pinned.js';
import { findContextSecret } from './schema.js';
import { redactSecrets, secretProblem } from './secrets.js';

/** What a run that passed its checks (tests green, diff applied) writes. Every field is optional. */
export interface SucceededRun {
  readonly status: 'succeeded';
  /** The new working summary; without it the current summary is re-verified at this state. */
  readonly summary?: string;
  readonly featureRequest?: string;
  readonly pinRules?: ReadonlyArray<string>;
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

const invalid = (message: string): ContextError => ({ code: 'invalid', message });

/** A text `field` may not hold: it holds a secret (refused, naming the field). */
const noSecret = (field: string, text: string): E.Either<ContextError, string> => {
  const problem = secretProblem(field, text);
  return problem === undefined ? E.right(text) : E.left({ code: 'secret', message: problem });
};

/**
 * How long a repeated failure counts as a retry of the same report rather than a new failure:
 * a caller that retries a command whose outcome it did not see must not record it twice.
 */
export const RETRY_WINDOW_MS = 10 * 60 * 1000;

/** A new context for `key`: the default pinned rules, no summary, nothing verified yet. */
export const emptySharedContext = (key: ContextKey): SharedContext =>
  deepFreeze({
    key: { repo: key.repo, branch: key.branch, workstreamId: key.workstreamId },
    featureRequest: '',
    pinnedRules: [...DEFAULT_PINNED_RULES],
    workingSummary: { text: '', stale: true },
    openDecisions: [],
    checklist: [],
    evidenceLedger: [],
    recentFailures: [],
  });

/** The context stored under `key` (compared as a tuple), if any. */
export const selectContext = (file: ContextFile, key: ContextKey): O.Option<SharedContext> =>
  O.fromNullable(file.contexts.find((context) => isSameContextKey(context.key, key)));

/** `file` with `context` stored under its key, replacing the one there; the very same file when nothing changed. */
export const upsertContext = (file: ContextFile, context: SharedContext): ContextFile => {
  const at = file.contexts.findIndex((stored) => isSameContextKey(stored.key, context.key));
  if (at !== -1 && file.contexts[at] === context) return file;
  const contexts =
    at === -1 ? [...file.contexts, context] : file.contexts.map((stored, i) => (i === at ? context : stored));
  return {
    kind: file.kind,
    ...(file.repository === undefined ? {} : { repository: file.repository }),
    contexts: contexts.sort((a, b) => compareContextKeys(a.key, b.key)),
  };
};

/** `file` without the context stored under `key`; the very same file when there is none. */
export const removeContext = (file: ContextFile, key: ContextKey): ContextFile =>
  file.contexts.some((stored) => isSameContextKey(stored.key, key))
    ? { ...file, contexts: file.contexts.filter((stored) => !isSameContextKey(stored.key, key)) }
    : file;

/** The context with its summary marked stale or fresh as `status` says; the same object when it already is. */
export const markSummaryStale = (context: SharedContext, status: Pick<ContextStatus, 'stale'>): SharedContext =>
  context.workingSummary.stale === status.stale
    ? context
    : produce(context, (draft) => {
        draft.workingSummary.stale = status.stale;
      });

const oneLine = (what: string, value: unknown, max: number): E.Either<ContextError, string> => {
  const text = typeof value === 'string' ? collapseWhitespace(value) : '';
  if (text === '') return E.left(invalid(`${what} is empty`));
  return text.length <= max
    ? noSecret(what, text)
    : E.left(invalid(`${what} is ${text.length} characters, over the limit of ${max}`));
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

const validTime = (at: number): E.Either<ContextError, number> =>
  isContextTime(at)
    ? E.right(at)
    : E.left(invalid(`${String(at)} is not a time in whole epoch milliseconds between the years 0000 and 9999`));

/** Records a claim in the context's ledger, or says why the claim is refused. */
export const recordContextClaim = (
  context: SharedContext,
  claim: ClaimInput,
): E.Either<ContextError, SharedContext> => {
  const ledger = recordClaim(context.evidenceLedger, claim);
  if (E.isLeft(ledger))
    return E.left({
      code: ledger.left.code === 'secret' ? 'secret' : 'invalid',
      message: `claim refused: ${ledger.left.reason}`,
    });
  return E.right(
    produce(context, (draft) => {
      draft.evidenceLedger = ledger.right as typeof draft.evidenceLedger;
    }),
  );
};

const nextDecisionNumber = (context: SharedContext): number =>
  context.openDecisions.reduce((most, decision) => Math.max(most, Number(decision.id.slice(1)) || 0), 0) + 1;

interface ValidatedSuccess {
  readonly summary?: string;
  readonly featureRequest?: string;
  readonly pinnedRules: ReadonlyArray<string>;
  readonly decisions: ReadonlyArray<string>;
  readonly checklist?: ReadonlyArray<ChecklistItem>;
  readonly ledger: EvidenceLedger;
}

const validateSummary = (summary: unknown): E.Either<ContextError, string | undefined> => {
  if (summary === undefined) return E.right(undefined);
  if (typeof summary !== 'string') return E.left(invalid('the summary is not text'));
  const text = summary.trim();
  return text.length <= CONTEXT_LIMITS.summary
    ? noSecret('the summary', text)
    : E.left(
        invalid(
          `the summary is ${text.length} characters, over the limit of ${CONTEXT_LIMITS.summary}: keep it short, point at files instead`,
        ),
      );
};

const validateRules = (
  context: SharedContext,
  outcome: SucceededRun,
): E.Either<ContextError, ReadonlyArray<string>> => {
  const added = allLines('pinned rule', outcome.pinRules, CONTEXT_LIMITS.rule);
  if (E.isLeft(added)) return added;
  const removed = new Set((outcome.unpinRules ?? []).map((rule) => collapseWhitespace(String(rule))));
  const unknown = [...removed].find((rule) => !context.pinnedRules.includes(rule));
  if (unknown !== undefined) return E.left(invalid(`"${unknown}" is not a pinned rule`));
  const rules = [...context.pinnedRules.filter((rule) => !removed.has(rule))];
  for (const rule of added.right) if (!rules.includes(rule)) rules.push(rule);
  const problem = pinnedRulesProblem(rules);
  return problem === undefined ? E.right(rules) : E.left(invalid(problem));
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

const validateSettlements = (context: SharedContext, settle: SucceededRun['settle']): E.Either<ContextError, true> => {
  const unknown = (settle ?? []).find((entry) => !context.openDecisions.some((decision) => decision.id === entry?.id));
  return unknown === undefined ? E.right(true) : E.left(invalid(`there is no decision ${JSON.stringify(unknown.id)}`));
};

const validateClaims = (
  ledger: EvidenceLedger,
  claims: SucceededRun['claims'],
  at: number,
): E.Either<ContextError, EvidenceLedger> => {
  let current = ledger;
  for (const [index, claim] of (claims ?? []).entries()) {
    const next = recordClaim(current, { ...claim, at: claim.at ?? at });
    if (E.isLeft(next))
      return E.left({
        code: next.left.code === 'secret' ? 'secret' : 'invalid',
        message: `claim ${index + 1} refused: ${next.left.reason}`,
      });
    current = next.right;
  }
  return E.right(current);
};

const validateSuccess = (
  context: SharedContext,
  outcome: SucceededRun,
  at: number,
): E.Either<ContextError, ValidatedSuccess> => {
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
    pinnedRules: rules.right,
    decisions,
    ...(checklist.right === undefined ? {} : { checklist: checklist.right }),
    ledger: ledger.right,
  });
};

const applySuccess = (
  context: SharedContext,
  outcome: SucceededRun,
  at: number,
  snapshot: RepositorySnapshot & { readonly kind: 'git' },
): E.Either<ContextError, SharedContext> =>
  E.map((valid: ValidatedSuccess) =>
    produce(context, (draft) => {
      const text = valid.summary ?? context.workingSummary.text;
      if (valid.summary !== undefined && valid.summary !== context.workingSummary.text)
        draft.workingSummary.updatedAt = at;
      draft.workingSummary.text = text;
      draft.workingSummary.stale = false;
      draft.checkpoint = checkpointAt(snapshot, text);
      if (valid.featureRequest !== undefined) draft.featureRequest = valid.featureRequest;
      draft.pinnedRules = [...valid.pinnedRules];
      const first = nextDecisionNumber(context);
      for (const [i, decision] of valid.decisions.entries())
        draft.openDecisions.push({ id: `D${first + i}`, text: decision, status: 'open' });
      for (const { id, status } of outcome.settle ?? []) {
        const decision = draft.openDecisions.find((entry) => entry.id === id);
        if (decision !== undefined) decision.status = status;
      }
      if (valid.checklist !== undefined) draft.checklist = valid.checklist.map((item) => ({ ...item }));
      draft.evidenceLedger = valid.ledger as typeof draft.evidenceLedger;
      draft.lastRun = { status: 'succeeded', at };
    }),
  )(validateSuccess(context, outcome, at));

const validateFailure = (outcome: FailedRun, at: number): E.Either<ContextError, RunFailure> => {
  const step = oneLine('the failed step', outcome.failedStep, CONTEXT_LIMITS.runText);
  if (E.isLeft(step)) return step;
  const error = oneLine('the error', outcome.error, CONTEXT_LIMITS.runText);
  if (E.isLeft(error)) return error;
  const next = oneLine('the next action', outcome.nextAction, CONTEXT_LIMITS.runText);
  if (E.isLeft(next)) return next;
  return E.right({ failedStep: step.right, error: error.right, nextAction: next.right, at });
};

/** True when `failure` repeats the last one recorded within `RETRY_WINDOW_MS`: a retry, not a new failure. */
const isRetriedFailure = (context: SharedContext, failure: RunFailure): boolean => {
  const last = context.recentFailures[context.recentFailures.length - 1];
  return (
    last !== undefined &&
    last.failedStep === failure.failedStep &&
    last.error === failure.error &&
    last.nextAction === failure.nextAction &&
    last.at !== undefined &&
    failure.at !== undefined &&
    failure.at >= last.at &&
    failure.at - last.at <= RETRY_WINDOW_MS
  );
};

const applyFailure = (context: SharedContext, outcome: FailedRun, at: number): E.Either<ContextError, SharedContext> =>
  E.map((failure: RunFailure) =>
    isRetriedFailure(context, failure)
      ? context
      : produce(context, (draft) => {
          draft.lastRun = { status: 'failed', ...failure };
          draft.recentFailures.push(failure);
          if (draft.recentFailures.length > CONTEXT_LIMITS.recentFailures)
            draft.recentFailures.splice(0, draft.recentFailures.length - CONTEXT_LIMITS.recentFailures);
        }),
  )(validateFailure(outcome, at));

/**
 * Applies a run's outcome at time `at`. A success needs a git snapshot, since its summary is
 * checkpointed against it; a failure changes only `lastRun` and `recentFailures`.
 */
export const applyRunOutcome = (
  context: SharedContext,
  outcome: RunOutcome,
  at: number,
  snapshot: RepositorySnapshot,
): E.Either<ContextError, SharedContext> => {
  const time = validTime(at);
  if (E.isLeft(time)) return time;
  switch (outcome?.status) {
    case 'succeeded':
      if (snapshot.kind !== 'git')
        return E.left({
          code: 'not_a_git_repository',
          message: `${snapshot.reason}: a summary is written only at a verified checkpoint, and outside a git repository nothing can be verified`,
        });
      // Conflict markers in the files are no verified state: no checkpoint is recorded over them.
      if (snapshot.unmerged !== undefined && snapshot.unmerged.length > 0)
        return E.left(
          invalid(
            `${snapshot.unmerged.length} ${snapshot.unmerged.length === 1 ? 'file has' : 'files have'} unresolved merge conflicts (${snapshot.unmerged.slice(0, 3).join(', ')}${snapshot.unmerged.length > 3 ? ', ...' : ''}): a checkpoint records verified work; resolve them and git add them first`,
          ),
        );
      return applySuccess(context, outcome, at, snapshot);
    case 'failed':
      return applyFailure(context, outcome, at);
    default:
      return E.left(invalid('a run outcome needs a status: succeeded or failed'));
  }
};

const decisionLine = (decision: Decision): string => `${decision.id} [${decision.status}] ${decision.text}`;
const failureLine = (failure: RunFailure): string => `${failure.failedStep}: ${failure.error}`;
const failureIdentity = (failure: RunFailure): string =>
  JSON.stringify([failure.at ?? null, failure.failedStep, failure.error, failure.nextAction]);

/**
 * What `after` no longer holds of the contexts in `before` (all stored under `key`): decisions
 * (by text: a merge may give one a new id), claims (by text: a repeated claim replaces the
 * earlier one, which is no loss) and failures. Each is reported with the cap that pushed it out.
 */
export const selectDroppedEntries = (
  key: ContextKey,
  before: ReadonlyArray<SharedContext>,
  after: SharedContext,
): ReadonlyArray<DroppedEntry> => {
  const decisions = new Set(after.openDecisions.map((decision) => decision.text));
  const claims = new Set(after.evidenceLedger.map((claim) => claim.claim));
  const failures = new Set(after.recentFailures.map(failureIdentity));
  const dropped: DroppedEntry[] = [];
  const seen = new Set<string>();
  const add = (entry: DroppedEntry, identity: string): void => {
    if (seen.has(identity)) return;
    seen.add(identity);
    dropped.push(entry);
  };
  for (const context of before) {
    for (const decision of context.openDecisions)
      if (!decisions.has(decision.text))
        add(
          { key, what: 'decision', text: decisionLine(decision), cap: CONTEXT_LIMITS.decisions },
          `d${decision.text}`,
        );
    for (const claim of context.evidenceLedger)
      if (!claims.has(claim.claim))
        add({ key, what: 'claim', text: claim.claim, cap: CONTEXT_LIMITS.claims }, `c${claim.claim}`);
    for (const failure of context.recentFailures)
      if (!failures.has(failureIdentity(failure)))
        add(
          { key, what: 'failure', text: failureLine(failure), cap: CONTEXT_LIMITS.recentFailures },
          `f${failureIdentity(failure)}`,
        );
  }
  return dropped;
};

/**
 * `context` with every secret in its text replaced by `[redacted: ...]` (see `redactSecrets`);
 * the same object when it holds none. For what a read shows of a file someone else wrote.
 */
export const redactContext = (context: SharedContext): SharedContext => {
  if (findContextSecret(context) === undefined) return context;
  return produce(context, (draft) => {
    const failure = (entry: { failedStep: string; error: string; nextAction: string }): void => {
      entry.failedStep = redactSecrets(entry.failedStep);
      entry.error = redactSecrets(entry.error);
      entry.nextAction = redactSecrets(entry.nextAction);
    };
    draft.featureRequest = redactSecrets(draft.featureRequest);
    draft.pinnedRules = draft.pinnedRules.map(redactSecrets);
    draft.workingSummary.text = redactSecrets(draft.workingSummary.text);
    for (const decision of draft.openDecisions) decision.text = redactSecrets(decision.text);
    for (const step of draft.checklist) step.text = redactSecrets(step.text);
    for (const claim of draft.evidenceLedger) {
      claim.claim = redactSecrets(claim.claim);
      for (const file of claim.files) file.path = redactSecrets(file.path);
      claim.symbols = claim.symbols.map(redactSecrets);
    }
    if (draft.lastRun?.status === 'failed') failure(draft.lastRun);
    for (const entry of draft.recentFailures) failure(entry);
  });
};
