/**
 * The edit API of the context shell: a change of one context (`updateContext`), a run's
 * outcome (`writeContext`), a merge conflict resolved (`resolveContext`) and a context carried
 * from another branch (`moveContext`). Each is an edit of the whole file, applied under the
 * lock by `editContext`; `None` when the feature flag is off (no file is touched).
 */
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { describeError, kindOf } from '../../base/describe.js';
import { isEither, isFailure } from '../../base/failure.js';
import { isRecord, readOnce } from '../../base/record.js';
import { checkpointMismatch, type RepositorySnapshot } from '../checkpoint.js';
import { isSameContextKey, normalizeKeyPart, parseContextKey } from '../key.js';
import { mergeContextsReported, selectCapOverrun } from '../merge.js';
import { decodeContextFile, encodeContextFile } from '../schema.js';
import { redactSecrets } from '../secrets.js';
import { staleReasonText } from '../bundleLines.js';
import type { CliSessions, ContextError, ContextFile, ContextKey, SharedContext } from '../model.js';
import { selectOtherKeys } from '../notices.js';
import { removeContext, selectContext, selectQuarantined, upsertContext } from '../contextFile.js';
import { applyRunOutcome } from '../runOutcome.js';
import type { RunOutcome } from '../runInput.js';
import { emptySharedContext, markSummaryStale } from '../update.js';
import type { LoadedContext } from './load.js';
import type { ContextOptions, Result } from './scope.js';
import { type Edited, editContext, type FileEdit } from './write.js';

/** A Left of what the caller gave that is not of its kind: the shell's `invalid`, never a throw. */
const invalidArgument = (name: string, value: unknown, what: string, verb = 'is'): Result<O.Option<LoadedContext>> =>
  Promise.resolve(E.left({ code: 'invalid', message: `${name} ${verb} ${kindOf(value)}, not ${what}` }));

/**
 * A change to one context at time `at`, against the repository snapshot taken for the write;
 * `author` is who writes (`Name <email>`), when the write asked git: `writeContext` pinning rules
 * does, `updateContext` never does.
 */
export type ContextChange = (
  context: SharedContext,
  at: number,
  snapshot: RepositorySnapshot,
  author?: string,
) => E.Either<ContextError, SharedContext>;

/**
 * The context a caller's change answered, as a write would store it, or why it cannot be: one
 * whose fields are not a context's (`openDecisions: null`, a hole, a BigInt) is the caller's
 * mistake, refused as such before anything reads it, not failed on as a bug.
 */
const storableChange = (context: SharedContext, file: ContextFile): E.Either<ContextError, SharedContext> => {
  // Worded as the write's own check words what the reader would refuse.
  const refused = (why: string): E.Either<ContextError, never> =>
    E.left({ code: 'invalid', message: `refused to write a file the reader would reject: ${why}` });
  try {
    const stored = decodeContextFile(
      JSON.parse(JSON.stringify(encodeContextFile({ kind: file.kind, contexts: [context] }))),
      file.kind,
    );
    if (E.isLeft(stored)) return refused(stored.left.message);
    const [apart] = stored.right.quarantined ?? [];
    return apart === undefined ? E.right(context) : refused(apart.problem);
  } catch (error) {
    return E.left({
      code: 'invalid',
      message: `the change answered a context whose fields are not a context's: ${describeError(error)}`,
    });
  }
};

/** The change of one context as an edit of the file: the context under the key, changed; the rest as it was. */
const editOne =
  (change: ContextChange, callers = false): FileEdit =>
  ({ file, key, at, snapshot, author }) => {
    const stored = O.toUndefined(selectContext(file, key));
    const current = stored ?? emptySharedContext(key);
    // The change is the caller's function: an answer of another kind is their mistake, said so.
    let answer: unknown;
    try {
      answer = change(current, at, snapshot, author);
    } catch (error) {
      // The caller's function failing is the caller's to fix; the library's own changes never throw.
      if (!callers) throw error;
      return E.left({ code: 'invalid', message: `the change failed: ${describeError(error)}` });
    }
    if (!isEither(answer))
      return E.left({ code: 'invalid', message: `the change answered ${kindOf(answer)}, not an Either of a context` });
    if (E.isLeft(answer))
      // A Left of null or of a bare text would reach the caller as a failure without a code.
      return isFailure(answer.left)
        ? (answer as E.Left<ContextError>)
        : E.left({
            code: 'invalid',
            message: `the change failed with ${kindOf(answer.left)}, not a { code, message }`,
          });
    if (!isRecord(answer.right) || !isRecord(answer.right['key']))
      return E.left({ code: 'invalid', message: `the change answered ${kindOf(answer.right)}, not a context` });
    if (callers) {
      const storable = storableChange(answer.right as unknown as SharedContext, file);
      if (E.isLeft(storable)) return storable;
    }
    const changed = answer as E.Right<SharedContext>;
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
 * The edit of a checkpoint that gave no summary, with a note when the stored summary was stale:
 * the checkpoint verifies it as it stands, though it was written of files that changed since.
 */
const noteReverified =
  (file: ContextFile, key: ContextKey, snapshot: RepositorySnapshot) =>
  (edited: Edited): Edited => {
    const stored = O.toUndefined(selectContext(file, key));
    if (stored?.checkpoint === undefined || edited.context === undefined) return edited;
    const changed = checkpointMismatch(stored, snapshot);
    if (changed.length === 0 || snapshot.kind !== 'git') return edited;
    return {
      ...edited,
      notes: [
        ...edited.notes,
        `the summary was stale (${changed.map(staleReasonText).join(', ')} since its checkpoint) and is now verified as it stands at HEAD ${snapshot.head.slice(0, 7)}, since the checkpoint gave no summary: give one (--summary) if it no longer describes the work`,
      ],
    };
  };

/**
 * Applies `change` to the workstream's context under the file lock: read, change, write
 * atomically (context file, then dashboard). A change that returns the same context writes
 * nothing (unless the file itself needs it: a merge conflict, a migrated key; a dashboard out
 * of step with the JSON is rewritten); `sessions` are merged into the `*.local.json` file.
 * New claims must point at files git tracks and lines they have; a file that holds a secret
 * anywhere is not written. `None` when the feature flag is off (no file is touched). Where the
 * context folder is not there yet, `change` is also tried once before it is made, so that a
 * refused first write creates nothing: keep it pure.
 */
export const updateContext = (
  options: ContextOptions,
  change: ContextChange,
  sessions?: CliSessions,
): Result<O.Option<LoadedContext>> =>
  typeof change !== 'function'
    ? invalidArgument('the change', change, 'a function (context, at, snapshot, author) => Either')
    : sessions !== undefined && (typeof sessions !== 'object' || sessions === null)
      ? invalidArgument('the sessions', sessions, 'an object of tool sessions, or undefined', 'are')
      : editContext(options, { edit: editOne(change, true), ...(sessions === undefined ? {} : { sessions }) });

/**
 * Records how a run ended. After a verified checkpoint (`status: 'succeeded'`) the summary and
 * the rest of the working context are updated and a new checkpoint recorded; after a failure
 * only `failedStep`, `error` and `nextAction` are, and the last good summary stays. `None` when
 * the feature flag is off (no file is touched).
 */
export const writeContext = async (options: ContextOptions, given: RunOutcome): Result<O.Option<LoadedContext>> => {
  // An outcome that is none is refused as any outcome without a status is (applyRunOutcome's words).
  if (typeof given !== 'object' || given === null)
    return E.left({ code: 'invalid', message: 'a run outcome needs a status: succeeded or failed' });
  // Each field read once, here: a getter or a Proxy trap that throws is the caller's input at fault.
  let outcome: RunOutcome;
  try {
    outcome = readOnce(given) as RunOutcome;
  } catch (error) {
    return E.left({ code: 'invalid', message: `the run outcome could not be read: ${describeError(error)}` });
  }
  if (outcome.sessions !== undefined && (typeof outcome.sessions !== 'object' || outcome.sessions === null))
    return invalidArgument('the sessions', outcome.sessions, 'an object of tool sessions, or undefined', 'are');
  const edit = editOne((context, at, snapshot, author) =>
    applyRunOutcome(
      context,
      outcome.status === 'succeeded' && outcome.pinnedBy === undefined && author !== undefined
        ? { ...outcome, pinnedBy: author }
        : outcome,
      at,
      snapshot,
    ),
  );
  const written = await editContext(options, {
    edit:
      outcome.status === 'succeeded' && outcome.summary === undefined
        ? (input) => E.map(noteReverified(input.file, input.key, input.snapshot))(edit(input))
        : edit,
    ...(outcome.sessions === undefined ? {} : { sessions: outcome.sessions }),
    // Pinned rules are shown with who pinned them: git says who that is.
    author: outcome.status === 'succeeded' && (outcome.pinRules ?? []).length > 0 && outcome.pinnedBy === undefined,
  });
  return outcome.status === 'succeeded' ? E.map(O.map(warnUncommitted))(written) : written;
};

/**
 * A checkpoint just recorded over uncommitted edits or new files, said: a teammate who pulls the
 * context without them sees the summary stale, with no changed file to read.
 */
const warnUncommitted = (loaded: LoadedContext): LoadedContext => {
  const paths = loaded.context.checkpoint?.uncommitted ?? [];
  return paths.length === 0
    ? loaded
    : {
        ...loaded,
        warnings: [
          ...loaded.warnings,
          `the checkpoint was recorded over uncommitted edits of ${paths.slice(0, 5).join(', ')}${paths.length > 5 ? ` and ${paths.length - 5} more` : ''}: commit them with the context (new files too: git add -A), or teammates see the summary stale with no changed file to read`,
        ],
      };
};

/**
 * Merges the two sides of a context file that a `git pull` or merge left with conflict
 * markers (union of decisions, claims and failures; the newer summary and checkpoint win) and
 * writes it back with its dashboard. `mergedConflict` on the result says whether there was
 * one; without one, nothing is written.
 */
export const resolveContext = (options: ContextOptions): Result<O.Option<LoadedContext>> =>
  editContext(options, { edit: editOne((context) => E.right(context)), onlyRepairs: true });

const MERGED_NOTE_END = ': the two are merged';

/** True when the `moveContext` that loaded this merged into a context the branch already held, as its note says. */
export const isMergedMove = (loaded: LoadedContext): boolean =>
  loaded.notes.some((note) => note.startsWith('branch ') && note.endsWith(MERGED_NOTE_END));

/** How `moveContext` treats the source. */
export interface MoveOptions {
  /** Remove the context from the source branch too (a renamed branch); by default it stays, as another branch may still be on it. */
  readonly removeSource?: boolean;
}

/**
 * Carries the workstream's context stored under branch `from` to the branch the checkout is on
 * (or `options.branch`): a new branch starting from the context of the branch it was made from,
 * a renamed branch taking the context keyed by its old name (`removeSource`), or a merged
 * branch's decisions and claims carried into the branch it was merged into. The source keeps
 * its context unless `removeSource`. When the branch holds a context too, the two are merged
 * as a merge conflict's sides are (see `mergeContexts`) but with nothing pushed out by a cap: a
 * result past one is refused, to be pruned by hand. The tool sessions come along; a note says
 * when it merged. `None` when the feature flag is off (no file is touched).
 */
export const moveContext = (
  options: ContextOptions,
  from: string,
  given: MoveOptions = {},
): Result<O.Option<LoadedContext>> => {
  if (typeof from !== 'string') return invalidArgument('the branch to move from', from, 'a string');
  // Move options that are none (null) read as none.
  const move: MoveOptions = typeof given === 'object' && given !== null ? given : {};
  return editContext(options, {
    edit: ({ file, key }) => {
      // A branch someone types is normalized first, as --branch and every key part are.
      const source = parseContextKey({ ...key, branch: normalizeKeyPart(from) });
      if (E.isLeft(source)) return source;
      if (isSameContextKey(source.right, key))
        return E.left({
          code: 'invalid',
          message: `the context is already keyed under branch ${key.branch}: nothing to move`,
        });
      const moving = O.toUndefined(selectContext(file, source.right));
      const keptApart = selectQuarantined(file, source.right);
      if (moving === undefined && keptApart !== undefined)
        return E.left({
          code: 'corrupt',
          message: `the context of workstream ${redactSecrets(key.workstreamId)} on branch ${redactSecrets(source.right.branch)} is kept apart (${keptApart.problem}): nothing was moved and it is left untouched; fix it by hand, then try again`,
        });
      if (moving === undefined) {
        const others = selectOtherKeys(file, key).filter((other) => other.repo === key.repo);
        return E.left({
          code: 'invalid',
          message: `nothing is stored for workstream ${key.workstreamId} on branch ${redactSecrets(source.right.branch)}${others.length === 0 ? '' : `; it is stored on branch ${others.map((other) => redactSecrets(other.branch)).join(', ')}`}`,
        });
      }
      const present = O.toUndefined(selectContext(file, key));
      const arriving: SharedContext = { ...moving, key };
      // The context here keeps its decisions' ids; those arriving take the next free ones where they clash.
      // A move drops nothing either side holds: past a cap it is refused, to be pruned by hand.
      const merged = present === undefined ? undefined : mergeContextsReported(present, arriving, 'ours', 'ignore');
      const context = merged === undefined ? arriving : { ...merged.context, key };
      const overrun = merged === undefined ? undefined : selectCapOverrun(context);
      if (overrun !== undefined)
        return E.left({
          code: 'invalid',
          message: `move refused: merged, the contexts of workstream ${redactSecrets(key.workstreamId)} on branches ${redactSecrets(key.branch)} and ${redactSecrets(source.right.branch)} would hold ${overrun} on either branch, then try again; nothing was moved`,
        });
      const kept = move.removeSource === true ? removeContext(file, source.right) : file;
      return E.right({
        file: upsertContext(kept, context),
        context,
        sources: present === undefined ? [arriving] : [present, arriving],
        sessionsFrom: { key: source.right, keep: move.removeSource !== true },
        notes:
          present === undefined
            ? []
            : [`branch ${key.branch} held a context of workstream ${key.workstreamId} too${MERGED_NOTE_END}`],
      });
    },
  });
};
