/**
 * A run's outcome applied to a context, as one event in one `produce` after every input has
 * been validated (`runInput.ts`): a successful run may rewrite the summary and records a new
 * checkpoint; a failed run records only what failed and what to do next, and leaves the last
 * good summary as it was. A failure repeated within a few minutes is a retry, not a new one.
 */
import * as E from 'fp-ts/lib/Either.js';
import { produce } from '../persistent/freeze.js';
import { number } from '../base/count.js';
import { refuseArgument } from '../base/describe.js';
import { checkedContext } from './arguments.js';
import { checkpointAt, type RepositorySnapshot } from './checkpoint.js';
import { CONTEXT_LIMITS, type ContextError, type RunFailure, type SharedContext } from './model.js';
import {
  type FailedRun,
  invalid,
  type RunOutcome,
  type SucceededRun,
  type ValidatedSuccess,
  validateFailure,
  validateSuccess,
  validTime,
} from './runInput.js';

/**
 * How long a repeated failure counts as a retry of the same report rather than a new failure:
 * a caller that retries a command whose outcome it did not see must not record it twice.
 */
export const RETRY_WINDOW_MS = 10 * 60 * 1000;

const nextDecisionNumber = (context: SharedContext): number =>
  context.openDecisions.reduce((most, decision) => Math.max(most, Number(decision.id.slice(1)) || 0), 0) + 1;

const applySuccess = (
  context: SharedContext,
  outcome: SucceededRun,
  at: number,
  snapshot: RepositorySnapshot & { readonly kind: 'git' },
): E.Either<ContextError, SharedContext> =>
  E.map((valid: ValidatedSuccess) =>
    produce(context, (draft) => {
      const text = valid.summary ?? context.workingSummary.text;
      // A new summary is a new entry: it does not carry the fields the old one held.
      if (text !== context.workingSummary.text) draft.workingSummary = { text, updatedAt: at, stale: false };
      else draft.workingSummary.stale = false;
      const { uncommitted, ...checkpoint } = checkpointAt(snapshot, text);
      draft.checkpoint = { ...checkpoint, ...(uncommitted === undefined ? {} : { uncommitted: [...uncommitted] }) };
      if (valid.featureRequest !== undefined) draft.featureRequest = valid.featureRequest;
      draft.pinnedRules = [...valid.pinnedRules];
      if (Object.keys(valid.pinnedBy).length === 0) delete draft.pinnedBy;
      else draft.pinnedBy = { ...valid.pinnedBy };
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

/**
 * A failed run: the last run, and one more recent failure. A retry (`isRetriedFailure`) adds no
 * failure, yet is the last run: after a run that succeeded since (a caller retrying a whole
 * sequence of commands, or the same step failing again), the context must not say the last run
 * succeeded.
 */
const applyFailure = (context: SharedContext, outcome: FailedRun, at: number): E.Either<ContextError, SharedContext> =>
  E.map((failure: RunFailure) =>
    isRetriedFailure(context, failure)
      ? context.lastRun?.status === 'failed'
        ? context
        : produce(context, (draft) => {
            draft.lastRun = { status: 'failed', ...failure };
          })
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
  // A context or a snapshot that is none is a programmer's mistake; an outcome or a time is input, refused as a Left.
  checkedContext(context);
  if (typeof snapshot !== 'object' || snapshot === null)
    refuseArgument('the snapshot', snapshot, 'a repository snapshot ({ kind: git or none, ... })');
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
            `${number(snapshot.unmerged.length)} ${snapshot.unmerged.length === 1 ? 'file has' : 'files have'} unresolved merge conflicts (${snapshot.unmerged.slice(0, 3).join(', ')}${snapshot.unmerged.length > 3 ? ', ...' : ''}): a checkpoint records verified work; resolve them and git add them first`,
          ),
        );
      return applySuccess(context, outcome, at, snapshot);
    case 'failed':
      return applyFailure(context, outcome, at);
    default:
      return E.left(invalid('a run outcome needs a status: succeeded or failed'));
  }
};
