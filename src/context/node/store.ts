/**
 * The context shell: the only part of the shared context that touches files, git, the clock
 * and the environment. It resolves the feature flag (off: nothing below runs and no file is
 * touched), reads the repository, decodes the context file with validation, verifies the
 * checkpoint, and writes under a cross-process lock with atomic renames. Every expected
 * failure comes back as a `ContextError` value.
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
import { isSameContextKey, parseContextKey } from '../key.js';
import { CONTEXT_DIRECTORY, CONTEXT_GITIGNORE, contextFileNames } from '../layout.js';
import { selectEvidencePaths } from '../ledger.js';
import {
  type CliSessions,
  CONTEXT_KINDS,
  type ContextError,
  type ContextFile,
  type ContextKey,
  type ContextKind,
  DEFAULT_WORKSTREAM,
  type ContextSessionsFile,
  type SharedContext,
} from '../model.js';
import {
  decodeContextFile,
  decodeSessionsFile,
  encodeContextFile,
  encodeSessionsFile,
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
  ioError,
  makeDirectory,
  moveAside,
  readTextIfExists,
  withFileLock,
  writeFileAtomic,
  writeFileIfMissing,
} from './files.js';
import { changedFiles, observeRepository, type Repository } from './git.js';
import { nodeModules } from './modules.js';

/** Which context to work on, and how. */
export interface ContextOptions {
  /** Planning (the default) or implementation: separate files, separate bundles. */
  readonly kind?: ContextKind;
  /** A directory inside the repository (default: the process's working directory). */
  readonly cwd?: string;
  /** The workstream (default `default`). */
  readonly workstreamId?: string;
  /** The key's repo part (default: the name of the repository's top-level directory). */
  readonly repo?: string;
  /** The key's branch part (default: the current branch). */
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
  /** Problems that did not stop the load (a broken sessions file was moved aside). */
  readonly warnings: ReadonlyArray<string>;
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
  readonly repository: Repository;
  readonly key: ContextKey;
  readonly paths: ContextPaths;
  readonly now: () => number;
  readonly display: (file: string) => string;
}

type Result<T> = Promise<E.Either<ContextError, T>>;

const configError = (message: string): ContextError => ({ code: 'config', message });

/** The `sharedContext.enabled` of the config file at `file`; undefined when there is none. */
const readConfig = async (file: string): Result<boolean | undefined> => {
  const text = await readTextIfExists(file);
  if (E.isLeft(text)) return text;
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
const resolveFlag = async (
  options: ContextOptions,
  early: SharedContextFlag,
  root: string,
): Result<SharedContextFlag> => {
  if (early.source !== 'default') return E.right(early);
  const { path } = await nodeModules();
  const config = await readConfig(path.join(root, CONTEXT_CONFIG_FILE));
  return E.chain((value: boolean | undefined) =>
    E.mapLeft(configError)(resolveSharedContextFlag(undefined, undefined, value)),
  )(config);
};

/** The key and the paths of the context that `options` names in `repository`. */
const sessionFor = async (
  options: ContextOptions,
  repository: Repository,
  flag: SharedContextFlag,
): Result<Session> => {
  const { path } = await nodeModules();
  const kind = options.kind ?? 'planning';
  if (!(CONTEXT_KINDS as ReadonlyArray<string>).includes(kind))
    return E.left({
      code: 'invalid',
      message: `the kind of a context is ${CONTEXT_KINDS.join(' or ')}, not ${JSON.stringify(kind)}`,
    });
  const key = parseContextKey({
    repo: options.repo ?? path.basename(repository.root),
    branch: options.branch ?? repository.branch,
    workstreamId: options.workstreamId ?? DEFAULT_WORKSTREAM,
  });
  const directory = path.join(repository.root, ...CONTEXT_DIRECTORY.split('/'));
  const names = contextFileNames(kind);
  return E.map((parsed: ContextKey): Session => ({
    kind,
    flag,
    repository,
    key: parsed,
    paths: {
      root: repository.root,
      directory,
      json: path.join(directory, names.json),
      sessions: path.join(directory, names.sessions),
      dashboard: path.join(directory, names.dashboard),
      gitignore: path.join(directory, '.gitignore'),
    },
    now: options.now ?? Date.now,
    display: (file) => path.relative(repository.root, file).split(path.sep).join('/'),
  }))(key);
};

/**
 * Resolves the flag and, when it is on, the repository, the key and the paths. An option or
 * an environment variable that turns the feature off decides before anything is read; only
 * when neither says is the config file at the repository root consulted.
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
  const { path } = modules.right;
  const repository = await observeRepository(path.resolve(options.cwd ?? process.cwd()));
  const flag = await resolveFlag(options, early.right, repository.root);
  if (E.isLeft(flag)) return flag;
  if (!flag.right.enabled) return E.right(O.none);
  return E.map((session: Session) => O.some(session))(await sessionFor(options, repository, flag.right));
};

/** Decodes file text, or says why not; `decode` is the kind's decoder. */
const decodeText = <T>(
  text: string,
  decode: (value: unknown) => E.Either<ContextError, T>,
): E.Either<ContextError, T> => pipe(parseJsonText(text), E.chain(decode));

/**
 * Reads a context or sessions file: none yet gives `empty`; a corrupt or truncated one is
 * moved aside to a timestamped backup (under the lock, so no writer is between read and move)
 * and reported; a newer one is refused and left alone.
 */
const readDecoded = async <T>(
  session: Session,
  file: string,
  decode: (value: unknown) => E.Either<ContextError, T>,
  empty: T,
  locked: boolean,
): Result<T> => {
  const text = await readTextIfExists(file);
  if (E.isLeft(text)) return text;
  if (text.right === undefined) return E.right(empty);
  const decoded = decodeText(text.right, decode);
  if (E.isRight(decoded) || decoded.left.code !== 'corrupt')
    return E.mapLeft((error: ContextError) => located(session, file, error))(decoded);
  const broken = decoded.left;
  const moveIfStillBroken = async (): Result<T> => {
    const again = await readTextIfExists(file);
    if (E.isLeft(again)) return again;
    if (again.right === undefined)
      return E.left(
        located(session, file, { code: 'corrupt', message: `${broken.message}; another process moved it aside` }),
      );
    // Another process rewrote the file between the read and the lock: decode what is there now.
    if (again.right !== text.right) return readDecoded(session, file, decode, empty, true);
    const backup = await moveAside(file, session.now());
    if (E.isLeft(backup))
      return E.left(located(session, file, { code: 'corrupt', message: `${broken.message}; ${backup.left.message}` }));
    return E.left(
      located(session, file, {
        code: 'corrupt',
        message: `${broken.message}; moved aside to ${session.display(backup.right)}`,
        backup: backup.right,
      }),
    );
  };
  // The lock of the context file guards its sessions file too: writers hold it for both.
  return locked ? moveIfStillBroken() : withFileLock(session.paths.json, moveIfStillBroken);
};

const located = (session: Session, file: string, error: ContextError): ContextError => ({
  ...error,
  message: `${session.display(file)}: ${error.message}`,
});

const readContextFile = (session: Session, locked: boolean): Result<ContextFile> =>
  readDecoded(
    session,
    session.paths.json,
    (value) => decodeContextFile(value, session.kind),
    { kind: session.kind, contexts: [] },
    locked,
  );

const readSessionsFile = (session: Session, locked: boolean): Result<ContextSessionsFile> =>
  readDecoded(
    session,
    session.paths.sessions,
    (value) => decodeSessionsFile(value, session.kind),
    { kind: session.kind, sessions: [] },
    locked,
  );

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
const verify = async (session: Session, context: SharedContext): Promise<ContextStatus> => {
  const { snapshot, root } = session.repository;
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

/** The context stored under the session's key (or a new one), verified, with its sessions and warnings. */
const loaded = async (
  session: Session,
  stored: SharedContext | undefined,
  sessions: CliSessions,
  warnings: ReadonlyArray<string>,
): Promise<LoadedContext> => {
  const context = stored ?? emptySharedContext(session.key);
  const status = await verify(session, context);
  return {
    kind: session.kind,
    key: session.key,
    flag: session.flag,
    stored: stored !== undefined,
    context: markSummaryStale(context, status),
    status,
    sessions,
    paths: session.paths,
    warnings,
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
 * the changed files. `None` when the feature flag is off (no file is touched).
 */
export const loadContext = (options: ContextOptions): Result<O.Option<LoadedContext>> =>
  whenEnabled(options, async (session) => {
    const file = await readContextFile(session, false);
    if (E.isLeft(file)) return file;
    const sessions = await readSessionsFile(session, false);
    const warnings = E.isLeft(sessions) ? [`tool sessions ignored: ${sessions.left.message}`] : [];
    const stored = O.toUndefined(selectContext(file.right, session.key));
    return E.right(
      await loaded(session, stored, E.isRight(sessions) ? sessionsOf(sessions.right, session.key) : {}, warnings),
    );
  });

const writeSessions = async (
  session: Session,
  add: CliSessions,
  stillLocked: () => E.Either<ContextError, true>,
): Result<CliSessions> => {
  const file = await readSessionsFile(session, true);
  if (E.isLeft(file)) return file;
  const merged = { ...sessionsOf(file.right, session.key), ...add };
  const next: ContextSessionsFile = {
    kind: session.kind,
    sessions: [
      ...file.right.sessions.filter((entry) => !isSameContextKey(entry.key, session.key)),
      { key: session.key, cliSessions: merged },
    ],
  };
  const written = await writeFileAtomic(
    session.paths.sessions,
    formatJsonDocument(encodeSessionsFile(next)),
    stillLocked,
  );
  return E.map(() => merged)(written);
};

/** Writes the context file and, from it, the dashboard. */
const writeContextFile = async (
  session: Session,
  file: ContextFile,
  stillLocked: () => E.Either<ContextError, true>,
): Result<void> => {
  const json = await writeFileAtomic(session.paths.json, formatJsonDocument(encodeContextFile(file)), stillLocked);
  if (E.isLeft(json)) return json;
  return writeFileAtomic(
    session.paths.dashboard,
    renderContextDashboard(file, contextFileNames(session.kind).json),
    stillLocked,
  );
};

interface Changed {
  /** The context after the change; undefined when none is stored under the key (a no-op on a new one). */
  readonly next: SharedContext | undefined;
  readonly tools: CliSessions;
  readonly warnings: ReadonlyArray<string>;
}

/** Under the lock: reads the file, applies the change, writes what changed (context, dashboard, sessions). */
const changeLocked = async (
  session: Session,
  change: ContextChange,
  sessions: CliSessions | undefined,
  stillLocked: () => E.Either<ContextError, true>,
): Result<Changed> => {
  const file = await readContextFile(session, true);
  if (E.isLeft(file)) return file;
  const stored = O.toUndefined(selectContext(file.right, session.key));
  const current = stored ?? emptySharedContext(session.key);
  const { snapshot } = session.repository;
  const changed = change(current, session.now(), snapshot);
  if (E.isLeft(changed)) return changed;
  if (!isSameContextKey(changed.right.key, session.key))
    return E.left({ code: 'invalid', message: 'a change must keep the context under its own key' });
  const next = markSummaryStale(changed.right, { stale: checkpointMismatch(changed.right, snapshot).length > 0 });
  if (next !== current) {
    const ignore = await writeFileIfMissing(session.paths.gitignore, CONTEXT_GITIGNORE);
    if (E.isLeft(ignore)) return ignore;
    const saved = await writeContextFile(session, upsertContext(file.right, next), stillLocked);
    if (E.isLeft(saved)) return saved;
  }
  const kept = stored === undefined && next === current ? undefined : next;
  if (sessions !== undefined && Object.keys(sessions).length > 0)
    return E.map((tools: CliSessions) => ({ next: kept, tools, warnings: [] }))(
      await writeSessions(session, sessions, stillLocked),
    );
  const tools = await readSessionsFile(session, true);
  return E.right({
    next: kept,
    tools: E.isRight(tools) ? sessionsOf(tools.right, session.key) : {},
    warnings: E.isLeft(tools) ? [`tool sessions ignored: ${tools.left.message}`] : [],
  });
};

/**
 * Applies `change` to the workstream's context under the file lock: read, change, write
 * atomically (context file, then dashboard). A change that returns the same context writes
 * nothing; `sessions` are merged into the `*.local.json` file. `None` when the feature flag
 * is off (no file is touched).
 */
export const updateContext = (
  options: ContextOptions,
  change: ContextChange,
  sessions?: CliSessions,
): Result<O.Option<LoadedContext>> =>
  whenEnabled(options, async (session) => {
    // A file that cannot be written over (newer, corrupt) is refused before anything is created.
    const readable = await readContextFile(session, false);
    if (E.isLeft(readable)) return readable;
    const directory = await makeDirectory(session.paths.directory);
    if (E.isLeft(directory)) return directory;
    const written = await withFileLock(session.paths.json, (stillLocked) =>
      changeLocked(session, change, sessions, stillLocked),
    );
    if (E.isLeft(written)) return written;
    return E.right(await loaded(session, written.right.next, written.right.tools, written.right.warnings));
  });

/**
 * Records how a run ended. After a verified checkpoint (`status: 'succeeded'`) the summary and
 * the rest of the working context are updated and a new checkpoint recorded; after a failure
 * only `failedStep`, `error` and `nextAction` are, and the last good summary stays. `None` when
 * the feature flag is off (no file is touched).
 */
export const writeContext = (options: ContextOptions, outcome: RunOutcome): Result<O.Option<LoadedContext>> =>
  updateContext(options, (context, at, snapshot) => applyRunOutcome(context, outcome, at, snapshot), outcome.sessions);
