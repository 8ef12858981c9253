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
import { selectEvidencePaths } from '../ledger.js';
import { mergeContextFiles, splitConflictMarkers } from '../merge.js';
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
  type RunOutcome,
  selectContext,
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
  locateRepository,
  observeSnapshot,
  readRepositoryFacts,
  type RepositoryLocation,
} from './git.js';
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
}

/** The workstreams on each side of a conflicted context file. */
export interface ConflictReport {
  readonly ours: ReadonlyArray<string>;
  readonly theirs: ReadonlyArray<string>;
}

/** A change to one context at time `at`, against the repository snapshot taken for the write. */
export type ContextChange = (
  context: SharedContext,
  at: number,
  snapshot: RepositorySnapshot,
) => E.Either<ContextError, SharedContext>;

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

/** The first commit the file at `json` records as its repository's identity, from its first bytes (it is written first). */
const recordedRoot = async (json: string): Promise<string | undefined> => {
  const head = await readTextIfExists(json, 1024, true);
  const found = E.isRight(head)
    ? /"repository"\s*:\s*\{\s*"id"\s*:\s*"first-commit:([0-9a-f]{12})"/u.exec(head.right ?? '')
    : null;
  return found?.[1];
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
    named.repo === undefined ? readRepositoryFacts(location, await recordedRoot(session.paths.json)) : undefined,
  ]);
  if (E.isLeft(observed)) return observed;
  if (facts !== undefined && E.isLeft(facts)) return facts;
  const identity = facts === undefined ? undefined : identifyRepository(facts.right);
  return E.map((key: ContextKey): Observation => ({
    snapshot: observed.right.snapshot,
    key,
    ...(identity === undefined ? {} : { identity }),
  }))(
    parseContextKey({
      repo: named.repo ?? identity!.id,
      // A branch is named by whoever made it: sanitized, so no name stops a command.
      branch: named.branch ?? sanitizeKeyPart(observed.right.branch),
      workstreamId: named.workstreamId,
    }),
  );
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
  const decode = (value: unknown) => decodeContextFile(value, session.kind);
  const sides = splitConflictMarkers(text.right);
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
      text: text.right,
      error: {
        ...broken,
        message: `has merge conflict markers, and one side is not a context file: ${broken.message}`,
      },
    });
  }
  const decoded = decodeText(text.right, decode);
  if (E.isRight(decoded)) return E.right({ kind: 'file', file: decoded.right });
  if (decoded.left.code !== 'corrupt') return E.left(located(session, file, decoded.left));
  return E.right({ kind: 'broken', text: text.right, error: decoded.left });
};

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

/** The paths of the ledger's evidence that do not exist in the working tree. */
const missingEvidencePaths = async (root: string, context: SharedContext): Promise<ReadonlyArray<string>> => {
  const { fs, path } = await nodeModules();
  const paths = selectEvidencePaths(context.evidenceLedger);
  const present = await Promise.all(
    paths.map((file) =>
      fs.access(path.join(root, ...file.split('/'))).then(
        () => true,
        () => false,
      ),
    ),
  );
  return paths.filter((_, i) => !present[i]);
};

/** Verifies `context` against the repository: the checkpoint, the diff since it, the evidence files. */
const verify = async (
  session: Session,
  context: SharedContext,
  snapshot: RepositorySnapshot,
): Promise<ContextStatus> => {
  const { root } = session.paths;
  const diff: E.Either<string, ReadonlyArray<ChangedFile>> = snapshot.kind === 'git' &&
  context.checkpoint !== undefined &&
  needsDiff(checkpointMismatch(context, snapshot))
    ? await changedFiles(root, context.checkpoint.gitHead)
    : E.right([]);
  const evidence = {
    snapshot,
    changes: E.getOrElse((): ReadonlyArray<ChangedFile> => [])(diff),
    missingPaths: await missingEvidencePaths(root, context),
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
}

/** The context stored under the key (or a new one), verified against `snapshot`, with its sessions and warnings. */
const loaded = async (session: Session, found: Found, snapshot: RepositorySnapshot): Promise<LoadedContext> => {
  const context = found.stored ?? emptySharedContext(found.key);
  const status = await verify(session, context, snapshot);
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
  };
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
    const [observation, read] = await Promise.all([observe(session), readContextFile(session)]);
    if (E.isLeft(observation)) return observation;
    if (E.isLeft(read)) return read;
    const unusable = reportUnusable(session, read.right);
    if (unusable !== undefined) return E.left(unusable);
    const file = read.right.kind === 'file' ? read.right.file : { kind: session.kind, contexts: [] };
    const { key, file: resolved, notes } = keyIn(observation.right, file);
    const sessions = await readSessionsFile(session);
    const stored = O.toUndefined(selectContext(resolved, key));
    const found: Found = {
      key,
      stored,
      sessions: E.isRight(sessions) ? sessionsOf(sessions.right, key) : {},
      warnings: E.isLeft(sessions) ? [sessions.left] : [],
      notes:
        resolved === file || stored === undefined
          ? notes
          : notes.map((note) => `${note} (re-keyed in the file at the next write)`),
    };
    return E.right(await loaded(session, found, observation.right.snapshot));
  });

type StillLocked = () => E.Either<ContextError, true>;

/**
 * The context file to change, under the lock: a broken file is moved aside and reported (the
 * write stops there); the two sides of a conflict are merged.
 */
const readForWrite = async (
  session: Session,
): Result<{ readonly file: ContextFile; readonly onDisk?: ContextFile; readonly mergedConflict?: ConflictReport }> => {
  const read = await readContextFile(session);
  if (E.isLeft(read)) return read;
  const empty: ContextFile = { kind: session.kind, contexts: [] };
  switch (read.right.kind) {
    case 'absent':
      return E.right({ file: empty });
    case 'file':
      return E.right({ file: read.right.file, onDisk: read.right.file });
    case 'conflict': {
      const { ours, theirs } = read.right;
      return E.right({
        file: mergeContextFiles(ours, theirs),
        mergedConflict: { ours: workstreamsOf(ours), theirs: workstreamsOf(theirs) },
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

/** The sessions file with `add` merged in under `key`, checked before anything is written. */
const sessionsToWrite = async (
  session: Session,
  key: ContextKey,
  add: CliSessions,
): Promise<
  E.Either<ContextError, { readonly text: string; readonly merged: CliSessions; readonly warning?: string }>
> => {
  const read = await readSessionsFile(session);
  const file: ContextSessionsFile = E.isRight(read) ? read.right : { kind: session.kind, sessions: [] };
  const merged = { ...sessionsOf(file, key), ...add };
  const next: ContextSessionsFile = {
    kind: session.kind,
    sessions: [...file.sessions.filter((entry) => !isSameContextKey(entry.key, key)), { key, cliSessions: merged }],
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

/** Refuses a context that holds a secret anywhere in its stored form, naming the field. */
const withoutSecrets = (context: SharedContext): E.Either<ContextError, SharedContext> => {
  const secret = findContextSecret(context);
  return secret === undefined
    ? E.right(context)
    : E.left({
        code: 'secret',
        message: `${secret.path} holds what looks like ${secret.shape}: secrets are never stored in the shared context; remove it and try again`,
      });
};

/**
 * Under the lock: reads the repository and the file, applies the change, and writes the JSON
 * (the truth: its failure fails the call), then the derived files and the sessions (their
 * failures are warnings). Inputs are all checked before the first write.
 */
const changeLocked = async (
  session: Session,
  change: ContextChange,
  sessions: CliSessions | undefined,
  stillLocked: StillLocked,
): Result<{ readonly found: Found; readonly snapshot: RepositorySnapshot }> => {
  const confined = await confine(session.paths.root, session.kind);
  if (E.isLeft(confined)) return confined;
  await removeStaleTemporaries(session.paths.directory, Object.values(contextFileNames(session.kind)), session.now());
  // The repository is read under the lock, so the checkpoint records the state as it is when written.
  const observation = await observe(session);
  if (E.isLeft(observation)) return observation;
  const { snapshot } = observation.right;
  const read = await readForWrite(session);
  if (E.isLeft(read)) return read;
  const { key, file, notes } = keyIn(observation.right, read.right.file);
  const stored = O.toUndefined(selectContext(file, key));
  const current = stored ?? emptySharedContext(key);
  const changed = change(current, session.now(), snapshot);
  if (E.isLeft(changed)) return changed;
  if (!isSameContextKey(changed.right.key, key))
    return E.left({ code: 'invalid', message: 'a change must keep the context under its own key' });
  const next = markSummaryStale(changed.right, { stale: checkpointMismatch(changed.right, snapshot).length > 0 });
  const contextChanged = next !== current;
  const fileChanged =
    read.right.onDisk === undefined
      ? contextChanged || read.right.mergedConflict !== undefined
      : file !== read.right.onDisk || contextChanged;
  const clean = contextChanged ? withoutSecrets(next) : E.right(next);
  if (E.isLeft(clean)) return clean;
  const out = contextChanged ? upsertContext(file, next) : file;
  const text = fileChanged ? contextText(session, out, read.right.onDisk) : E.right('');
  if (E.isLeft(text)) return text;
  const tools =
    sessions !== undefined && Object.keys(sessions).length > 0
      ? await sessionsToWrite(session, key, sessions)
      : undefined;
  if (tools !== undefined && E.isLeft(tools)) return tools;
  const warnings: string[] = [];
  if (fileChanged) {
    const json = await writeFileAtomic(session.paths.json, text.right, stillLocked);
    if (E.isLeft(json)) return json;
    warnings.push(...(await writeDerived(session, out, stillLocked)));
  }
  let cliSessions: CliSessions;
  if (tools === undefined) {
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
  return E.right({
    snapshot: snapshot,
    found: {
      key,
      stored: stored === undefined && !contextChanged ? undefined : next,
      sessions: cliSessions,
      warnings,
      notes,
      ...(read.right.mergedConflict === undefined ? {} : { mergedConflict: read.right.mergedConflict }),
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

/**
 * Applies `change` to the workstream's context under the file lock: read, change, write
 * atomically (context file, then dashboard). A change that returns the same context writes
 * nothing (unless the file itself needs it: a merge conflict, a migrated key); `sessions` are
 * merged into the `*.local.json` file. `None` when the feature flag is off (no file is touched).
 */
export const updateContext = (
  options: ContextOptions,
  change: ContextChange,
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
      (stillLocked) => changeLocked(session, change, sessions, stillLocked),
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
    return E.right(await loaded(session, written.right.found, written.right.snapshot));
  });

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
