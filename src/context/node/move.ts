/**
 * A context carried from another branch (`moveContext`): copied, or merged into the context the
 * branch holds against the two contexts' common ancestor, which the record of what each took in
 * from the other (`carriedFrom`) points at in the context file's history.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { recordCarriedFrom, selectCarriedFrom } from '../carried.js';
import { removeContext, selectContext, upsertContext } from '../contextFile.js';
import { isSameContextKey, parseContextKey } from '../key.js';
import { mergeContextsReported } from '../merge.js';
import { withoutDeletions } from '../mergeBase.js';
import type { CarriedFrom, ContextKey, SharedContext } from '../model.js';
import { selectOtherKeys } from '../notices.js';
import { redactSecrets } from '../secrets.js';
import { invalidArgument } from './edit.js';
import type { ContextHistory } from './history.js';
import type { LoadedContext } from './load.js';
import type { ContextOptions, Result } from './scope.js';
import { type EditInput, editContext } from './write.js';

/** How `moveContext` treats the source. */
export interface MoveOptions {
  /** Remove the context from the source branch too (a renamed branch); by default it stays, as another branch may still be on it. */
  readonly removeSource?: boolean;
}

/** The context of `key`'s branch and workstream in the file committed at `commit` (under another repository identity too). */
const contextAt = async (
  history: ContextHistory,
  commit: string,
  key: ContextKey,
): Promise<SharedContext | undefined> => {
  const file = await history.fileAt(commit);
  if (file === undefined) return undefined;
  return (
    O.toUndefined(selectContext(file, key)) ??
    file.contexts.find((context) => context.key.branch === key.branch && context.key.workstreamId === key.workstreamId)
  );
};

/** True when two contexts hold the same, whatever their keys. */
const isSameContent = (a: SharedContext, b: SharedContext): boolean =>
  JSON.stringify({ ...a, key: null }) === JSON.stringify({ ...b, key: null });

/** The common ancestor of two contexts, and where it was read. */
interface Ancestor {
  readonly context: SharedContext;
  readonly branch: string;
  readonly commit: string;
}

/**
 * The common ancestor of the context here (`present`, under `key`) and the one arriving from
 * `source`: the source's context as this one last took it in, or this one's as the source last
 * took it in, whichever was taken in later; undefined when neither took the other in (or git no
 * longer has the commit), and the merge keeps everything of both.
 */
const commonAncestor = async (
  history: ContextHistory,
  present: SharedContext,
  moving: SharedContext,
  key: ContextKey,
  source: ContextKey,
): Promise<Ancestor | undefined> => {
  const candidates = [
    { record: selectCarriedFrom(present, source.branch), key: source },
    { record: selectCarriedFrom(moving, key.branch), key },
  ].filter((candidate): candidate is { record: CarriedFrom; key: ContextKey } => candidate.record !== undefined);
  const [first, second] = candidates;
  if (
    first !== undefined &&
    second !== undefined &&
    (await history.isAncestor(first.record.commit, second.record.commit))
  )
    candidates.reverse();
  for (const { record, key: at } of candidates) {
    const context = await contextAt(history, record.commit, at);
    if (context !== undefined) return { context, branch: at.branch, commit: record.commit };
  }
  return undefined;
};

/**
 * What this move takes in, to record: the source branch at HEAD, when the file HEAD committed
 * holds the source's context exactly as it arrives (so a later move finds it there).
 */
const takenAt = async (
  { snapshot, history }: EditInput,
  moving: SharedContext,
  source: ContextKey,
): Promise<CarriedFrom | undefined> => {
  if (snapshot.kind !== 'git' || snapshot.head === '') return undefined;
  const committed = await contextAt(history, snapshot.head, source);
  return committed !== undefined && isSameContent(committed, moving)
    ? { branch: source.branch, commit: snapshot.head }
    : undefined;
};

/**
 * Carries the workstream's context stored under branch `from` to the branch the checkout is on
 * (or `options.branch`): a new branch starting from the context of the branch it was made from,
 * a renamed branch taking the context keyed by its old name (`removeSource`), or a merged
 * branch's decisions and claims carried into the branch it was merged into. The source keeps
 * its context unless `removeSource`. When the branch holds a context too, the two are merged
 * as a merge conflict's sides are (see `mergeContexts`), against their common ancestor when one
 * took the other in before (what either removed since stays removed); the tool sessions come
 * along. The context records the commit at which it took the source in, for the next move. A
 * note says when it merged. `None` when the feature flag is off (no file is touched).
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
    edit: async (input) => {
      const { file, key } = input;
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
          message: `nothing is stored for workstream ${key.workstreamId} on branch ${from}${others.length === 0 ? '' : `; it is stored on branch ${others.map((other) => redactSecrets(other.branch)).join(', ')}`}`,
        });
      }
      const present = O.toUndefined(selectContext(file, key));
      const arriving: SharedContext = { ...moving, key };
      const taken = await takenAt(input, moving, source.right);
      const ancestor =
        present === undefined ? undefined : await commonAncestor(input.history, present, moving, key, source.right);
      const sides =
        present === undefined
          ? [arriving]
          : ancestor === undefined
            ? [present, arriving]
            : [
                withoutDeletions(present, arriving, ancestor.context),
                withoutDeletions(arriving, present, ancestor.context),
              ];
      // The context here keeps its decisions' ids; those arriving take the next free ones where they clash.
      const merged = sides.length === 2 ? mergeContextsReported(sides[0]!, sides[1]!, 'ours') : undefined;
      // A copy took in what the source had taken in; a merge keeps this context's own record.
      const context = recordCarriedFrom(
        merged === undefined ? arriving : { ...merged.context, key },
        (present ?? moving).carriedFrom ?? [],
        taken,
      );
      const kept = move.removeSource === true ? removeContext(file, source.right) : file;
      return E.right({
        file: upsertContext(kept, context),
        context,
        sources: sides,
        ...(merged === undefined ? {} : { dropped: merged.dropped }),
        sessionsFrom: { key: source.right, keep: move.removeSource !== true },
        notes:
          present === undefined
            ? []
            : [
                `branch ${key.branch} held a context of workstream ${key.workstreamId} too: the two are merged${
                  ancestor === undefined
                    ? ''
                    : ` against their common ancestor (the context of branch ${ancestor.branch} at commit ${ancestor.commit.slice(0, 7)}): what either removed since stays removed`
                }`,
              ],
      });
    },
  });
};
