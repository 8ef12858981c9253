/**
 * The context shell: the only part of the shared context that touches files, git, the clock
 * and the environment. It resolves the feature flag (off: nothing below runs and no file is
 * touched), reads the repository, decodes the context file with validation, verifies the
 * checkpoint, and writes under a cross-process lock with atomic renames. Every expected
 * failure comes back as a `ContextError` value.
 *
 * What it guarantees against a hostile or unlucky repository: no path it reads, writes or
 * moves leaves the repository (symbolic links are resolved); read-only calls never move or
 * write a file; the JSON is the truth, written first, and a derived file that cannot be
 * written (the dashboard, the `.gitignore`, the tool sessions) is a warning; nothing is
 * written that the reader would refuse or that holds a secret; a file with merge conflict
 * markers is merged, never discarded; a git that fails is reported as such and stops writes.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { pipe } from 'fp-ts/lib/function.js';
import type { BundleInput } from '../bundle.js';
import {
  checkpointMismatch,
  isInside,
  type ChangedFile,
  type ContextStatus,
  needsDiff,
  type RepositorySnapshot,
  verifyCheckpoint,
} from '../checkpoint.js';
import { renderContextDashboard } from '../dashboard.js';
import {
  configFlag,
  CONTEXT_CONFIG_FILE,
  resolveSharedContextFlag,
  SHARED_CONTEXT_ENV,
  type SharedContextFlag,
} from '../flag.js';
import { isSameContextKey, parseContextKey, sanitizeKeyPart } from '../key.js';
import { CONTEXT_DIRECTORY, CONTEXT_GITIGNORE, contextFileNames } from '../layout.js';
import { mergeContexts, mergeContextFilesReported, splitConflictMarkers } from '../merge.js';
import { elsewhereNotice, headNotice, selectOtherKeys } from '../notices.js';
import {
  type CliSessions,
  CONTEXT_FILE_MAX_BYTES,
  CONTEXT_KINDS,
  CONTEXT_SCHEMA_VERSION,
  type ContextError,
  type ContextFile,
  type ContextKey,
  type ContextKind,
  DEFAULT_WORKSTREAM,
  type ContextSessionsFile,
  type DroppedEntry,
  type RepositoryIdentity,
  type SharedContext,
} from '../model.js';
import { identifyRepository, resolveRepositoryKey } from '../repository.js';
import {
  decodeContextFile,
  decodeSessionsFile,
  encodeCheckedContextFile,
  encodeCheckedSessionsFile,
  findContextSecret,
  formatJsonDocument,
  parseJsonText,
} from '../schema.js';
import {
  applyRunOutcome,
  emptySharedContext,
  markSummaryStale,
  redactContext,
  removeContext,
  type RunOutcome,
  selectContext,
  selectDroppedEntries,
  upsertContext,
} from '../update.js';
import {
  confineToRoot,
  fileSize,
  formatBytes,
  ioError,
  lockWaitFor,
  makeDirectory,
  moveAside,
  readTextIfExists,
  removeStaleTemporaries,
  withFileLock,
  writeFileAtomic,
  writeFileIfMissing,
} from './files.js';
import {
  changedFiles,
  DETACHED,
  locateRepository,
  NO_BRANCH,
  type Observed,
  observeSnapshot,
  readBlob,
  readRepositoryFacts,
  type RepositoryLocation,
} from './git.js';
import { checkNewEvidence, missingEvidencePaths } from './evidence.js';
import { nodeModules } from './modules.js';

/** Which context to work on, and how. */
export interface ContextOptions {
  /** Planning (the default) or implementation: separate files, separate bundles. */
  readonly kind?: ContextKind;
  /** A directory inside the repository (default: the process's working directory). */
  readonly cwd?: string;
  /** The workstream (default `default`). */
  readonly workstreamId?: string;
  /**
   * The key's repo part (default: what the repository says about itself: its normalized
   * origin URL, else its first commit, else its folder's name; see `identifyRepository`).
   */
  readonly repo?: string;
  /** The key's branch part (default: the current branch, sanitized for display and keying). */
  readonly branch?: string;
  /** The feature flag: wins over `SHARED_CONTEXT_ENABLED` and the config file. */
  readonly enabled?: boolean;
  /** The environment to read `SHARED_CONTEXT_ENABLED` from (default: the process's). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The clock, in epoch milliseconds (default `Date.now`). */
  readonly now?: () => number;
}

/** Where one kind of context lives, as absolute paths. */
export interface ContextPaths {
  readonly root: string;
  readonly directory: string;
  readonly json: string;
  readonly sessions: string;
  readonly dashboard: string;
  readonly gitignore: string;
}

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
  /** True when this call rewrote a dashboard that was out of step with the JSON (a merge, an interrupted write). */
  readonly dashboardRegenerated: boolean;
}

/** The workstreams on each side of a conflicted context file. */
export interface ConflictReport {
  readonly ours: ReadonlyArray<string>;
  readonly theirs: ReadonlyArray<string>;
  /** Set when the sides recorded different repository identities: the one kept, and the one re-keyed to it. */
  readonly identity?: { readonly kept: RepositoryIdentity; readonly rekeyed: RepositoryIdentity };
}

/** A change to one context at time `at`, against the repository snapshot taken for the write. */
export type ContextChange = (
  context: SharedContext,
  at: number,
  snapshot: RepositorySnapshot,
) => E.Either<ContextError, SharedContext>;

/** What an edit of the file made: the file, the context under the key, and what the shell should check or say. */
interface Edited {
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
type FileEdit = (
  file: ContextFile,
  key: ContextKey,
  at: number,
  snapshot: RepositorySnapshot,
) => E.Either<ContextError, Edited>;

interface Session {
  readonly kind: ContextKind;
  readonly flag: SharedContextFlag;
  readonly location: RepositoryLocation;
  /** The key parts the caller named; the others come from the repository when it is read. */
  readonly named: { readonly repo?: string; readonly branch?: string; readonly workstreamId: string };
  readonly paths: ContextPaths;
  readonly now: () => number;
  readonly display: (file: string) => string;
}

/** The repository as read for one call: its state, and the key it gives the context. */
interface Observation {
  readonly snapshot: RepositorySnapshot;
  /** The key with the computed (or named) repo part; a file may hold the context under another repo part. */
  readonly key: ContextKey;
  /** The repository identity this checkout computes; undefined when the caller named the repo. */
  readonly identity?: RepositoryIdentity;
  /** The repository as read: its index, deleted files, and where HEAD is. */
  readonly observed: Observed;
}

type Result<T> = Promise<E.Either<ContextError, T>>;

/** The most a config file may hold: it is one small JSON object. */
const CONFIG_MAX_BYTES = 64 * 1024;

const configError = (message: string): ContextError => ({ code: 'config', message });

/** The `sharedContext.enabled` of the config file at `file`; undefined when there is none. */
const readConfig = async (file: string): Result<boolean | undefined> => {
  const text = await readTextIfExists(file, CONFIG_MAX_BYTES);
  if (E.isLeft(text)) return E.left(configError(`${CONTEXT_CONFIG_FILE} ${text.left.message}`));
  const content = text.right;
  if (content === undefined) return E.right(undefined);
  return pipe(
    E.tryCatch(
      () => JSON.parse(content) as unknown,
      () => configError(`${CONTEXT_CONFIG_FILE} is not valid JSON`),
    ),
    E.chain((config) => E.mapLeft(configError)(configFlag(config))),
  );
};

/** The flag from the option and the environment, then, only when neither says, from the config file at `root`. */
const resolveFlag = async (early: SharedContextFlag, root: string): Result<SharedContextFlag> => {
  if (early.source !== 'default') return E.right(early);
  const { path } = await nodeModules();
  // The same confinement as data/context/: a link out of the repository (to /dev/stdin, to a file elsewhere) is not followed.
  const confined = await confineToRoot(root, [CONTEXT_CONFIG_FILE]);
  if (E.isLeft(confined)) return E.left(configError(confined.left.message));
  const config = await readConfig(path.join(root, CONTEXT_CONFIG_FILE));
  return E.chain((value: boolean | undefined) =>
    E.mapLeft(configError)(resolveSharedContextFlag(undefined, undefined, value)),
  )(config);
};

/** The file names of the context directory, in the order the shell checks them. */
const CHECKED_NAMES = (kind: ContextKind): ReadonlyArray<string> => {
  const names = contextFileNames(kind);
  return [names.json, `${names.json}.lock`, names.dashboard, names.sessions, '.gitignore'];
};

/** Refuses when any path of `kind` would lead out of the repository at `root` through a symbolic link. */
const confine = async (root: string, kind: ContextKind): Result<void> => {
  const directory = CONTEXT_DIRECTORY.split('/');
  const inDirectory = await confineToRoot(root, directory);
  if (E.isLeft(inDirectory)) return inDirectory;
  for (const name of CHECKED_NAMES(kind)) {
    const file = await confineToRoot(root, [...directory, name]);
    if (E.isLeft(file)) return file;
  }
  return E.right(undefined);
};

/** The paths of `kind` in the repository at `root`. */
const pathsFor = async (root: string, kind: ContextKind): Promise<ContextPaths> => {
  const { path } = await nodeModules();
  const directory = path.join(root, ...CONTEXT_DIRECTORY.split('/'));
  const names = contextFileNames(kind);
  return {
    root,
    directory,
    json: path.join(directory, names.json),
    sessions: path.join(directory, names.sessions),
    dashboard: path.join(directory, names.dashboard),
    gitignore: path.join(directory, '.gitignore'),
  };
};

/**
 * The first commit a context file of either kind records as its repository's identity, from
 * its first bytes (it is written first): the identity is the repository's, whichever kind
 * recorded it.
 */
const recordedRoot = async (session: Session): Promise<string | undefined> => {
  const { path } = await nodeModules();
  for (const kind of [session.kind, ...CONTEXT_KINDS.filter((other) => other !== session.kind)]) {
    const head = await readTextIfExists(path.join(session.paths.directory, contextFileNames(kind).json), 1024, true);
    const found = E.isRight(head)
      ? /"repository"\s*:\s*\{\s*"id"\s*:\s*"first-commit:([0-9a-f]{12})"/u.exec(head.right ?? '')
      : null;
    if (found?.[1] !== undefined) return found[1];
  }
  return undefined;
};

/** The paths of the context that `options` names in the repository at `location`, once each is known to stay inside it. */
const sessionFor = async (
  options: ContextOptions,
  location: RepositoryLocation,
  flag: SharedContextFlag,
): Result<Session> => {
  const { path } = await nodeModules();
  const kind = options.kind ?? 'planning';
  if (!(CONTEXT_KINDS as ReadonlyArray<string>).includes(kind))
    return E.left({
      code: 'invalid',
      message: `the kind of a context is ${CONTEXT_KINDS.join(' or ')}, not ${JSON.stringify(kind)}`,
    });
  const { root } = location;
  const confined = await confine(root, kind);
  if (E.isLeft(confined)) return confined;
  // An explicit key part must be valid as it is; the repository's own names are sanitized when read.
  const explicit = parseContextKey({
    repo: options.repo ?? 'unset',
    branch: options.branch ?? 'unset',
    workstreamId: options.workstreamId ?? DEFAULT_WORKSTREAM,
  });
  if (E.isLeft(explicit)) return explicit;
  return E.right({
    kind,
    flag,
    location,
    named: {
      ...(options.repo === undefined ? {} : { repo: options.repo }),
      ...(options.branch === undefined ? {} : { branch: options.branch }),
      workstreamId: explicit.right.workstreamId,
    },
    paths: await pathsFor(root, kind),
    now: options.now ?? Date.now,
    display: (file) => path.relative(root, file).split(path.sep).join('/'),
  });
};

/**
 * Reads the repository for one call: its state and branch (one `git status`), and what it
 * says about itself, at once; from them, the key of the context.
 */
const observe = async (session: Session): Result<Observation> => {
  const { named, location } = session;
  const [observed, facts] = await Promise.all([
    observeSnapshot(location),
    named.repo === undefined ? readRepositoryFacts(location, await recordedRoot(session)) : undefined,
  ]);
  if (E.isLeft(observed)) return observed;
  if (facts !== undefined && E.isLeft(facts)) return facts;
  const identity = facts === undefined ? undefined : identifyRepository(facts.right);
  return E.map((key: ContextKey): Observation => ({
    snapshot: observed.right.snapshot,
    key,
    ...(identity === undefined ? {} : { identity }),
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
  const part = sanitizeKeyPart(observed.branch);
  return part === DETACHED || part === NO_BRANCH ? `refs/heads/${part}` : part;
};

/** The directory `options` name, or why there is none (a deleted working directory). */
const workingDirectory = async (options: ContextOptions): Result<string> => {
  const { path } = await nodeModules();
  try {
    return E.right(path.resolve(options.cwd ?? process.cwd()));
  } catch (error) {
    return E.left(ioError('the current directory no longer exists (was it deleted?)', error));
  }
};

/**
 * Resolves the flag and, when it is on, the repository, the key and the paths. An option or
 * an environment variable decides before anything is read; only when neither says is the
 * config file at the repository root consulted, and only once the flag is on does git run
 * more than the one command that finds the root (none when the directory holds `.git`).
 */
const begin = async (options: ContextOptions): Result<O.Option<Session>> => {
  if (typeof process === 'undefined')
    return E.left({ code: 'io', message: 'the context store needs Node.js: it reads files and runs git' });
  const early = resolveSharedContextFlag(options.enabled, (options.env ?? process.env)[SHARED_CONTEXT_ENV], undefined);
  if (E.isLeft(early)) return E.left(configError(early.left));
  if (early.right.source !== 'default' && !early.right.enabled) return E.right(O.none);
  const modules = await nodeModules().then(E.right, (error: unknown) =>
    E.left(ioError("cannot load Node's file and process modules", error)),
  );
  if (E.isLeft(modules)) return modules;
  const cwd = await workingDirectory(options);
  if (E.isLeft(cwd)) return cwd;
  const location = await locateRepository(cwd.right);
  if (E.isLeft(location)) return location;
  const flag = await resolveFlag(early.right, location.right.root);
  if (E.isLeft(flag)) return flag;
  if (!flag.right.enabled) return E.right(O.none);
  return E.map((session: Session) => O.some(session))(await sessionFor(options, location.right, flag.right));
};

/** The command line that runs `subcommand` on this session's kind (`--kind implementation` included when it is). */
const contextCommand = (session: Session, subcommand: string): string =>
  `fact-tracker context ${subcommand}${session.kind === 'planning' ? '' : ` --kind ${session.kind}`}`;

const located = (session: Session, file: string, error: ContextError): ContextError => ({
  ...error,
  message: `${session.display(file)}: ${error.message}`,
});

/** Decodes file text, or says why not; `decode` is the kind's decoder. */
const decodeText = <T>(
  text: string,
  decode: (value: unknown) => E.Either<ContextError, T>,
): E.Either<ContextError, T> => pipe(parseJsonText(text), E.chain(decode));

const workstreamsOf = (file: ContextFile): ReadonlyArray<string> =>
  file.contexts.map((context) => `${context.key.workstreamId} (branch ${context.key.branch})`);

const describeSide = (workstreams: ReadonlyArray<string>): string =>
  workstreams.length === 0 ? 'no workstream' : `workstreams ${workstreams.join(', ')}`;

/** A context file as read: decoded, or the two decoded sides of a merge conflict. */
type ReadFile =
  | { readonly kind: 'absent' }
  | { readonly kind: 'file'; readonly file: ContextFile }
  | { readonly kind: 'conflict'; readonly ours: ContextFile; readonly theirs: ContextFile }
  | { readonly kind: 'broken'; readonly text: string; readonly error: ContextError };

const prune = (session: Session): string =>
  `prune it: remove the workstreams you no longer need from "contexts" in ${session.display(session.paths.json)} (or old claims from their evidence_ledger), then try again`;

/** Reads the context file without changing anything: absent, decoded, in conflict, or broken (and why). */
const readContextFile = async (session: Session): Result<ReadFile> => {
  const file = session.paths.json;
  const text = await readTextIfExists(file, CONTEXT_FILE_MAX_BYTES);
  if (E.isLeft(text))
    return E.left(
      located(
        session,
        file,
        text.left.code === 'too_large'
          ? { ...text.left, message: `${text.left.message}: ${prune(session)}` }
          : text.left,
      ),
    );
  if (text.right === undefined) return E.right({ kind: 'absent' });
  return parseContextText(session, text.right);
};

/** Context file text as read: decoded, the two decoded sides of a merge conflict, or broken (and why). */
const parseContextText = (session: Session, text: string): E.Either<ContextError, ReadFile> => {
  const file = session.paths.json;
  const decode = (value: unknown) => decodeContextFile(value, session.kind);
  const sides = splitConflictMarkers(text);
  if (sides !== undefined) {
    const ours = decodeText(sides.ours, decode);
    const theirs = decodeText(sides.theirs, decode);
    if (E.isRight(ours) && E.isRight(theirs))
      return E.right({ kind: 'conflict', ours: ours.right, theirs: theirs.right });
    // A side written by a newer version is not broken: refused and left as it is, like a whole newer file.
    for (const [name, side] of [
      ['our', ours],
      ['their', theirs],
    ] as const)
      if (E.isLeft(side) && side.left.code === 'future_version')
        return E.left(
          located(session, file, {
            code: 'future_version',
            message: `has merge conflict markers, and ${name} side was ${side.left.message.replace(
              '(the file was left as it is)',
              `and run ${contextCommand(session, 'resolve')} (the file was left as it is)`,
            )}`,
          }),
        );
    const broken = E.isLeft(ours) ? ours.left : (theirs as E.Left<ContextError>).left;
    return E.right({
      kind: 'broken',
      text,
      error: {
        ...broken,
        message: `has merge conflict markers, and one side is not a context file: ${broken.message}`,
      },
    });
  }
  const decoded = decodeText(text, decode);
  if (E.isRight(decoded)) return E.right({ kind: 'file', file: decoded.right });
  if (decoded.left.code !== 'corrupt') return E.left(located(session, file, decoded.left));
  return E.right({ kind: 'broken', text, error: decoded.left });
};

/** True when a sparse checkout leaves files of the context directory out of the working tree. */
const outsideSparseCheckout = (observed: Observed): boolean =>
  [...observed.index.values()].some((entry) => entry.skipWorktree && isInside(CONTEXT_DIRECTORY, entry.path));

/**
 * The committed context file when a sparse checkout leaves it out of the working tree: read
 * from the index, so that the context a team committed is still what a read shows. Undefined
 * when the file is not left out that way.
 */
const readFromIndex = async (
  session: Session,
  observed: Observed,
): Promise<E.Either<ContextError, ReadFile | undefined>> => {
  const entry = observed.index.get(session.display(session.paths.json));
  if (entry === undefined || !entry.skipWorktree) return E.right(undefined);
  const blob = await readBlob(session.paths.root, entry.blob, CONTEXT_FILE_MAX_BYTES);
  if (E.isLeft(blob)) return E.left(located(session, session.paths.json, blob.left));
  return parseContextText(session, blob.right.toString('utf8'));
};

/** What a read from the index says. */
const SPARSE_NOTE = `${CONTEXT_DIRECTORY}/ is outside this sparse checkout: the context was read from the index; run git sparse-checkout add ${CONTEXT_DIRECTORY} to record anything`;

/** What a read-only call says of a file it cannot use: it is reported, and left exactly as it is. */
const reportUnusable = (session: Session, read: ReadFile): ContextError | undefined => {
  if (read.kind === 'broken')
    return located(session, session.paths.json, {
      ...read.error,
      message: `${read.error.message} (left as it is; the next write moves it aside)`,
    });
  if (read.kind === 'conflict')
    return located(session, session.paths.json, {
      code: 'conflicted',
      message: `has merge conflict markers (from a git pull or merge): ours holds ${describeSide(workstreamsOf(read.ours))}; theirs holds ${describeSide(workstreamsOf(read.theirs))}; run ${contextCommand(session, 'resolve')} (or any write) to merge both sides`,
    });
  return undefined;
};

/** The sessions file, or why it was ignored (read-only: a broken one is left as it is). */
const readSessionsFile = async (session: Session): Promise<E.Either<string, ContextSessionsFile>> => {
  const empty: ContextSessionsFile = { kind: session.kind, sessions: [] };
  const text = await readTextIfExists(session.paths.sessions, CONTEXT_FILE_MAX_BYTES);
  if (E.isLeft(text))
    return E.left(`tool sessions ignored: ${located(session, session.paths.sessions, text.left).message}`);
  if (text.right === undefined) return E.right(empty);
  return E.mapLeft(
    (error: ContextError) => `tool sessions ignored: ${located(session, session.paths.sessions, error).message}`,
  )(decodeText(text.right, (value) => decodeSessionsFile(value, session.kind)));
};

/** Verifies `context` against the repository: the checkpoint, the diff since it, the evidence files. */
const verify = async (session: Session, context: SharedContext, observed: Observed): Promise<ContextStatus> => {
  const { root } = session.paths;
  const { snapshot } = observed;
  const diff: E.Either<string, ReadonlyArray<ChangedFile>> = snapshot.kind === 'git' &&
  context.checkpoint !== undefined &&
  needsDiff(checkpointMismatch(context, snapshot))
    ? await changedFiles(root, context.checkpoint.gitHead)
    : E.right([]);
  const evidence = {
    snapshot,
    changes: E.getOrElse((): ReadonlyArray<ChangedFile> => [])(diff),
    missingPaths: await missingEvidencePaths(root, context, observed),
    ...(E.isLeft(diff) ? { diffNote: diff.left } : {}),
  };
  return verifyCheckpoint(context, evidence, CONTEXT_DIRECTORY);
};

const sessionsOf = (file: ContextSessionsFile, key: ContextKey): CliSessions =>
  file.sessions.find((entry) => isSameContextKey(entry.key, key))?.cliSessions ?? {};

/** The key of this checkout in `file`, the file as it should be written, and what to tell the user. */
const keyIn = (
  observation: Observation,
  file: ContextFile,
): { key: ContextKey; file: ContextFile; notes: string[] } => {
  if (observation.identity === undefined) return { key: observation.key, file, notes: [] };
  const resolution = resolveRepositoryKey(file, observation.identity);
  return {
    key: { ...observation.key, repo: resolution.repo },
    file: resolution.file,
    notes: resolution.note === undefined ? [] : [resolution.note],
  };
};

interface Found {
  readonly key: ContextKey;
  readonly stored: SharedContext | undefined;
  readonly sessions: CliSessions;
  readonly warnings: ReadonlyArray<string>;
  readonly notes: ReadonlyArray<string>;
  readonly mergedConflict?: ConflictReport;
  readonly dropped: ReadonlyArray<DroppedEntry>;
  readonly elsewhere: ReadonlyArray<ContextKey>;
  readonly dashboardRegenerated: boolean;
}

/** The context stored under the key (or a new one), verified against the repository, with its sessions and warnings. */
const loaded = async (session: Session, found: Found, observed: Observed): Promise<LoadedContext> => {
  const context = found.stored ?? emptySharedContext(found.key);
  const status = await verify(session, context, observed);
  return {
    kind: session.kind,
    key: found.key,
    flag: session.flag,
    stored: found.stored !== undefined,
    context: markSummaryStale(context, status),
    status,
    sessions: found.sessions,
    paths: session.paths,
    warnings: found.warnings,
    notes: found.notes,
    ...(found.mergedConflict === undefined ? {} : { mergedConflict: found.mergedConflict }),
    dropped: found.dropped,
    elsewhere: found.elsewhere,
    dashboardRegenerated: found.dashboardRegenerated,
  };
};

/**
 * What to say about where HEAD is, when the caller did not name the branch: the branch a
 * rebase or bisect works for (a note), or a HEAD detached on its own (a warning: its key is
 * shared by every detached checkout).
 */
const headNotes = (
  session: Session,
  observed: Observed,
  write: boolean,
): { readonly notes: ReadonlyArray<string>; readonly warnings: ReadonlyArray<string> } => {
  if (session.named.branch !== undefined) return { notes: [], warnings: [] };
  const { head } = observed;
  const directory = session.display(session.paths.directory);
  if (head === 'rebase' || head === 'bisect')
    return { notes: [headNotice(head, sanitizeKeyPart(observed.branch), write, directory)], warnings: [] };
  if (head === 'detached') return { notes: [], warnings: [headNotice('detached', DETACHED, write, directory)] };
  return { notes: [], warnings: [] };
};

/**
 * What to say about the other keys of the file that hold this workstream: where it is when
 * nothing is stored here (a renamed branch), and the same branch under another repository key
 * (a context written by a checkout that keyed the repository differently).
 */
const elsewhereNotes = (
  session: Session,
  key: ContextKey,
  stored: boolean,
  others: ReadonlyArray<ContextKey>,
): string[] => {
  if (!stored) return others.length === 0 ? [] : [elsewhereNotice(key, others, session.kind)];
  return others
    .filter((other) => other.branch === key.branch && other.repo !== key.repo)
    .map(
      (other) =>
        `the file also holds workstream ${other.workstreamId} on branch ${other.branch} under repo ${other.repo}, written by a checkout that identified the repository differently`,
    );
};

/** Where a stored context holds a secret, said for a reader: what it shows is redacted, and writes stay refused until it is removed. */
const secretWarning = (session: Session, file: ContextFile, context: SharedContext): string | undefined => {
  const secret = findContextSecret(context);
  if (secret === undefined) return undefined;
  const index = file.contexts.indexOf(context);
  return `${session.display(session.paths.json)} holds what looks like ${secret.shape} in contexts[${index}].${secret.path}: it is redacted here; remove it from the file (writes are refused until it is gone)`;
};

/**
 * True when the dashboard on disk is not what the JSON renders to (a merge, an interrupted
 * write), or is missing when `missing` counts; false when it cannot be read.
 */
const dashboardOutOfStep = async (session: Session, file: ContextFile, missing: boolean): Promise<boolean> => {
  const text = await readTextIfExists(session.paths.dashboard, 4 * CONTEXT_FILE_MAX_BYTES);
  if (E.isLeft(text)) return false;
  return text.right === undefined
    ? missing
    : text.right !== renderContextDashboard(file, contextFileNames(session.kind).json);
};

/** Runs `work` on the session `options` name; `None` without running it when the feature flag is off. */
const whenEnabled = async <T>(options: ContextOptions, work: (session: Session) => Result<T>): Result<O.Option<T>> => {
  const begun = await begin(options);
  if (E.isLeft(begun)) return begun;
  return O.isNone(begun.right) ? E.right(O.none) : E.map((value: T) => O.some(value))(await work(begun.right.value));
};

/**
 * Loads the context of `options.kind` (planning by default) for the workstream and verifies
 * it against the repository: a mismatch with the checkpoint marks the summary stale and lists
 * the changed files. Read-only: a corrupt file or one with merge conflict markers is reported
 * and left as it is. `None` when the feature flag is off (no file is touched).
 */
export const loadContext = (options: ContextOptions): Result<O.Option<LoadedContext>> =>
  whenEnabled(options, async (session) => {
    // Read-only: git and the file can be read at once.
    const [observation, onDisk] = await Promise.all([observe(session), readContextFile(session)]);
    if (E.isLeft(observation)) return observation;
    if (E.isLeft(onDisk)) return onDisk;
    const { observed } = observation.right;
    const fromIndex = onDisk.right.kind === 'absent' ? await readFromIndex(session, observed) : E.right(undefined);
    if (E.isLeft(fromIndex)) return fromIndex;
    const read = fromIndex.right ?? onDisk.right;
    const unusable = reportUnusable(session, read);
    if (unusable !== undefined) return E.left(unusable);
    const file = read.kind === 'file' ? read.file : { kind: session.kind, contexts: [] };
    const { key, file: resolved, notes } = keyIn(observation.right, file);
    const sessions = await readSessionsFile(session);
    const stored = O.toUndefined(selectContext(resolved, key));
    const elsewhere = selectOtherKeys(resolved, key);
    const secret = stored === undefined ? undefined : secretWarning(session, resolved, stored);
    const head = headNotes(session, observed, false);
    const outOfStep =
      read === onDisk.right && read.kind === 'file' && (await dashboardOutOfStep(session, read.file, false));
    const found: Found = {
      key,
      stored: stored === undefined ? undefined : redactContext(stored),
      sessions: E.isRight(sessions) ? sessionsOf(sessions.right, key) : {},
      warnings: [
        ...(E.isLeft(sessions) ? [sessions.left] : []),
        ...head.warnings,
        ...(secret === undefined ? [] : [secret]),
      ],
      notes: [
        ...(resolved === file || stored === undefined
          ? notes
          : notes.map((note) => `${note} (re-keyed in the file at the next write)`)),
        ...head.notes,
        ...elsewhereNotes(session, key, stored !== undefined, elsewhere),
        ...(fromIndex.right === undefined ? [] : [SPARSE_NOTE]),
        ...(outOfStep
          ? [
              `the dashboard ${session.display(session.paths.dashboard)} is out of step with the JSON (a merge or an interrupted write): ${contextCommand(session, 'resolve')} regenerates it`,
            ]
          : []),
      ],
      dropped: [],
      elsewhere,
      dashboardRegenerated: false,
    };
    return E.right(await loaded(session, found, observed));
  });

type StillLocked = () => E.Either<ContextError, true>;

/**
 * The context file to change, under the lock: a broken file is moved aside and reported (the
 * write stops there); the two sides of a conflict are merged.
 */
const readForWrite = async (
  session: Session,
): Result<{
  readonly file: ContextFile;
  readonly onDisk?: ContextFile;
  readonly mergedConflict?: ConflictReport;
  readonly dropped: ReadonlyArray<DroppedEntry>;
}> => {
  const read = await readContextFile(session);
  if (E.isLeft(read)) return read;
  const empty: ContextFile = { kind: session.kind, contexts: [] };
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
      const backup = await moveAside(session.paths.json, session.now());
      return E.left(
        located(session, session.paths.json, {
          code: 'corrupt',
          message: E.isLeft(backup)
            ? `${broken.message}; it could not be moved aside (${backup.left.message})`
            : `${broken.message}; moved aside to ${session.display(backup.right)}`,
          ...(E.isRight(backup) ? { backup: backup.right } : {}),
        }),
      );
    }
  }
};

/** The derived files of a written context file: the `.gitignore` and the dashboard. Each failure is a warning. */
const writeDerived = async (session: Session, file: ContextFile, stillLocked: StillLocked): Promise<string[]> => {
  const warnings: string[] = [];
  const ignore = await writeFileIfMissing(session.paths.gitignore, CONTEXT_GITIGNORE);
  if (E.isLeft(ignore))
    warnings.push(`${session.display(session.paths.gitignore)} not written: ${ignore.left.message}`);
  const dashboard = await writeFileAtomic(
    session.paths.dashboard,
    renderContextDashboard(file, contextFileNames(session.kind).json),
    stillLocked,
  );
  if (E.isLeft(dashboard))
    warnings.push(
      `the dashboard ${session.display(session.paths.dashboard)} was not updated (${dashboard.left.message}); the context itself was saved`,
    );
  return warnings;
};

/**
 * The sessions file with `add` merged in under `key` (and the sessions of `from`, a moved
 * context's key, taken over), checked before anything is written; undefined when nothing changes.
 */
const sessionsToWrite = async (
  session: Session,
  key: ContextKey,
  add: CliSessions,
  from?: ContextKey,
): Promise<
  E.Either<ContextError, { readonly text: string; readonly merged: CliSessions; readonly warning?: string } | undefined>
> => {
  const read = await readSessionsFile(session);
  const file: ContextSessionsFile = E.isRight(read) ? read.right : { kind: session.kind, sessions: [] };
  const moved = from === undefined ? {} : sessionsOf(file, from);
  if (Object.keys(add).length === 0 && Object.keys(moved).length === 0) return E.right(undefined);
  const merged = { ...moved, ...sessionsOf(file, key), ...add };
  const next: ContextSessionsFile = {
    kind: session.kind,
    sessions: [
      ...file.sessions.filter(
        (entry) => !isSameContextKey(entry.key, key) && (from === undefined || !isSameContextKey(entry.key, from)),
      ),
      { key, cliSessions: merged },
    ],
  };
  return E.map((document: unknown) => ({
    text: formatJsonDocument(document),
    merged,
    ...(E.isLeft(read) ? { warning: `${read.left}; it is replaced` } : {}),
  }))(encodeCheckedSessionsFile(next));
};

/** The text of `file` as it will be written, or why it may not be: the reader would refuse it, or it is too large. */
const contextText = (
  session: Session,
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
            located(session, session.paths.json, {
              code: 'too_large',
              message: `would grow to ${formatBytes(bytes)}, over the ${formatBytes(CONTEXT_FILE_MAX_BYTES)} a context file may hold: ${prune(session)}`,
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
  session: Session,
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
        located(session, session.paths.json, {
          code: 'secret',
          message: `contexts[${index}] (workstream ${context.key.workstreamId}, branch ${context.key.branch}) holds what looks like ${secret.shape} in ${secret.path}: nothing is written while the file holds a secret; remove it from the file and try again`,
        }),
      );
  }
  return E.right(true);
};

/** The change of one context as an edit of the file: the context under the key, changed; the rest as it was. */
const editOne =
  (change: ContextChange): FileEdit =>
  (file, key, at, snapshot) => {
    const stored = O.toUndefined(selectContext(file, key));
    const current = stored ?? emptySharedContext(key);
    const changed = change(current, at, snapshot);
    if (E.isLeft(changed)) return changed;
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

/** Rewrites the dashboard when it is out of step with the JSON it is made from: true when it did, or a warning. */
const regenerateDashboard = async (
  session: Session,
  file: ContextFile,
  stillLocked: StillLocked,
): Promise<E.Either<string, boolean>> => {
  if (!(await dashboardOutOfStep(session, file, true))) return E.right(false);
  const written = await writeFileAtomic(
    session.paths.dashboard,
    renderContextDashboard(file, contextFileNames(session.kind).json),
    stillLocked,
  );
  return E.isLeft(written)
    ? E.left(
        `the dashboard ${session.display(session.paths.dashboard)} is out of step with the JSON and could not be rewritten (${written.left.message})`,
      )
    : E.right(true);
};

/**
 * Under the lock: reads the repository and the file, applies the edit, and writes the JSON
 * (the truth: its failure fails the call), then the derived files and the sessions (their
 * failures are warnings). Inputs are all checked before the first write: the evidence of new
 * claims against the repository, and the whole file for secrets.
 */
const changeLocked = async (
  session: Session,
  edit: FileEdit,
  sessions: CliSessions | undefined,
  stillLocked: StillLocked,
): Result<{ readonly found: Found; readonly observed: Observed }> => {
  const confined = await confine(session.paths.root, session.kind);
  if (E.isLeft(confined)) return confined;
  await removeStaleTemporaries(session.paths.directory, Object.values(contextFileNames(session.kind)), session.now());
  // The repository is read under the lock, so the checkpoint records the state as it is when written.
  const observation = await observe(session);
  if (E.isLeft(observation)) return observation;
  const { snapshot, observed } = observation.right;
  if (outsideSparseCheckout(observed))
    return E.left({
      code: 'invalid',
      message: `${CONTEXT_DIRECTORY}/ is outside this sparse checkout: the committed context is not in the working tree, and git add would refuse what is written there; run git sparse-checkout add ${CONTEXT_DIRECTORY}, then try again`,
    });
  const read = await readForWrite(session);
  if (E.isLeft(read)) return read;
  const { key, file, notes } = keyIn(observation.right, read.right.file);
  const edited = edit(file, key, session.now(), snapshot);
  if (E.isLeft(edited)) return edited;
  const { file: out, context } = edited.right;
  const fileChanged =
    read.right.onDisk === undefined
      ? out !== file || read.right.mergedConflict !== undefined
      : out !== read.right.onDisk;
  if (fileChanged) {
    const evidence = edited.right.evidence;
    if (evidence !== undefined) {
      const checked = await checkNewEvidence(session.paths.root, evidence.before, evidence.after, observed);
      if (E.isLeft(checked)) return checked;
    }
    const clean = withoutSecrets(session, out, out === file ? undefined : context);
    if (E.isLeft(clean)) return clean;
  }
  const text = fileChanged ? contextText(session, out, read.right.onDisk) : E.right('');
  if (E.isLeft(text)) return text;
  const tools =
    (sessions !== undefined && Object.keys(sessions).length > 0) || edited.right.sessionsFrom !== undefined
      ? await sessionsToWrite(session, key, sessions ?? {}, edited.right.sessionsFrom)
      : E.right(undefined);
  if (E.isLeft(tools)) return tools;
  const warnings: string[] = [];
  let dashboardRegenerated = false;
  if (fileChanged) {
    const json = await writeFileAtomic(session.paths.json, text.right, stillLocked);
    if (E.isLeft(json)) return json;
    warnings.push(...(await writeDerived(session, out, stillLocked)));
  } else if (read.right.onDisk !== undefined) {
    const regenerated = await regenerateDashboard(session, out, stillLocked);
    if (E.isLeft(regenerated)) warnings.push(regenerated.left);
    else dashboardRegenerated = regenerated.right;
  }
  let cliSessions: CliSessions;
  if (tools.right === undefined) {
    const present = await readSessionsFile(session);
    if (E.isLeft(present)) warnings.push(present.left);
    cliSessions = E.isRight(present) ? sessionsOf(present.right, key) : {};
  } else {
    const written = await writeFileAtomic(session.paths.sessions, tools.right.text, stillLocked);
    if (E.isLeft(written))
      warnings.push(`tool sessions not saved: ${written.left.message}; the context itself was saved`);
    else if (tools.right.warning !== undefined) warnings.push(tools.right.warning);
    cliSessions = E.isRight(written) ? tools.right.merged : {};
  }
  const head = headNotes(session, observed, fileChanged);
  const stored = context === undefined ? undefined : O.toUndefined(selectContext(out, key));
  // A write that changed nothing wrote nothing, so a secret already in the file can still be there: never shown.
  const secret = stored === undefined || fileChanged ? undefined : secretWarning(session, out, stored);
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
 * True when the file's first bytes declare a newer schema version (the encoder writes
 * `schema_version` first): such a file is refused without a lock, so nothing is touched,
 * and without parsing the whole file twice on every write.
 */
const isNewerVersion = async (session: Session): Promise<boolean> => {
  const head = await readTextIfExists(session.paths.json, 512, true);
  const version = E.isRight(head) ? /^\s*\{\s*"schema_version"\s*:\s*(\d+)/u.exec(head.right ?? '') : null;
  return version !== null && Number(version[1]) > CONTEXT_SCHEMA_VERSION;
};

const tooLarge = (session: Session): ContextError =>
  located(session, session.paths.json, {
    code: 'too_large',
    message: `is larger than ${formatBytes(CONTEXT_FILE_MAX_BYTES)}, the most it may hold: ${prune(session)}`,
  });

/**
 * A write that could not take the lock or create the folder (a folder that cannot be written
 * to): when the file there is broken, that is what the user needs to hear, with why it could
 * not be moved aside.
 */
const stuck = async (session: Session, error: ContextError): Promise<ContextError> => {
  if (error.code === 'corrupt') return error;
  const read = await readContextFile(session);
  if (E.isLeft(read) || read.right.kind !== 'broken') return error;
  return located(session, session.paths.json, {
    ...read.right.error,
    message: `${read.right.error.message}; it could not be moved aside (${error.message})`,
  });
};

/** Applies `edit` to the file under the lock, as `updateContext` does; `None` when the feature flag is off. */
const editContext = (
  options: ContextOptions,
  edit: FileEdit,
  sessions?: CliSessions,
): Result<O.Option<LoadedContext>> =>
  whenEnabled(options, async (session) => {
    // Outside a repository there is no data/context/ to keep: nothing is created in whatever folder this is.
    if (session.location.kind === 'none')
      return E.left({
        code: 'not_a_git_repository',
        message: `${session.location.reason}: the shared context is kept in a git repository's ${CONTEXT_DIRECTORY}/, so nothing was written; run it in a checkout`,
      });
    // A file that cannot be used at all (too large) is refused before anything is created or locked.
    const size = await fileSize(session.paths.json);
    if (size > CONTEXT_FILE_MAX_BYTES) return E.left(tooLarge(session));
    if (await isNewerVersion(session)) {
      const refused = await readContextFile(session);
      if (E.isLeft(refused)) return refused;
    }
    const directory = await makeDirectory(session.paths.directory);
    if (E.isLeft(directory)) return E.left(await stuck(session, directory.left));
    const written = await withFileLock(
      session.paths.json,
      lockWaitFor(size),
      (stillLocked) => changeLocked(session, edit, sessions, stillLocked),
      session.display(session.paths.json),
    );
    if (E.isLeft(written)) {
      await directory.right();
      return E.left(
        written.left.code === 'corrupt' || written.left.code === 'io'
          ? await stuck(session, written.left)
          : written.left,
      );
    }
    return E.right(await loaded(session, written.right.found, written.right.observed));
  });

/**
 * Applies `change` to the workstream's context under the file lock: read, change, write
 * atomically (context file, then dashboard). A change that returns the same context writes
 * nothing (unless the file itself needs it: a merge conflict, a migrated key; a dashboard out
 * of step with the JSON is rewritten); `sessions` are merged into the `*.local.json` file.
 * New claims must point at files git tracks and lines they have; a file that holds a secret
 * anywhere is not written. `None` when the feature flag is off (no file is touched).
 */
export const updateContext = (
  options: ContextOptions,
  change: ContextChange,
  sessions?: CliSessions,
): Result<O.Option<LoadedContext>> => editContext(options, editOne(change), sessions);

/**
 * Records how a run ended. After a verified checkpoint (`status: 'succeeded'`) the summary and
 * the rest of the working context are updated and a new checkpoint recorded; after a failure
 * only `failedStep`, `error` and `nextAction` are, and the last good summary stays. `None` when
 * the feature flag is off (no file is touched).
 */
export const writeContext = (options: ContextOptions, outcome: RunOutcome): Result<O.Option<LoadedContext>> =>
  updateContext(options, (context, at, snapshot) => applyRunOutcome(context, outcome, at, snapshot), outcome.sessions);

/**
 * Merges the two sides of a context file that a `git pull` or merge left with conflict
 * markers (union of decisions, claims and failures; the newer summary and checkpoint win) and
 * writes it back with its dashboard. `mergedConflict` on the result says whether there was
 * one; without one, nothing is written.
 */
export const resolveContext = (options: ContextOptions): Result<O.Option<LoadedContext>> =>
  updateContext(options, (context) => E.right(context));

/**
 * Carries the workstream's context stored under branch `from` to the branch the checkout is on
 * (or `options.branch`): after `git branch -m`, the context keyed by the old name. When the new
 * branch holds a context too, the two are merged as a merge conflict's sides are (see
 * `mergeContexts`); the tool sessions move with it. A note says when it merged. `None` when
 * the feature flag is off (no file is touched).
 */
export const moveContext = (options: ContextOptions, from: string): Result<O.Option<LoadedContext>> =>
  editContext(options, (file, key) => {
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
        message: `nothing is stored for workstream ${key.workstreamId} on branch ${from}${others.length === 0 ? '' : `; it is stored on branch ${others.map((other) => other.branch).join(', ')}`}`,
      });
    }
    const present = O.toUndefined(selectContext(file, key));
    const arriving: SharedContext = { ...moving, key };
    const context = present === undefined ? arriving : { ...mergeContexts(present, arriving), key };
    return E.right({
      file: upsertContext(removeContext(file, source.right), context),
      context,
      sources: present === undefined ? [arriving] : [present, arriving],
      sessionsFrom: source.right,
      notes:
        present === undefined
          ? []
          : [`branch ${key.branch} held a context of workstream ${key.workstreamId} too: the two are merged`],
    });
  });
