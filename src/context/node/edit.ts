/**
 * The edit API of the context shell: a change of one context (`updateContext`), a run's
 * outcome (`writeContext`), a merge conflict resolved (`resolveContext`) and a context carried
 * from another branch (`moveContext`). Each is an edit of the whole file, applied under the
 * lock by `editContext`; `None` when the feature flag is off (no file is touched).
 */
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { checkpointMismatch, type RepositorySnapshot } from '../checkpoint.js';
import { isSameContextKey, parseContextKey } from '../key.js';
import { mergeContexts } from '../merge.js';
import type { CliSessions, ContextError, SharedContext } from '../model.js';
import { selectOtherKeys } from '../notices.js';
import { removeContext, selectContext, upsertContext } from '../contextFile.js';
import { applyRunOutcome } from '../runOutcome.js';
import type { RunOutcome } from '../runInput.js';
import { emptySharedContext, markSummaryStale } from '../update.js';
import type { LoadedContext } from './load.js';
import type { ContextOptions, Result } from './scope.js';
import { editContext, type FileEdit } from './write.js';

/** A change to one context at time `at`, against the repository snapshot taken for the write. */
export type ContextChange = (
  context: SharedContext,
  at: number,
  snapshot: RepositorySnapshot,
) => E.Either<ContextError, SharedContext>;

/** The change of one context as an edit of the file: the context under the key, changed; the rest as it was. */
const editOne =
  (change: ContextChange): FileEdit =>
  (file, key, at, snapshot) => {
    const stored = O.toUndefined(selectContext(file, key));
    const current = stored ?? emptySharedContext(key);
    const changed = change(current, at, snapshot);
    if (E.isLeft(changed)) return changed;
    if (!isSameContextKey(changed.right.key, key))
      return E.left({ code: 'invalid', message: 'a change must keep the context under its own key' });
    const next = markSummaryStale(changed.right, { stale: checkpointMismatch(changed.right, snapshot).length > 0 });
    const contextChanged = next !== current;
    return E.right({
      file: contextChanged ? upsertContext(file, next) : file,
      context: stored === undefined && !contextChanged ? undefined : next,
      sources: contextChanged ? [current] : [],
      evidence: { before: current.evidenceLedger, after: next.evidenceLedger },
      notes: [],
    });
  };

/**
 * Applies `change` to the workstream's context under the file lock: read, change, write
 * atomically (context file, then dashboard). A change that returns the same context writes
 * nothing (unless the file itself needs it: a merge conflict, a migrated key; a dashboard out
 * of step with the JSON is rewritten); `sessions` are merged into the `*.local.json` file.
 * New claims must point at files git tracks and lines they have; a file that holds a secret
 * anywhere is not written. `None` when the feature flag is off (no file is touched).
 */
export const updateContext = (
  options: ContextOptions,
  change: ContextChange,
  sessions?: CliSessions,
): Result<O.Option<LoadedContext>> => editContext(options, editOne(change), sessions);

/**
 * Records how a run ended. After a verified checkpoint (`status: 'succeeded'`) the summary and
 * the rest of the working context are updated and a new checkpoint recorded; after a failure
 * only `failedStep`, `error` and `nextAction` are, and the last good summary stays. `None` when
 * the feature flag is off (no file is touched).
 */
export const writeContext = (options: ContextOptions, outcome: RunOutcome): Result<O.Option<LoadedContext>> =>
  updateContext(options, (context, at, snapshot) => applyRunOutcome(context, outcome, at, snapshot), outcome.sessions);

/**
 * Merges the two sides of a context file that a `git pull` or merge left with conflict
 * markers (union of decisions, claims and failures; the newer summary and checkpoint win) and
 * writes it back with its dashboard. `mergedConflict` on the result says whether there was
 * one; without one, nothing is written.
 */
export const resolveContext = (options: ContextOptions): Result<O.Option<LoadedContext>> =>
  updateContext(options, (context) => E.right(context));

/**
 * Carries the workstream's context stored under branch `from` to the branch the checkout is on
 * (or `options.branch`): after `git branch -m`, the context keyed by the old name. When the new
 * branch holds a context too, the two are merged as a merge conflict's sides are (see
 * `mergeContexts`); the tool sessions move with it. A note says when it merged. `None` when
 * the feature flag is off (no file is touched).
 */
export const moveContext = (options: ContextOptions, from: string): Result<O.Option<LoadedContext>> =>
  editContext(options, (file, key) => {
    const source = parseContextKey({ ...key, branch: from });
    if (E.isLeft(source)) return source;
    if (isSameContextKey(source.right, key))
      return E.left({
        code: 'invalid',
        message: `the context is already keyed under branch ${key.branch}: nothing to move`,
      });
    const moving = O.toUndefined(selectContext(file, source.right));
    if (moving === undefined) {
      const others = selectOtherKeys(file, key).filter((other) => other.repo === key.repo);
      return E.left({
        code: 'invalid',
        message: `nothing is stored for workstream ${key.workstreamId} on branch ${from}${others.length === 0 ? '' : `; it is stored on branch ${others.map((other) => other.branch).join(', ')}`}`,
      });
    }
    const present = O.toUndefined(selectContext(file, key));
    const arriving: SharedContext = { ...moving, key };
    const context = present === undefined ? arriving : { ...mergeContexts(present, arriving), key };
    return E.right({
      file: upsertContext(removeContext(file, source.right), context),
      context,
      sources: present === undefined ? [arriving] : [present, arriving],
      sessionsFrom: source.right,
      notes:
        present === undefined
          ? []
          : [`branch ${key.branch} held a context of workstream ${key.workstreamId} too: the two are merged`],
    });
  });
