/**
 * The repository as one call of the context shell reads it: its state and branch (one `git
 * status`), what it says about itself, and from them the key of the context, with what to say
 * about where HEAD is.
 */
import * as path from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import type { RepositorySnapshot } from '../checkpoint.js';
import { contextExclusion, isInside } from '../exclusion.js';
import { headNotice } from '../notices.js';
import { parseContextKey, sanitizeKeyPart } from '../key.js';
import { CONTEXT_DIRECTORY, contextFileNames } from '../layout.js';
import { CONTEXT_KINDS, type ContextFile, type ContextKey, type RepositoryIdentity } from '../model.js';
import { identifyRepository, type RepositoryFacts, resolveRepositoryKey } from '../repository.js';
import { readTextIfExists } from './files.js';
import { DETACHED, NO_BRANCH, readRepositoryFacts } from './git.js';
import { type Observed, observeSnapshot } from './snapshot.js';
import type { Result, Scope } from './scope.js';

/** The repository as read for one call: its state, and the key it gives the context. */
export interface Observation {
  readonly snapshot: RepositorySnapshot;
  /** The key with the computed (or named) repo part; a file may hold the context under another repo part. */
  readonly key: ContextKey;
  /** The repository identity this checkout computes; undefined when the caller named the repo. */
  readonly identity?: RepositoryIdentity;
  /** What the repository said about itself, the identity came from. */
  readonly facts?: RepositoryFacts;
  /** The repository as read: its index, deleted files, and where HEAD is. */
  readonly observed: Observed;
}

/**
 * The first commit a context file of either kind records as its repository's identity, from
 * its first bytes (it is written first): the identity is the repository's, whichever kind
 * recorded it.
 */
const recordedRoot = async (scope: Scope): Promise<string | undefined> => {
  for (const kind of [scope.kind, ...CONTEXT_KINDS.filter((other) => other !== scope.kind)]) {
    const head = await readTextIfExists(path.join(scope.paths.directory, contextFileNames(kind).json), 1024, true);
    const found = E.isRight(head)
      ? /"repository"\s*:\s*\{\s*"id"\s*:\s*"first-commit:([0-9a-f]{12})"/u.exec(head.right ?? '')
      : null;
    if (found?.[1] !== undefined) return found[1];
  }
  return undefined;
};

/**
 * Reads the repository for one call: its state and branch (one `git status`), and what it
 * says about itself, at once; from them, the key of the context.
 */
export const observe = async (scope: Scope): Result<Observation> => {
  const { named, location } = scope;
  const [observed, facts] = await Promise.all([
    observeSnapshot(scope.gitAnswers, location, contextExclusion(scope.trackedDirectory)),
    named.repo === undefined ? readRepositoryFacts(scope.gitAnswers, location, await recordedRoot(scope)) : undefined,
  ]);
  if (E.isLeft(observed)) return observed;
  if (facts !== undefined && E.isLeft(facts)) return facts;
  const identity = facts === undefined ? undefined : identifyRepository(facts.right);
  return E.map((key: ContextKey): Observation => ({
    snapshot: observed.right.snapshot,
    key,
    ...(identity === undefined ? {} : { identity }),
    ...(facts === undefined ? {} : { facts: facts.right }),
    observed: observed.right,
  }))(
    parseContextKey({
      repo: named.repo ?? identity!.id,
      branch: named.branch ?? branchKeyPart(observed.right),
      workstreamId: named.workstreamId,
    }),
  );
};

/**
 * The branch part of the key the checkout gives: its branch, or the one a rebase or bisect
 * works for, sanitized (a branch is named by whoever made it, so no name stops a command);
 * `(detached)` for a HEAD detached on its own. A branch literally named `(detached)` or
 * `(no branch)` is keyed as `refs/heads/(detached)`, apart from every detached HEAD.
 */
const branchKeyPart = (observed: Observed): string => {
  if (observed.head === 'detached') return DETACHED;
  if (observed.head === 'none') return NO_BRANCH;
  return branchKeyOf(observed.branch);
};

/** The branch part of the key of the branch `name`, as git names it. */
export const branchKeyOf = (name: string): string => {
  const part = sanitizeKeyPart(name);
  return part === DETACHED || part === NO_BRANCH ? `refs/heads/${part}` : part;
};

/** The key of this checkout in `file`, the file as it should be written, and what to tell the user. */
export const keyIn = (
  observation: Observation,
  file: ContextFile,
): { key: ContextKey; file: ContextFile; notes: string[] } => {
  if (observation.identity === undefined) return { key: observation.key, file, notes: [] };
  const { facts } = observation;
  const resolution = resolveRepositoryKey(file, observation.identity, {
    record: facts?.shallow !== true,
    ...(facts?.misrecordedRoot === undefined ? {} : { misrecorded: `first-commit:${facts.misrecordedRoot}` }),
  });
  return {
    key: { ...observation.key, repo: resolution.repo },
    file: resolution.file,
    notes: resolution.note === undefined ? [] : [resolution.note],
  };
};

/**
 * What to say about where HEAD is, when the caller did not name the branch: the branch a
 * rebase or bisect works for (a note), or a HEAD detached on its own (a warning: its key is
 * shared by every detached checkout).
 */
export const headNotes = (
  scope: Scope,
  observed: Observed,
  write: boolean,
): { readonly notes: ReadonlyArray<string>; readonly warnings: ReadonlyArray<string> } => {
  if (scope.named.branch !== undefined) return { notes: [], warnings: [] };
  const { head } = observed;
  const directory = scope.display(scope.paths.directory);
  if (head === 'rebase' || head === 'bisect')
    return { notes: [headNotice(head, sanitizeKeyPart(observed.branch), write, directory)], warnings: [] };
  if (head === 'detached') return { notes: [], warnings: [headNotice('detached', DETACHED, write, directory)] };
  return { notes: [], warnings: [] };
};

/** True when a sparse checkout leaves files of the context directory out of the working tree. */
export const outsideSparseCheckout = (observed: Observed, directory: string = CONTEXT_DIRECTORY): boolean =>
  [...observed.index.values()].some((entry) => entry.skipWorktree && isInside(directory, entry.path));
