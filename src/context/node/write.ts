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
import { removeStaleTemporaries, writeFileAtomic } from '../../node/atomicWrite.js';
import { prepareDirectory, removeCreatedFolders } from '../../node/directory.js';
import { type StillLocked, withFileLock } from '../../node/lock.js';
import type { RepositorySnapshot } from '../checkpoint.js';
import { selectContext } from '../contextFile.js';
import { selectDroppedEntries } from '../dropped.js';
import { CONTEXT_DIRECTORY, contextFileNames } from '../layout.js';
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
import { redactContext } from '../update.js';
import { checkGitVisibility, regenerateDashboard, writeDerived } from './derived.js';
import { checkNewEvidence } from './evidence.js';
import { contextLock, fileSize, LOCK_STALE_MS, moveAside } from './files.js';
import type { Observation } from './observe.js';
import { type ConflictReport, type Found, type LoadedContext, loaded, secretWarning } from './load.js';
import { headNotes, keyIn, observe, outsideSparseCheckout } from './observe.js';
import {
  isNewerVersion,
  partialFileWarnings,
  quarantinedHere,
  readContextFile,
  tooLarge,
  workstreamsOf,
} from './read.js';
import { confine, type ContextOptions, located, type Result, type Scope, whenEnabled } from './scope.js';
import { ignoredSessions, readSessionsFile, sessionsOf, sessionsToWrite } from './toolSessions.js';
import { contextText, withoutSecrets } from './writeChecks.js';

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

/** The context file as a write reads it. */
interface ForWrite {
  /** What the edit starts from: the file, the two sides of a conflict merged, or a new file. */
  readonly file: ContextFile;
  /** The file as decoded from disk, when it was one file. */
  readonly onDisk?: ContextFile;
  readonly mergedConflict?: ConflictReport;
  readonly dropped: ReadonlyArray<DroppedEntry>;
  /** Set when the file was read only once a typo was set right: it is written back clean. */
  readonly repaired?: string;
}

/**
 * The context file to change, under the lock: a broken file is moved aside and reported (the
 * write stops there); the two sides of a conflict are merged.
 */
const readForWrite = async (scope: Scope): Result<ForWrite> => {
  const read = await readContextFile(scope);
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

/** What a write found under the lock: the repository, the file as read, and the key in it. */
interface Prepared {
  readonly observation: Observation;
  readonly read: ForWrite;
  readonly key: ContextKey;
  /** The file as read, re-keyed as the repository says. */
  readonly file: ContextFile;
  readonly notes: ReadonlyArray<string>;
}

/** Reads the repository and the file under the lock, and finds the key; refuses what cannot be written here. */
const prepare = async (scope: Scope): Result<Prepared> => {
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
  if (outsideSparseCheckout(observation.right.observed))
    return E.left({
      code: 'invalid',
      message: `${CONTEXT_DIRECTORY}/ is outside this sparse checkout: the committed context is not in the working tree, and git add would refuse what is written there; run git sparse-checkout add ${CONTEXT_DIRECTORY}, then try again`,
    });
  const read = await readForWrite(scope);
  if (E.isLeft(read)) return read;
  const { key, file, notes } = keyIn(observation.right, read.right.file);
  const quarantined = quarantinedHere(scope, file, key);
  if (quarantined !== undefined) return E.left(quarantined);
  return E.right({ observation: observation.right, read: read.right, key, file, notes });
};

/** What a write is to do, every input checked: the file and its text, and the tool sessions. */
interface Planned {
  readonly edited: Edited;
  /** The text of the JSON to write; undefined when the file does not change. */
  readonly text?: string;
  readonly tools?: { readonly text: string; readonly merged: CliSessions; readonly warning?: string };
}

/**
 * Applies the edit and checks everything before the first write: the evidence of new claims
 * against the repository, the whole file for secrets, the text against the reader and the cap,
 * and the tool sessions file.
 */
const plan = async (
  scope: Scope,
  prepared: Prepared,
  edit: FileEdit,
  sessions: CliSessions | undefined,
): Result<Planned> => {
  const { read, file, key, observation } = prepared;
  const edited = edit(file, key, scope.now(), observation.snapshot);
  if (E.isLeft(edited)) return edited;
  const { file: out, context } = edited.right;
  const changed =
    read.repaired !== undefined ||
    (read.onDisk === undefined ? out !== file || read.mergedConflict !== undefined : out !== read.onDisk);
  if (changed) {
    const evidence = edited.right.evidence;
    if (evidence !== undefined) {
      const checked = await checkNewEvidence(scope.paths.root, evidence.before, evidence.after, observation.observed);
      if (E.isLeft(checked)) return checked;
    }
    const clean = withoutSecrets(scope, out, out === file ? undefined : context);
    if (E.isLeft(clean)) return clean;
  }
  const text = changed ? contextText(scope, out, read.onDisk) : E.right(undefined);
  if (E.isLeft(text)) return text;
  const tools =
    (sessions !== undefined && Object.keys(sessions).length > 0) || edited.right.sessionsFrom !== undefined
      ? await sessionsToWrite(scope, key, sessions ?? {}, edited.right.sessionsFrom)
      : E.right(undefined);
  if (E.isLeft(tools)) return tools;
  return E.right({
    edited: edited.right,
    ...(text.right === undefined ? {} : { text: text.right }),
    ...(tools.right === undefined ? {} : { tools: tools.right }),
  });
};

/** What the writes did, beyond the JSON itself. */
interface Applied {
  readonly sessions: CliSessions;
  readonly warnings: ReadonlyArray<string>;
  readonly notes: ReadonlyArray<string>;
  readonly dashboardRegenerated: boolean;
  readonly sessionsIgnoredBy?: string;
}

/** The tool sessions of the key: written where git ignores them (or why not), else as they are on disk. */
const applySessions = async (
  scope: Scope,
  key: ContextKey,
  tools: Planned['tools'],
  ignoredBy: string | undefined,
  stillLocked: StillLocked,
): Promise<{ readonly sessions: CliSessions; readonly warnings: ReadonlyArray<string> }> => {
  if (tools === undefined) {
    const present = await readSessionsFile(scope);
    return E.isRight(present)
      ? { sessions: sessionsOf(present.right, key), warnings: [] }
      : { sessions: {}, warnings: [ignoredSessions(present.left)] };
  }
  if (ignoredBy === undefined)
    return {
      sessions: {},
      warnings: [
        `tool sessions not saved: git would commit ${scope.display(scope.paths.sessions)} (a rule of the repository undoes *.local.json); the context itself was saved`,
      ],
    };
  const written = writeFileAtomic(scope.paths.sessions, tools.text, { stillSafe: stillLocked });
  if (E.isLeft(written))
    return {
      sessions: {},
      warnings: [`tool sessions not saved: ${written.left.message}; the context itself was saved`],
    };
  return { sessions: tools.merged, warnings: tools.warning === undefined ? [] : [tools.warning] };
};

/** Writes what was planned: the JSON (the truth: its failure fails the call), then the derived files and the sessions. */
const apply = async (scope: Scope, prepared: Prepared, planned: Planned, stillLocked: StillLocked): Result<Applied> => {
  const { edited, text, tools } = planned;
  const warnings: string[] = [];
  let dashboardRegenerated = false;
  if (text !== undefined) {
    const json = writeFileAtomic(scope.paths.json, text, { stillSafe: stillLocked });
    if (E.isLeft(json)) return json;
    warnings.push(...writeDerived(scope, edited.file, stillLocked));
  } else if (prepared.read.onDisk !== undefined) {
    const regenerated = await regenerateDashboard(scope, edited.file, stillLocked);
    if (E.isLeft(regenerated)) warnings.push(regenerated.left.message);
    else dashboardRegenerated = regenerated.right;
  }
  const visibility = await checkGitVisibility(scope, text !== undefined, tools !== undefined);
  const local = await applySessions(scope, prepared.key, tools, visibility.sessionsIgnoredBy, stillLocked);
  return E.right({
    sessions: local.sessions,
    warnings: [...warnings, ...visibility.warnings, ...local.warnings],
    notes: visibility.notes,
    dashboardRegenerated,
    ...(visibility.sessionsIgnoredBy === undefined ? {} : { sessionsIgnoredBy: visibility.sessionsIgnoredBy }),
  });
};

/**
 * Under the lock: reads the repository and the file, applies the edit, checks every input,
 * and writes the JSON, then the derived files and the sessions; says what it found and did.
 */
const changeLocked = async (
  scope: Scope,
  edit: FileEdit,
  sessions: CliSessions | undefined,
  stillLocked: StillLocked,
): Result<{ readonly found: Found; readonly observed: Observation['observed'] }> => {
  const prepared = await prepare(scope);
  if (E.isLeft(prepared)) return prepared;
  const planned = await plan(scope, prepared.right, edit, sessions);
  if (E.isLeft(planned)) return planned;
  const applied = await apply(scope, prepared.right, planned.right, stillLocked);
  if (E.isLeft(applied)) return applied;
  const { key, read, observation } = prepared.right;
  const { file: out, context, sources, notes } = planned.right.edited;
  const wrote = planned.right.text !== undefined;
  const head = headNotes(scope, observation.observed, wrote);
  const stored = context === undefined ? undefined : O.toUndefined(selectContext(out, key));
  // A write that changed nothing wrote nothing, so a secret already in the file can still be there: never shown.
  const secret = stored === undefined || wrote ? undefined : secretWarning(scope, out, stored);
  return E.right({
    observed: observation.observed,
    found: {
      key,
      stored: stored === undefined ? undefined : redactContext(stored),
      sessions: applied.right.sessions,
      warnings: [
        ...(wrote ? partialFileWarnings(scope, out, undefined) : partialFileWarnings(scope, out, read.repaired)),
        ...applied.right.warnings,
        ...head.warnings,
        ...(secret === undefined ? [] : [secret]),
      ],
      notes: [...prepared.right.notes, ...notes, ...applied.right.notes, ...head.notes],
      ...(read.mergedConflict === undefined ? {} : { mergedConflict: read.mergedConflict }),
      dropped: [...read.dropped, ...(context === undefined ? [] : selectDroppedEntries(key, sources, context))],
      elsewhere: selectOtherKeys(out, key),
      dashboardRegenerated: applied.right.dashboardRegenerated,
      ...(applied.right.sessionsIgnoredBy === undefined ? {} : { sessionsIgnoredBy: applied.right.sessionsIgnoredBy }),
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
