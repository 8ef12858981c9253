/**
 * A checkpoint is one record: the HEAD and files hash it was verified at, and the hash of the
 * summary it verified. Git joins a context file line by line, and the checkpoint's lines are not
 * one hunk: `tracked_files_hash_version` stands between the files hash and the summary hash, so
 * when both teammates recorded a checkpoint and only one changed the summary, git puts the HEADs
 * and files hashes between the markers and that one's summary hash outside them. A side rebuilt
 * from the markers then holds a checkpoint neither teammate recorded, which reads stale ("tracked
 * files changed") where its summary was verified, or verified where it was not. Nothing in the
 * file tells such a join: a line only one side changed stands outside the markers, and in a
 * `diff3` base too, exactly as one both sides changed alike. Only each side whole, as git holds it,
 * does.
 */
import { contextKeyId } from './key.js';
import type { Checkpoint, ContextFile, SharedContext } from './model.js';

/** The checkpoint of each context of `file`, by key. */
const checkpointsByKey = (file: ContextFile): ReadonlyMap<string, Checkpoint | undefined> =>
  new Map(file.contexts.map((context) => [contextKeyId(context.key), context.checkpoint]));

const isSameCheckpoint = (a: Checkpoint | undefined, b: Checkpoint | undefined): boolean =>
  JSON.stringify(a) === JSON.stringify(b);

/** `context` holding `checkpoint` (none when undefined); the very same context when it already does. */
const withCheckpoint = (context: SharedContext, checkpoint: Checkpoint | undefined): SharedContext => {
  if (isSameCheckpoint(context.checkpoint, checkpoint)) return context;
  const { checkpoint: _, ...rest } = context;
  return checkpoint === undefined ? rest : { ...rest, checkpoint };
};

/** `file` with `change` applied to each context; the very same file when nothing changed. */
const mapContexts = (file: ContextFile, change: (context: SharedContext) => SharedContext): ContextFile => {
  const contexts = file.contexts.map(change);
  return contexts.every((context, index) => context === file.contexts[index]) ? file : { ...file, contexts };
};

/**
 * `side`, a side rebuilt from conflict markers, with each context's checkpoint as `whole` (that
 * side as git holds it: the index's stage 2 for ours, 3 for theirs, or the commit merged in) records
 * it under the same key, so no checkpoint is assembled from both sides; everything else stays the
 * markers' (edits made by hand between them count). A context `whole` does not hold keeps its own.
 */
export const withCheckpointsOf = (side: ContextFile, whole: ContextFile): ContextFile => {
  const recorded = checkpointsByKey(whole);
  return mapContexts(side, (context) => {
    const id = contextKeyId(context.key);
    return recorded.has(id) ? withCheckpoint(context, recorded.get(id)) : context;
  });
};
