/**
 * Loading a context: read-only, it reads git and the file at once, keys the context as the
 * repository says, and verifies it against the repository (the checkpoint, the diff since it,
 * the evidence files); a corrupt or conflicted file is reported and left as it is.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import type { BundleInput } from '../bundleModel.js';
import {
  type ChangedFile,
  checkpointMismatch,
  type ContextStatus,
  needsDiff,
  verifyCheckpoint,
} from '../checkpoint.js';
import { contextExclusion } from '../exclusion.js';
import type { SharedContextFlag } from '../flag.js';
import type {
  CliSessions,
  ContextError,
  ContextFile,
  ContextKey,
  ContextKind,
  DroppedEntry,
  RepositoryIdentity,
  SharedContext,
} from '../model.js';
import { elsewhereNotice, selectOtherKeys, selectRelatedContexts } from '../notices.js';
import { findContextSecret } from '../schema.js';
import { selectContext } from '../contextFile.js';
import { emptySharedContext, markSummaryStale, redactContext, redactKey, redactSessions } from '../update.js';
import { sessionsIgnoredBy } from './derived.js';
import { evidenceLineCounts, missingEvidencePaths } from './evidence.js';
import { branchNames, branchRenamedFrom, changedFiles } from './git.js';
import type { Observed } from './snapshot.js';
import { branchKeyOf, headNotes, keyIn, observe } from './observe.js';
import {
  dashboardOutOfStep,
  partialFileWarnings,
  quarantinedHere,
  readConflictStages,
  readContextFile,
  readFromIndex,
  reportUnusable,
  SPARSE_NOTE,
} from './read.js';
import {
  type ContextOptions,
  type ContextPaths,
  contextCommand,
  type Result,
  type Scope,
  whenEnabled,
} from './scope.js';
import { ignoredSessions, readSessionsFile, sessionsOf } from './toolSessions.js';

/** A context as loaded and verified against the repository. */
export interface LoadedContext extends BundleInput {
  readonly kind: ContextKind;
  readonly key: ContextKey;
  readonly flag: SharedContextFlag;
  /** False when nothing is stored under the key yet (the context is a new, empty one). */
  readonly stored: boolean;
  /** Tool sessions on this machine, from the `*.local.json` file. */
  readonly sessions: CliSessions;
  readonly paths: ContextPaths;
  /** Problems that did not stop the call (a derived file not written, a broken sessions file ignored). */
  readonly warnings: ReadonlyArray<string>;
  /** What the user should know (the repository key used is not the one computed; the file was re-keyed). */
  readonly notes: ReadonlyArray<string>;
  /** Set when this write merged the two sides of a merge conflict: the workstreams of each side. */
  readonly mergedConflict?: ConflictReport;
  /** What a cap pushed out in this write (a merge over a cap, the window of recent failures), entry by entry. */
  readonly dropped: ReadonlyArray<DroppedEntry>;
  /** The other keys of the file that hold this workstream (another branch, another repository key). */
  readonly elsewhere: ReadonlyArray<ContextKey>;
  /** The workstream's contexts on the other branches of this repository, redacted, when one is stored here. */
  readonly related: ReadonlyArray<SharedContext>;
  /**
   * True when this call wrote the dashboard: beside the JSON it wrote, or to regenerate it. False
   * for a read, and when writing it failed (a warning says why: the JSON was saved all the same).
   */
  readonly dashboardWritten: boolean;
  /** True when this call rewrote a dashboard that was out of step with the JSON (a merge, an interrupted write, another version's drawing). */
  readonly dashboardRegenerated: boolean;
  /**
   * The rule that keeps the tool sessions file out of git (`data/context/.gitignore:3: *.local.json`);
   * unset when git would commit it, or when this call did not ask git.
   */
  readonly sessionsIgnoredBy?: string;
}

/** The workstreams on each side of a conflicted context file. */
export interface ConflictReport {
  readonly ours: ReadonlyArray<string>;
  readonly theirs: ReadonlyArray<string>;
  /** Set when the sides recorded different repository identities: the one kept, and the one re-keyed to it. */
  readonly identity?: { readonly kept: RepositoryIdentity; readonly rekeyed: RepositoryIdentity };
  /** True when the merge knew the sides' common ancestor, so what a side removed since stays removed. */
  readonly withAncestor?: boolean;
}

/** What a read or a write found under the key, before it is verified against the repository. */
export type Found = Pick<
  LoadedContext,
  | 'key'
  | 'sessions'
  | 'warnings'
  | 'notes'
  | 'mergedConflict'
  | 'dropped'
  | 'elsewhere'
  | 'related'
  | 'branchesPresent'
  | 'renamedFrom'
  | 'dashboardWritten'
  | 'dashboardRegenerated'
  | 'sessionsIgnoredBy'
> & {
  /** The context stored under the key (redacted for showing), undefined when there is none. */
  readonly stored: SharedContext | undefined;
};

/** Verifies `context` against the repository: the checkpoint, the diff since it, the evidence files. */
const verify = async (scope: Scope, context: SharedContext, observed: Observed): Promise<ContextStatus> => {
  const { root } = scope.paths;
  const { snapshot } = observed;
  const diff: E.Either<ContextError, ReadonlyArray<ChangedFile>> = snapshot.kind === 'git' &&
  context.checkpoint !== undefined &&
  needsDiff(checkpointMismatch(context, snapshot))
    ? E.map((changes: ReadonlyArray<ChangedFile>) => [
        ...changes,
        // git diff leaves out new files it does not track yet: they are part of the work all the same.
        ...observed.untracked.map((path) => ({ status: '?', path })),
      ])(await changedFiles(root, context.checkpoint.gitHead))
    : E.right([]);
  const missingPaths = await missingEvidencePaths(root, context, observed);
  const evidence = {
    snapshot,
    changes: E.getOrElse((): ReadonlyArray<ChangedFile> => [])(diff),
    missingPaths,
    lineCounts: await evidenceLineCounts(root, context, observed, missingPaths),
    ...(E.isLeft(diff) ? { diffNote: diff.left.message } : {}),
  };
  return verifyCheckpoint(context, evidence, contextExclusion(scope.trackedDirectory));
};

/** The context stored under the key (or a new one), verified against the repository, with its sessions and warnings. */
export const loaded = async (scope: Scope, found: Found, observed: Observed): Promise<LoadedContext> => {
  const context = found.stored ?? emptySharedContext(found.key);
  const status = await verify(scope, context, observed);
  return {
    kind: scope.kind,
    key: found.key,
    flag: scope.flag,
    stored: found.stored !== undefined,
    context: markSummaryStale(context, status),
    status,
    sessions: redactSessions(found.sessions),
    paths: scope.paths,
    warnings: found.warnings,
    notes: found.notes,
    ...(found.mergedConflict === undefined ? {} : { mergedConflict: found.mergedConflict }),
    dropped: found.dropped,
    elsewhere: found.elsewhere,
    related: found.related,
    ...(found.branchesPresent === undefined ? {} : { branchesPresent: found.branchesPresent }),
    ...(found.renamedFrom === undefined ? {} : { renamedFrom: found.renamedFrom }),
    dashboardWritten: found.dashboardWritten,
    dashboardRegenerated: found.dashboardRegenerated,
    ...(found.sessionsIgnoredBy === undefined ? {} : { sessionsIgnoredBy: found.sessionsIgnoredBy }),
  };
};

/**
 * What to say about the other keys of the file that hold this workstream: where it is when
 * nothing is stored here (a renamed branch), and the same branch under another repository key
 * (a context written by a checkout that keyed the repository differently).
 */
const elsewhereNotes = (
  scope: Scope,
  key: ContextKey,
  stored: boolean,
  others: ReadonlyArray<ContextKey>,
  present: ReadonlyArray<string> | undefined,
  renamedFrom: ReadonlyArray<string> | undefined,
): string[] => {
  if (!stored) return others.length === 0 ? [] : [elsewhereNotice(key, others, scope.kind, present, renamedFrom)];
  return others
    .filter((other) => other.branch === key.branch && other.repo !== key.repo)
    .map(
      (other) =>
        `the file also holds workstream ${other.workstreamId} on branch ${other.branch} under repo ${other.repo}, written by a checkout that identified the repository differently`,
    );
};

/**
 * Where a context of the file holds a secret (`context` first, then the others, whose keys and
 * texts a read shows too), said for a reader: what it shows is redacted, and writes stay
 * refused until it is removed.
 */
export const secretWarning = (scope: Scope, file: ContextFile, context?: SharedContext): string | undefined => {
  const found = [...(context === undefined ? [] : [context]), ...file.contexts]
    .map((entry) => ({ index: file.contexts.indexOf(entry), secret: findContextSecret(entry) }))
    .find((entry) => entry.secret !== undefined);
  if (found?.secret === undefined) return undefined;
  return `${scope.display(scope.paths.json)} holds what looks like ${found.secret.shape} in contexts[${found.index}].${found.secret.path}: it is redacted here; remove it from the file (writes are refused until it is gone)`;
};

/**
 * Loads the context of `options.kind` (planning by default) for the workstream and verifies
 * it against the repository: a mismatch with the checkpoint marks the summary stale and lists
 * the changed files. Read-only: a corrupt file or one with merge conflict markers is reported
 * and left as it is. `None` when the feature flag is off (no file is touched).
 */
export const loadContext = (options: ContextOptions): Result<O.Option<LoadedContext>> =>
  whenEnabled(options, async (scope) => {
    // Read-only: git and the file can be read at once.
    const [observation, onDisk, ignoredBy] = await Promise.all([
      observe(scope),
      readContextFile(scope),
      scope.location.kind === 'git' ? sessionsIgnoredBy(scope) : undefined,
    ]);
    if (E.isLeft(observation)) return observation;
    if (E.isLeft(onDisk)) return onDisk;
    const { observed } = observation.right;
    const fromIndex = onDisk.right.kind === 'absent' ? await readFromIndex(scope, observed) : E.right(undefined);
    if (E.isLeft(fromIndex)) return fromIndex;
    // During a merge, the sides of a conflict come from the index, as a write takes them.
    const staged = await readConflictStages(scope, observed, fromIndex.right ?? onDisk.right);
    if (E.isLeft(staged)) return staged;
    const read = staged.right;
    const unusable = reportUnusable(scope, read);
    if (unusable !== undefined) return E.left(unusable);
    const file = read.kind === 'file' ? read.file : { kind: scope.kind, contexts: [] };
    const { key, file: resolved, notes } = keyIn(observation.right, file);
    const quarantined = quarantinedHere(scope, resolved, key);
    if (quarantined !== undefined) return E.left(quarantined);
    const sessions = await readSessionsFile(scope);
    const stored = O.toUndefined(selectContext(resolved, key));
    // The file's other keys are shown and go into prompts: a branch named like a token is redacted.
    const elsewhere = selectOtherKeys(resolved, key).map(redactKey);
    // A new branch and a renamed one both hold no checkpoint (at most a failure or a decision recorded
    // since): whether the other branch still exists tells them apart, wherever the bundle says which.
    const told = stored?.checkpoint === undefined && elsewhere.some((other) => other.repo === key.repo);
    const branchesPresent = told ? (await branchNames(scope.paths.root)).map(branchKeyOf) : undefined;
    // Which branch this one was renamed from, git's reflog says, when the key is the checkout's own branch.
    const renamedFrom =
      told && observed.head !== 'detached' && observed.head !== 'none' && branchKeyOf(observed.branch) === key.branch
        ? (await branchRenamedFrom(scope.paths.root, observed.branch)).map(branchKeyOf)
        : undefined;
    const secret = secretWarning(scope, resolved, stored);
    const head = headNotes(scope, observed, false);
    const outOfStep =
      read === onDisk.right && read.kind === 'file' && (await dashboardOutOfStep(scope, read.file, false));
    const found: Found = {
      key: redactKey(key),
      stored: stored === undefined ? undefined : redactContext(stored),
      sessions: E.isRight(sessions) ? sessionsOf(sessions.right, key) : {},
      warnings: [
        ...partialFileWarnings(scope, resolved, read.kind === 'file' ? read.repaired : undefined),
        ...(E.isLeft(sessions) ? [ignoredSessions(sessions.left)] : []),
        ...head.warnings,
        ...(secret === undefined ? [] : [secret]),
      ],
      notes: [
        ...(resolved === file || stored === undefined
          ? notes
          : notes.map((note) => `${note} (re-keyed in the file at the next write)`)),
        ...head.notes,
        ...elsewhereNotes(scope, key, stored !== undefined, elsewhere, branchesPresent, renamedFrom),
        ...(fromIndex.right === undefined ? [] : [SPARSE_NOTE]),
        ...(outOfStep
          ? [
              `the dashboard ${scope.display(scope.paths.dashboard)} is out of step with the JSON (a merge, an interrupted write, or a dashboard another version drew): ${contextCommand(scope, 'resolve')} regenerates it${secret === undefined ? '' : ' once the secret is gone from the JSON'}`,
            ]
          : []),
      ],
      dropped: [],
      elsewhere,
      related: stored === undefined ? [] : selectRelatedContexts(resolved, key).map(redactContext),
      ...(branchesPresent === undefined ? {} : { branchesPresent }),
      ...(renamedFrom === undefined ? {} : { renamedFrom }),
      dashboardWritten: false,
      dashboardRegenerated: false,
      ...(ignoredBy === undefined ? {} : { sessionsIgnoredBy: ignoredBy }),
    };
    return E.right(await loaded(scope, found, observed));
  });
