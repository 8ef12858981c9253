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
import { prepareDirectory } from '../../node/directory.js';
import { type StillLocked, withFileLock } from '../../node/lock.js';
import type { RepositorySnapshot } from '../checkpoint.js';
import { hasConflictMarkers } from '../conflictMarkers.js';
import { selectContext } from '../contextFile.js';
import { selectDroppedEntries } from '../dropped.js';
import { CONTEXT_DIRECTORY, contextFileNames } from '../layout.js';
import {
  type CliSessions,
  CONTEXT_FILE_MAX_BYTES,
  type ContextError,
  type ContextFile,
  type ContextKey,
  type DroppedEntry,
  type SharedContext,
} from '../model.js';
import { selectOtherKeys, selectRelatedContexts } from '../notices.js';
import { decodeContextFile } from '../schema.js';
import { redactContext, redactKey } from '../update.js';
import { checkGitVisibility, type GitVisibility, regenerateDashboard, writeDerived } from './derived.js';
import { checkNewEvidence } from './evidence.js';
import { contextLock, fileSize, isAbsent, LOCK_STALE_MS } from './files.js';
import { gitAuthor } from './git.js';
import type { Observation } from './observe.js';
import { type Found, type LoadedContext, loadContext, loaded, secretWarning } from './load.js';
import { headNotes, keyIn, observe, outsideSparseCheckout } from './observe.js';
import { decodeText, isNewerVersion, partialFileWarnings, quarantinedHere, readContextFile, tooLarge } from './read.js';
import { type ForWrite, readForWrite } from './readForWrite.js';
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
  /** The tool sessions to take from another key (a moved context), and whether that key keeps them. */
  readonly sessionsFrom?: { readonly key: ContextKey; readonly keep: boolean };
  /** Entries a merge of two contexts left out over a cap that `sources` cannot show (rules, steps). */
  readonly dropped?: ReadonlyArray<DroppedEntry>;
  readonly notes: ReadonlyArray<string>;
}

/** What an edit of the file gets: the file, the key of this checkout, the time and the repository. */
export interface EditInput {
  readonly file: ContextFile;
  readonly key: ContextKey;
  readonly at: number;
  readonly snapshot: RepositorySnapshot;
  /** Who is writing (`Name <email>`, git's author identity), when the write asked for it. */
  readonly author?: string;
}

/** An edit of the whole file, for the context under the key. */
export type FileEdit = (input: EditInput) => E.Either<ContextError, Edited>;

/** A write: its edit, the tool sessions to keep, and what it needs beyond the file. */
export interface WriteRequest {
  readonly edit: FileEdit;
  readonly sessions?: CliSessions;
  /** Ask git who is writing (one more process): the edit pins rules in their name. */
  readonly author?: boolean;
  /** Write only what a conflict or a typo in the file needs (`resolve`): a no-op edit writes nothing. */
  readonly onlyRepairs?: boolean;
}

/** What a write found under the lock: the repository, the file as read, and the key in it. */
interface Prepared {
  readonly observation: Observation;
  readonly read: ForWrite;
  readonly key: ContextKey;
  /** The file as read, re-keyed as the repository says. */
  readonly file: ContextFile;
  readonly notes: ReadonlyArray<string>;
  /** Who is writing, when the request asked. */
  readonly author?: string;
}

/**
 * Reads the repository and the file (`readFile`: under the lock, `readForWrite`), and finds the
 * key; refuses what cannot be written here.
 */
const prepare = async (
  scope: Scope,
  needsAuthor: boolean,
  readFile: (observed: Observation['observed']) => Result<ForWrite>,
): Result<Prepared> => {
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
  if (outsideSparseCheckout(observation.right.observed, scope.trackedDirectory))
    return E.left({
      code: 'invalid',
      message: `${CONTEXT_DIRECTORY}/ is outside this sparse checkout: the committed context is not in the working tree, and git add would refuse what is written there; run git sparse-checkout add ${CONTEXT_DIRECTORY}, then try again`,
    });
  const read = await readFile(observation.right.observed);
  if (E.isLeft(read)) return read;
  const { key, file, notes } = keyIn(observation.right, read.right.file);
  const quarantined = quarantinedHere(scope, file, key);
  if (quarantined !== undefined) return E.left(quarantined);
  const author = needsAuthor ? await gitAuthor(scope.paths.root) : undefined;
  return E.right({
    observation: observation.right,
    read: read.right,
    key,
    file,
    notes,
    ...(author === undefined ? {} : { author }),
  });
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
const plan = async (scope: Scope, prepared: Prepared, request: WriteRequest): Result<Planned> => {
  const { read, file, key, observation, author } = prepared;
  const { sessions } = request;
  const edited = request.edit({
    file,
    key,
    at: scope.now(),
    snapshot: observation.snapshot,
    ...(author === undefined ? {} : { author }),
  });
  if (E.isLeft(edited)) return edited;
  const { file: out, context } = edited.right;
  const repairs = read.repaired !== undefined || read.mergedConflict !== undefined;
  const changed =
    repairs || (request.onlyRepairs !== true && (read.onDisk === undefined ? out !== file : out !== read.onDisk));
  if (changed) {
    const evidence = edited.right.evidence;
    if (evidence !== undefined) {
      const checked = await checkNewEvidence(scope.paths.root, evidence.before, evidence.after, observation.observed);
      if (E.isLeft(checked)) return checked;
    }
    const clean = withoutSecrets(scope, out, out === file ? undefined : context, read.conflictSides);
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
  readonly dashboardWritten: boolean;
  readonly dashboardRegenerated: boolean;
  readonly sessionsIgnoredBy?: string;
}

/** The tool sessions of the key: written where git ignores them (or why not), else as they are on disk. */
const applySessions = async (
  scope: Scope,
  key: ContextKey,
  tools: Planned['tools'],
  visibility: GitVisibility,
  stillLocked: StillLocked,
): Promise<{ readonly sessions: CliSessions; readonly warnings: ReadonlyArray<string> }> => {
  if (tools === undefined) {
    const present = await readSessionsFile(scope);
    return E.isRight(present)
      ? { sessions: sessionsOf(present.right, key), warnings: [] }
      : { sessions: {}, warnings: [ignoredSessions(present.left)] };
  }
  if (visibility.sessionsIgnoredBy === undefined)
    return {
      sessions: {},
      warnings: [
        `tool sessions not saved: git would commit ${scope.display(scope.paths.sessions)} (${visibility.sessionsExposedBy ?? 'a rule of the repository undoes *.local.json'}); the context itself was saved`,
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
  let dashboardWritten = false;
  let dashboardRegenerated = false;
  if (text !== undefined) {
    const json = writeFileAtomic(scope.paths.json, text, { stillSafe: stillLocked });
    if (E.isLeft(json)) return json;
    const derived = writeDerived(scope, edited.file, stillLocked);
    warnings.push(...derived.warnings);
    dashboardWritten = derived.dashboardWritten;
  } else if (prepared.read.onDisk !== undefined) {
    // Nothing is written: the dashboard must match the file as it stays on disk, unless that file holds a secret.
    const { onDisk } = prepared.read;
    const clean = withoutSecrets(scope, onDisk, undefined);
    const regenerated = await regenerateDashboard(scope, onDisk, stillLocked, E.isLeft(clean) ? clean.left : undefined);
    if (E.isLeft(regenerated)) {
      if (regenerated.left.code === 'secret') return regenerated;
      warnings.push(regenerated.left.message);
    } else {
      dashboardWritten = regenerated.right;
      dashboardRegenerated = regenerated.right;
    }
  }
  const visibility = await checkGitVisibility(scope, text !== undefined, tools !== undefined);
  const local = await applySessions(scope, prepared.key, tools, visibility, stillLocked);
  return E.right({
    sessions: local.sessions,
    warnings: [...warnings, ...visibility.warnings, ...local.warnings],
    notes: visibility.notes,
    dashboardWritten,
    dashboardRegenerated,
    ...(visibility.sessionsIgnoredBy === undefined ? {} : { sessionsIgnoredBy: visibility.sessionsIgnoredBy }),
  });
};

/**
 * `written`, the file a write stored as `text`, as that text reads back. A context kept apart is
 * named by its place in the file it was read from (`contexts[1]`), and a write moves it: after
 * the served contexts, in key order, and out of the side of a conflict it merged, whose places
 * the file on disk no longer has. Read back, the places are those of the file as it now is on
 * disk, which every later read names too. The text passed the reader's own checks before it was
 * written; should it read back otherwise all the same, the places read are kept.
 */
const readBack = (scope: Scope, written: ContextFile, text: string): ContextFile => {
  if (written.quarantined === undefined) return written;
  const decoded = decodeText(text, (value) => decodeContextFile(value, scope.kind));
  return E.isRight(decoded) ? decoded.right : written;
};

/**
 * Under the lock: reads the repository and the file, applies the edit, checks every input,
 * and writes the JSON, then the derived files and the sessions; says what it found and did.
 */
const changeLocked = async (
  scope: Scope,
  request: WriteRequest,
  stillLocked: StillLocked,
  lockNotices: ReadonlyArray<string>,
): Result<{ readonly found: Found; readonly observed: Observation['observed'] }> => {
  const prepared = await prepare(scope, request.author === true, (observed) => readForWrite(scope, observed));
  if (E.isLeft(prepared)) return prepared;
  const planned = await plan(scope, prepared.right, request);
  if (E.isLeft(planned)) return planned;
  const applied = await apply(scope, prepared.right, planned.right, stillLocked);
  if (E.isLeft(applied)) return applied;
  const { key, read, observation } = prepared.right;
  const { file: out, context, sources, notes } = planned.right.edited;
  const { text } = planned.right;
  const wrote = text !== undefined;
  const head = headNotes(scope, observation.observed, wrote);
  const stored = context === undefined ? undefined : O.toUndefined(selectContext(out, key));
  // A write that changed nothing wrote nothing, so a secret already in the file can still be there: never shown.
  const secret = wrote ? undefined : secretWarning(scope, out, stored);
  return E.right({
    observed: observation.observed,
    found: {
      key,
      stored: stored === undefined ? undefined : redactContext(stored),
      sessions: applied.right.sessions,
      warnings: [
        ...lockNotices,
        ...(wrote
          ? partialFileWarnings(scope, readBack(scope, out, text), undefined)
          : partialFileWarnings(scope, out, read.repaired)),
        ...applied.right.warnings,
        ...head.warnings,
        ...(secret === undefined ? [] : [secret]),
      ],
      notes: [...prepared.right.notes, ...notes, ...applied.right.notes, ...head.notes],
      ...(read.mergedConflict === undefined ? {} : { mergedConflict: read.mergedConflict }),
      dropped: [
        ...read.dropped,
        ...(context === undefined ? [] : selectDroppedEntries(key, sources, context)),
        ...(planned.right.edited.dropped ?? []),
      ],
      elsewhere: selectOtherKeys(out, key).map(redactKey),
      related: stored === undefined ? [] : selectRelatedContexts(out, key).map(redactContext),
      dashboardWritten: applied.right.dashboardWritten,
      dashboardRegenerated: applied.right.dashboardRegenerated,
      ...(applied.right.sessionsIgnoredBy === undefined ? {} : { sessionsIgnoredBy: applied.right.sessionsIgnoredBy }),
    },
  });
};

/**
 * A first write, where the context folder is not there yet, is tried before the folder is made:
 * against the repository and no file, with no lock and nothing written. What it refuses (a
 * secret, evidence the repository does not back) is refused before anything is created, so it
 * leaves no trace; a folder once made is never removed, since writers that found it may be
 * waiting for its lock in it. Checked again under the lock, as every write is. True when the
 * write would write something: one that would not (a resolve with nothing to resolve) makes no folder.
 */
const tryFirstWrite = async (scope: Scope, request: WriteRequest): Result<boolean> => {
  const absent: ForWrite = { file: { kind: scope.kind, contexts: [] }, dropped: [] };
  const prepared = await prepare(scope, request.author === true, async () => E.right(absent));
  if (E.isLeft(prepared)) return prepared;
  const planned = await plan(scope, prepared.right, request);
  return E.isLeft(planned) ? planned : E.right(planned.right.text !== undefined || planned.right.tools !== undefined);
};

/**
 * A write that could not take the lock or create the folder (a folder that cannot be written
 * to): when the file there is broken, that is what the user needs to hear, with why it could
 * not be moved aside.
 */
const stuck = async (scope: Scope, error: ContextError): Promise<ContextError> => {
  if (error.code === 'corrupt') return error;
  const read = await readContextFile(scope);
  // A file with conflict markers is never moved aside, so there is nothing to say of that.
  if (E.isLeft(read) || read.right.kind !== 'broken' || hasConflictMarkers(read.right.text)) return error;
  return located(scope, scope.paths.json, {
    ...read.right.error,
    message: `${read.right.error.message}; it could not be moved aside (${error.message})`,
  });
};

/** Applies `edit` to the file under the lock, as `updateContext` does; `None` when the feature flag is off. */
export const editContext = (options: ContextOptions, request: WriteRequest): Result<O.Option<LoadedContext>> =>
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
    if (await isAbsent(scope.paths.directory)) {
      const tried = await tryFirstWrite(scope, request);
      if (E.isLeft(tried)) return tried;
      // Nothing to write where nothing is stored: answered as a read, and no folder is made.
      if (!tried.right) {
        const read = await loadContext(options);
        if (E.isLeft(read)) return read;
        if (O.isSome(read.right)) return E.right(read.right.value);
      }
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
      (stillLocked, notices) => changeLocked(scope, request, stillLocked, notices),
    );
    if (E.isLeft(written))
      return E.left(
        written.left.code === 'corrupt' || written.left.code === 'io' ? await stuck(scope, written.left) : written.left,
      );
    return E.right(await loaded(scope, written.right.found, written.right.observed));
  });
