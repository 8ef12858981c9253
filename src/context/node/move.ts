/**
 * A context carried from another branch (`moveContext`): copied, or merged into the context the
 * branch holds against the two contexts' common ancestor, which the record of what each took in
 * from the other (`carriedFrom`) points at in the context file's history.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { recordCarriedFrom, selectCarriedFrom } from '../carried.js';
import { removeContext, selectContext, selectQuarantined, upsertContext } from '../contextFile.js';
import { isSameContextKey, parseContextKey } from '../key.js';
import { mergeContextsReported } from '../merge.js';
import { selectLeftOut, withoutDeletionsSince } from '../mergeBase.js';
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

/** A common ancestor of two contexts, and where it was read. */
interface Ancestor {
  readonly context: SharedContext;
  readonly branch: string;
  readonly commit: string;
}

/**
 * The context a record points at, when it is an ancestor of the context there now: the file at
 * the recorded commit held the branch's context, and every commit since kept one (a context
 * removed, by `--remove-source` or a merge, and made anew later is no descendant of the old).
 */
const recordedAncestor = async (
  history: ContextHistory,
  record: CarriedFrom,
  at: ContextKey,
): Promise<Ancestor | undefined> => {
  const context = await contextAt(history, record.commit, at);
  return context !== undefined && (await history.keptSince(record.commit, at.branch, at.workstreamId))
    ? { context, branch: at.branch, commit: record.commit }
    : undefined;
};

/**
 * The common ancestors of the context here (`present`, under `key`) and the one arriving from
 * `source`: the source's context as this one last took it in, and this one's as the source last
 * took it in, each only while the context it points at is still an ancestor of the one there
 * now. When one was taken in after the other, the later alone; both in a criss-cross (each took
 * the other in at once); none when neither took the other in (or git cannot show it), and the
 * merge keeps everything of both.
 */
const commonAncestors = async (
  history: ContextHistory,
  present: SharedContext,
  moving: SharedContext,
  key: ContextKey,
  source: ContextKey,
): Promise<ReadonlyArray<Ancestor>> => {
  const recorded = [
    { record: selectCarriedFrom(present, source.branch), at: source },
    { record: selectCarriedFrom(moving, key.branch), at: key },
  ];
  const found: Ancestor[] = [];
  for (const { record, at } of recorded) {
    const ancestor = record === undefined ? undefined : await recordedAncestor(history, record, at);
    if (ancestor !== undefined) found.push(ancestor);
  }
  const [first, second] = found;
  if (first === undefined || second === undefined) return found;
  if (await history.isAncestor(second.commit, first.commit)) return [first];
  if (await history.isAncestor(first.commit, second.commit)) return [second];
  return found;
};

/** The note of a merge against `ancestors`, with what it left out as removed since. */
const mergedNote = (key: ContextKey, ancestors: ReadonlyArray<Ancestor>, leftOut: ReadonlyArray<string>): string => {
  const head = `branch ${key.branch} held a context of workstream ${key.workstreamId} too: the two are merged`;
  if (ancestors.length === 0) return head;
  const named = ancestors
    .map((ancestor) => `the context of branch ${ancestor.branch} at commit ${ancestor.commit.slice(0, 7)}`)
    .join(' and ');
  const shown = leftOut.slice(0, LEFT_OUT_SHOWN).map(redactSecrets);
  const more = leftOut.length > LEFT_OUT_SHOWN ? ` and ${leftOut.length - LEFT_OUT_SHOWN} more` : '';
  return `${head} against their common ancestor${ancestors.length === 1 ? '' : 's'} (${named}): what either removed since stays removed${
    leftOut.length === 0 ? '' : `; left out as removed since: ${shown.join(', ')}${more}`
  }`;
};

/** How many of the entries a merge left out as removed its note names one by one. */
const LEFT_OUT_SHOWN = 20;

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
      const keptApart = moving === undefined ? selectQuarantined(file, source.right) : undefined;
      if (keptApart !== undefined)
        return E.left({
          code: 'corrupt',
          message: `the context of workstream ${redactSecrets(key.workstreamId)} on branch ${redactSecrets(from)} breaks a cap or its schema (${keptApart.problem}): it is kept apart and left untouched, so there is nothing to move; fix it by hand, then move again`,
        });
      if (moving === undefined) {
        const others = selectOtherKeys(file, key).filter((other) => other.repo === key.repo);
        return E.left({
          code: 'invalid',
          message: `nothing is stored for workstream ${key.workstreamId} on branch ${from}${others.length === 0 ? '' : `; it is stored on branch ${others.map((other) => redactSecrets(other.branch)).join(', ')}`}`,
        });
      }
      const present = O.toUndefined(selectContext(file, key));
      const arriving: SharedContext = { ...moving, key };
      const removing = move.removeSource === true;
      // A context removed from its branch is gone: one made there later is no descendant of it, so nothing records it.
      const taken = removing ? undefined : await takenAt(input, moving, source.right);
      const ancestors =
        present === undefined ? [] : await commonAncestors(input.history, present, moving, key, source.right);
      const bases = ancestors.map((ancestor) => ancestor.context);
      const sides =
        present === undefined
          ? [arriving]
          : [withoutDeletionsSince(present, arriving, bases), withoutDeletionsSince(arriving, present, bases)];
      const leftOut =
        present === undefined
          ? []
          : [...new Set([...selectLeftOut(present, sides[0]!), ...selectLeftOut(arriving, sides[1]!)])];
      // The context here keeps its decisions' ids; those arriving take the next free ones where they clash.
      const merged = sides.length === 2 ? mergeContextsReported(sides[0]!, sides[1]!, 'ours') : undefined;
      // A copy took in what the source had taken in; a merge keeps this context's own record.
      const context = recordCarriedFrom(
        merged === undefined ? arriving : { ...merged.context, key },
        ((present ?? moving).carriedFrom ?? []).filter((entry) => !removing || entry.branch !== source.right.branch),
        taken,
      );
      const kept = removing ? removeContext(file, source.right) : file;
      return E.right({
        file: upsertContext(kept, context),
        context,
        sources: sides,
        ...(merged === undefined ? {} : { dropped: merged.dropped }),
        sessionsFrom: { key: source.right, keep: !removing },
        notes: present === undefined ? [] : [mergedNote(key, ancestors, leftOut)],
      });
    },
  });
};
