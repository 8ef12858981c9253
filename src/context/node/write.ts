/**
 * Writing a context file: under the file's cross-process lock, the repository and the file are
 * read, the edit applied, and the JSON (the truth: its failure fails the call) written
 * atomically, then the derived files and the tool sessions (their failures are warnings).
 * Every input is checked before the first write: the evidence of new claims against the
 * repository, the whole file for secrets, the text against the schema that reads it back and
 * against the size cap. A broken file is moved aside and reported; a conflicted one is merged.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { pipe } from 'fp-ts/lib/function.js';
import { removeStaleTemporaries, writeFileAtomic, writeFileIfMissing } from '../../node/atomicWrite.js';
import { prepareDirectory, removeCreatedFolders } from '../../node/directory.js';
import { withFileLock } from '../../node/lock.js';
import type { RepositorySnapshot } from '../checkpoint.js';
import { renderContextDashboard } from '../dashboard.js';
import { CONTEXT_DIRECTORY, CONTEXT_GITIGNORE, contextFileNames } from '../layout.js';
import { mergeContextFilesReported } from '../merge.js';
import {
  type CliSessions,
  CONTEXT_FILE_MAX_BYTES,
  type ContextError,
  type ContextFile,
  type ContextKey,
  type DroppedEntry,
  type SharedContext,
} from '../model.js';
import { selectOtherKeys } from '../notices.js';
import { formatJsonDocument } from '../jsonText.js';
import { encodeCheckedContextFile, findContextSecret } from '../schema.js';
import { selectContext } from '../contextFile.js';
import { selectDroppedEntries } from '../dropped.js';
import { redactContext } from '../update.js';
import { checkNewEvidence } from './evidence.js';
import { contextLock, fileSize, formatBytes, LOCK_STALE_MS, moveAside } from './files.js';
import type { Observed } from './git.js';
import { type ConflictReport, type Found, type LoadedContext, loaded, secretWarning } from './load.js';
import { headNotes, keyIn, observe, outsideSparseCheckout } from './observe.js';
import { isNewerVersion, readContextFile, dashboardOutOfStep, tooLarge, workstreamsOf } from './read.js';
import { confine, type ContextOptions, located, prune, type Result, type Scope, whenEnabled } from './scope.js';
import { ignoredSessions, readSessionsFile, sessionsOf, sessionsToWrite } from './toolSessions.js';

/** What an edit of the file made: the file, the context under the key, and what the shell should check or say. */
export interface Edited {
  readonly file: ContextFile;
  /** The context under the key, undefined when none is stored (and none was made). */
  readonly context: SharedContext | undefined;
  /** The contexts whose entries went into the key's context: what a cap may have pushed out of it. */
  readonly sources: ReadonlyArray<SharedContext>;
  /** The ledger before and after, when the edit may add claims whose evidence the repository must back. */
  readonly evidence?: {
    readonly before: SharedContext['evidenceLedger'];
    readonly after: SharedContext['evidenceLedger'];
  };
  /** The tool sessions of this key to take from another key (a moved context), if any. */
  readonly sessionsFrom?: ContextKey;
  readonly notes: ReadonlyArray<string>;
}

/** An edit of the whole file at time `at`, for the context under `key`. */
export type FileEdit = (
  file: ContextFile,
  key: ContextKey,
  at: number,
  snapshot: RepositorySnapshot,
) => E.Either<ContextError, Edited>;

/** Asked just before a write lands: fails once the lock was lost. */
export type StillLocked = () => E.Either<ContextError, true>;

/**
 * The context file to change, under the lock: a broken file is moved aside and reported (the
 * write stops there); the two sides of a conflict are merged.
 */
const readForWrite = async (
  scope: Scope,
): Result<{
  readonly file: ContextFile;
  readonly onDisk?: ContextFile;
  readonly mergedConflict?: ConflictReport;
  readonly dropped: ReadonlyArray<DroppedEntry>;
}> => {
  const read = await readContextFile(scope);
  if (E.isLeft(read)) return read;
  const empty: ContextFile = { kind: scope.kind, contexts: [] };
  switch (read.right.kind) {
    case 'absent':
      return E.right({ file: empty, dropped: [] });
    case 'file':
      return E.right({ file: read.right.file, onDisk: read.right.file, dropped: [] });
    case 'conflict': {
      const { ours, theirs } = read.right;
      const merged = mergeContextFilesReported(ours, theirs);
      return E.right({
        file: merged.file,
        mergedConflict: {
          ours: workstreamsOf(ours),
          theirs: workstreamsOf(theirs),
          ...(merged.identity === undefined ? {} : { identity: merged.identity }),
        },
        dropped: merged.dropped,
      });
    }
    case 'broken': {
      const broken = read.right.error;
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

/** The derived files of a written context file: the `.gitignore` and the dashboard. Each failure is a warning. */
const writeDerived = async (scope: Scope, file: ContextFile, stillLocked: StillLocked): Promise<string[]> => {
  const warnings: string[] = [];
  const ignore = writeFileIfMissing(scope.paths.gitignore, CONTEXT_GITIGNORE);
  if (E.isLeft(ignore)) warnings.push(`${scope.display(scope.paths.gitignore)} not written: ${ignore.left.message}`);
  const dashboard = writeFileAtomic(
    scope.paths.dashboard,
    renderContextDashboard(file, contextFileNames(scope.kind).json),
    { stillSafe: stillLocked },
  );
  if (E.isLeft(dashboard))
    warnings.push(
      `the dashboard ${scope.display(scope.paths.dashboard)} was not updated (${dashboard.left.message}); the context itself was saved`,
    );
  return warnings;
};

/** The text of `file` as it will be written, or why it may not be: the reader would refuse it, or it is too large. */
const contextText = (
  scope: Scope,
  file: ContextFile,
  onDisk: ContextFile | undefined,
): E.Either<ContextError, string> =>
  pipe(
    E.of(new Set(onDisk?.contexts)),
    E.chain((decoded) => encodeCheckedContextFile(file, (context) => decoded.has(context))),
    E.map(formatJsonDocument),
    E.chain((text) => {
      const bytes = Buffer.byteLength(text, 'utf8');
      return bytes <= CONTEXT_FILE_MAX_BYTES
        ? E.right(text)
        : E.left(
            located(scope, scope.paths.json, {
              code: 'too_large',
              message: `would grow to ${formatBytes(bytes)}, over the ${formatBytes(CONTEXT_FILE_MAX_BYTES)} a context file may hold: ${prune(scope)}`,
            }),
          );
    }),
  );

/**
 * Refuses a file that holds a secret anywhere: in the context this write changes (naming the
 * field), or in any other, as a teammate's tool or an older version may have left it (naming
 * the context and the field, to remove it by hand). Nothing of it is written again.
 */
const withoutSecrets = (
  scope: Scope,
  file: ContextFile,
  changed: SharedContext | undefined,
): E.Either<ContextError, true> => {
  const own = changed === undefined ? undefined : findContextSecret(changed);
  if (own !== undefined)
    return E.left({
      code: 'secret',
      message: `${own.path} holds what looks like ${own.shape}: secrets are never stored in the shared context; remove it and try again`,
    });
  for (const [index, context] of file.contexts.entries()) {
    if (context === changed) continue;
    const secret = findContextSecret(context);
    if (secret !== undefined)
      return E.left(
        located(scope, scope.paths.json, {
          code: 'secret',
          message: `contexts[${index}] (workstream ${context.key.workstreamId}, branch ${context.key.branch}) holds what looks like ${secret.shape} in ${secret.path}: nothing is written while the file holds a secret; remove it from the file and try again`,
        }),
      );
  }
  return E.right(true);
};

/** Rewrites the dashboard when it is out of step with the JSON it is made from: true when it did, or a warning. */
const regenerateDashboard = async (
  scope: Scope,
  file: ContextFile,
  stillLocked: StillLocked,
): Promise<E.Either<ContextError, boolean>> => {
  if (!(await dashboardOutOfStep(scope, file, true))) return E.right(false);
  const written = writeFileAtomic(
    scope.paths.dashboard,
    renderContextDashboard(file, contextFileNames(scope.kind).json),
    { stillSafe: stillLocked },
  );
  return E.isLeft(written)
    ? E.left({
        code: 'io',
        message: `the dashboard ${scope.display(scope.paths.dashboard)} is out of step with the JSON and could not be rewritten (${written.left.message})`,
      })
    : E.right(true);
};

/**
 * Under the lock: reads the repository and the file, applies the edit, and writes the JSON
 * (the truth: its failure fails the call), then the derived files and the sessions (their
 * failures are warnings). Inputs are all checked before the first write: the evidence of new
 * claims against the repository, and the whole file for secrets.
 */
const changeLocked = async (
  scope: Scope,
  edit: FileEdit,
  sessions: CliSessions | undefined,
  stillLocked: StillLocked,
): Result<{ readonly found: Found; readonly observed: Observed }> => {
  const confined = await confine(scope.paths.root, scope.kind);
  if (E.isLeft(confined)) return confined;
  removeStaleTemporaries(
    scope.paths.directory,
    Object.values(contextFileNames(scope.kind)),
    scope.now(),
    LOCK_STALE_MS,
  );
  // The repository is read under the lock, so the checkpoint records the state as it is when written.
  const observation = await observe(scope);
  if (E.isLeft(observation)) return observation;
  const { snapshot, observed } = observation.right;
  if (outsideSparseCheckout(observed))
    return E.left({
      code: 'invalid',
      message: `${CONTEXT_DIRECTORY}/ is outside this sparse checkout: the committed context is not in the working tree, and git add would refuse what is written there; run git sparse-checkout add ${CONTEXT_DIRECTORY}, then try again`,
    });
  const read = await readForWrite(scope);
  if (E.isLeft(read)) return read;
  const { key, file, notes } = keyIn(observation.right, read.right.file);
  const edited = edit(file, key, scope.now(), snapshot);
  if (E.isLeft(edited)) return edited;
  const { file: out, context } = edited.right;
  const fileChanged =
    read.right.onDisk === undefined
      ? out !== file || read.right.mergedConflict !== undefined
      : out !== read.right.onDisk;
  if (fileChanged) {
    const evidence = edited.right.evidence;
    if (evidence !== undefined) {
      const checked = await checkNewEvidence(scope.paths.root, evidence.before, evidence.after, observed);
      if (E.isLeft(checked)) return checked;
    }
    const clean = withoutSecrets(scope, out, out === file ? undefined : context);
    if (E.isLeft(clean)) return clean;
  }
  const text = fileChanged ? contextText(scope, out, read.right.onDisk) : E.right('');
  if (E.isLeft(text)) return text;
  const tools =
    (sessions !== undefined && Object.keys(sessions).length > 0) || edited.right.sessionsFrom !== undefined
      ? await sessionsToWrite(scope, key, sessions ?? {}, edited.right.sessionsFrom)
      : E.right(undefined);
  if (E.isLeft(tools)) return tools;
  const warnings: string[] = [];
  let dashboardRegenerated = false;
  if (fileChanged) {
    const json = writeFileAtomic(scope.paths.json, text.right, { stillSafe: stillLocked });
    if (E.isLeft(json)) return json;
    warnings.push(...(await writeDerived(scope, out, stillLocked)));
  } else if (read.right.onDisk !== undefined) {
    const regenerated = await regenerateDashboard(scope, out, stillLocked);
    if (E.isLeft(regenerated)) warnings.push(regenerated.left.message);
    else dashboardRegenerated = regenerated.right;
  }
  let cliSessions: CliSessions;
  if (tools.right === undefined) {
    const present = await readSessionsFile(scope);
    if (E.isLeft(present)) warnings.push(ignoredSessions(present.left));
    cliSessions = E.isRight(present) ? sessionsOf(present.right, key) : {};
  } else {
    const written = writeFileAtomic(scope.paths.sessions, tools.right.text, { stillSafe: stillLocked });
    if (E.isLeft(written))
      warnings.push(`tool sessions not saved: ${written.left.message}; the context itself was saved`);
    else if (tools.right.warning !== undefined) warnings.push(tools.right.warning);
    cliSessions = E.isRight(written) ? tools.right.merged : {};
  }
  const head = headNotes(scope, observed, fileChanged);
  const stored = context === undefined ? undefined : O.toUndefined(selectContext(out, key));
  // A write that changed nothing wrote nothing, so a secret already in the file can still be there: never shown.
  const secret = stored === undefined || fileChanged ? undefined : secretWarning(scope, out, stored);
  return E.right({
    observed,
    found: {
      key,
      stored: stored === undefined ? undefined : redactContext(stored),
      sessions: cliSessions,
      warnings: [...warnings, ...head.warnings, ...(secret === undefined ? [] : [secret])],
      notes: [...notes, ...edited.right.notes, ...head.notes],
      ...(read.right.mergedConflict === undefined ? {} : { mergedConflict: read.right.mergedConflict }),
      dropped: [
        ...read.right.dropped,
        ...(context === undefined ? [] : selectDroppedEntries(key, edited.right.sources, context)),
      ],
      elsewhere: selectOtherKeys(out, key),
      dashboardRegenerated,
    },
  });
};

/**
 * A write that could not take the lock or create the folder (a folder that cannot be written
 * to): when the file there is broken, that is what the user needs to hear, with why it could
 * not be moved aside.
 */
const stuck = async (scope: Scope, error: ContextError): Promise<ContextError> => {
  if (error.code === 'corrupt') return error;
  const read = await readContextFile(scope);
  if (E.isLeft(read) || read.right.kind !== 'broken') return error;
  return located(scope, scope.paths.json, {
    ...read.right.error,
    message: `${read.right.error.message}; it could not be moved aside (${error.message})`,
  });
};

/** Applies `edit` to the file under the lock, as `updateContext` does; `None` when the feature flag is off. */
export const editContext = (
  options: ContextOptions,
  edit: FileEdit,
  sessions?: CliSessions,
): Result<O.Option<LoadedContext>> =>
  whenEnabled(options, async (scope) => {
    // Outside a repository there is no data/context/ to keep: nothing is created in whatever folder this is.
    if (scope.location.kind === 'none')
      return E.left({
        code: 'not_a_git_repository',
        message: `${scope.location.reason}: the shared context is kept in a git repository's ${CONTEXT_DIRECTORY}/, so nothing was written; run it in a checkout`,
      });
    // A file that cannot be used at all (too large) is refused before anything is created or locked.
    const size = await fileSize(scope.paths.json);
    if (size > CONTEXT_FILE_MAX_BYTES) return E.left(tooLarge(scope));
    if (await isNewerVersion(scope)) {
      const refused = await readContextFile(scope);
      if (E.isLeft(refused)) return refused;
    }
    const directory = prepareDirectory(scope.paths.directory, {
      within: scope.paths.root,
      create: true,
      label: 'the context folder',
    });
    if (E.isLeft(directory)) return E.left(await stuck(scope, directory.left));
    const written = await withFileLock(
      scope.paths.json,
      contextLock(size, scope.display(scope.paths.json)),
      (stillLocked) => changeLocked(scope, edit, sessions, stillLocked),
    );
    if (E.isLeft(written)) {
      removeCreatedFolders(directory.right.created);
      return E.left(
        written.left.code === 'corrupt' || written.left.code === 'io' ? await stuck(scope, written.left) : written.left,
      );
    }
    return E.right(await loaded(scope, written.right.found, written.right.observed));
  });
