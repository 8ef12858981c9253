/**
 * The context file as a write reads it, under the lock: a broken file is moved aside and
 * reported (the write stops there), but one with conflict markers is only refused; the two
 * sides of a conflict are merged, with their common ancestor when git has it, so a side's
 * deletions stand.
 */
import * as E from 'fp-ts/lib/Either.js';
import { hasConflictMarkers } from '../conflictMarkers.js';
import { mergeContextFilesReported } from '../merge.js';
import { type ConflictFiles, selectMergeReadBackProblem } from '../mergeReadBack.js';
import type { ContextFile, DroppedEntry } from '../model.js';
import { moveAside } from './files.js';
import type { ConflictReport } from './load.js';
import { MERGE_REPEATED_KEY, conflictByHand, readConflictStages, readContextFile, workstreamsOf } from './read.js';
import { located, type Result, type Scope } from './scope.js';
import type { Observed } from './snapshot.js';

/** The context file as a write reads it. */
export interface ForWrite {
  /** What the edit starts from: the file, the two sides of a conflict merged, or a new file. */
  readonly file: ContextFile;
  /** The file as decoded from disk, when it was one file. */
  readonly onDisk?: ContextFile;
  readonly mergedConflict?: ConflictReport;
  /** The two sides of the conflict merged, to say which one an entry kept apart comes from. */
  readonly conflictSides?: ConflictFiles;
  readonly dropped: ReadonlyArray<DroppedEntry>;
  /** Set when the file was read only once a typo was set right: it is written back clean. */
  readonly repaired?: string;
}

/**
 * The context file to change, under the lock: a broken file is moved aside and reported (the
 * write stops there), one holding one key twice or with conflict markers whose sides cannot be read is refused and left
 * as it is; the two sides of a conflict (from the index during a merge) are merged.
 */
export const readForWrite = async (scope: Scope, observed: Observed): Result<ForWrite> => {
  const onDisk = await readContextFile(scope);
  if (E.isLeft(onDisk)) return onDisk;
  const read = await readConflictStages(scope, observed, onDisk.right);
  if (E.isLeft(read)) return read;
  const empty: ContextFile = { kind: scope.kind, contexts: [] };
  switch (read.right.kind) {
    case 'absent':
      return E.right({ file: empty, dropped: [] });
    case 'file':
      return E.right({
        file: read.right.file,
        onDisk: read.right.file,
        dropped: [],
        ...(read.right.repaired === undefined ? {} : { repaired: read.right.repaired }),
      });
    case 'conflict': {
      const { ours, theirs, base } = read.right;
      const merged = mergeContextFilesReported(ours, theirs, base);
      // Written, such a merge would hide a workstream or be moved aside as corrupt at the next write.
      const unreadable = selectMergeReadBackProblem(merged.file, { ours, theirs });
      if (unreadable !== undefined)
        return E.left(
          located(scope, scope.paths.json, {
            code: 'conflicted',
            message: `has merge conflict markers, and ${unreadable}; nothing was written and the file was left as it is: ${conflictByHand(scope)}`,
          }),
        );
      return E.right({
        file: merged.file,
        conflictSides: { ours, theirs },
        mergedConflict: {
          ours: workstreamsOf(ours),
          theirs: workstreamsOf(theirs),
          ...(base === undefined ? {} : { withAncestor: true }),
          ...(merged.identity === undefined ? {} : { identity: merged.identity }),
        },
        dropped: merged.dropped,
      });
    }
    case 'broken': {
      const broken = read.right.error;
      // Conflict markers are the user's to resolve: moved aside, the file's only copy of both sides would leave the checkout.
      if (hasConflictMarkers(read.right.text))
        return E.left(
          located(scope, scope.paths.json, {
            code: 'conflicted',
            message: `${broken.message}; nothing was written and the file was left as it is: ${conflictByHand(scope)}`,
          }),
        );
      // One key twice is a hand edit (a kept-apart entry set right beside the served one) or git's
      // wrong join: both entries are the user's to merge, so the file stays where they edit it.
      if (broken.repeatedKey === true)
        return E.left(
          located(scope, scope.paths.json, {
            ...broken,
            message: `${broken.message}; nothing was written and the file was left as it is: ${MERGE_REPEATED_KEY}`,
          }),
        );
      const backup = await moveAside(scope.paths.json, scope.now());
      return E.left(
        located(scope, scope.paths.json, {
          code: 'corrupt',
          message: E.isLeft(backup)
            ? `${broken.message}; it could not be moved aside (${backup.left.message})`
            : `${broken.message}; moved aside to ${scope.display(backup.right)}`,
          ...(E.isRight(backup) ? { backup: backup.right } : {}),
        }),
      );
    }
  }
};
