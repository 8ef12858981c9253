/**
 * Where a call of the context shell works: the feature flag (an option or the environment
 * decides before anything is read; the config file only when neither says), the repository,
 * the kind and the key parts the caller named, and the paths of the files, each checked to stay
 * inside the repository. `whenEnabled` is the shell's outermost boundary: a call with the flag
 * off touches nothing, and an exception nobody expected comes back as a `Left` of code
 * `internal`, never as a throw or an empty answer.
 */
import * as path from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { pipe } from 'fp-ts/lib/function.js';
import { describeError, kindOf } from '../../base/describe.js';
import { quoteValue } from '../../base/schema.js';
import { internalFailure } from '../../base/failure.js';
import { ioFailure } from '../../node/fileFailure.js';
import {
  configFlag,
  CONTEXT_CONFIG_FILE,
  resolveSharedContextFlag,
  SHARED_CONTEXT_ENV,
  type SharedContextFlag,
} from '../flag.js';
import { normalizeKeyPart, parseContextKey } from '../key.js';
import { CONTEXT_DIRECTORY, contextFileNames } from '../layout.js';
import { CONTEXT_KINDS, type ContextError, type ContextKind, DEFAULT_WORKSTREAM } from '../model.js';
import { parseJsonText } from '../jsonText.js';
import { confineToRoot, readTextIfExists, resolvedRelative } from './files.js';
import { type GitAnswers, locateRepository, type RepositoryLocation } from './git.js';

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

/** One call's context: its kind and flag, the repository, the key parts named, the paths, the clock. */
export interface Scope {
  readonly kind: ContextKind;
  readonly flag: SharedContextFlag;
  readonly location: RepositoryLocation;
  /** The key parts the caller named; the others come from the repository when it is read. */
  readonly named: { readonly repo?: string; readonly branch?: string; readonly workstreamId: string };
  readonly paths: ContextPaths;
  /**
   * The context directory as git names it: `data/context`, or the folder inside the repository
   * a link there leads to. What git is asked about (it refuses a path beyond a link); the
   * tracked-files hash and the diff leave out the real `data/context` whole, and of a folder a
   * link leads to only the context's own files (see `contextExclusion`).
   */
  readonly trackedDirectory: string;
  /** What git said of the repository itself in this call, so that no step asks it again. */
  readonly gitAnswers: GitAnswers;
  readonly now: () => number;
  readonly display: (file: string) => string;
}

/** What every call of the shell resolves to: a value, or the failure that stopped it. */
export type Result<T> = Promise<E.Either<ContextError, T>>;

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
    parseJsonText(content),
    E.mapLeft(() => configError(`${CONTEXT_CONFIG_FILE} is not valid JSON`)),
    E.chain(configFlag),
  );
};

/** The flag from the option and the environment, then, only when neither says, from the config file at `root`. */
const resolveFlag = async (early: SharedContextFlag, root: string): Result<SharedContextFlag> => {
  if (early.source !== 'default') return E.right(early);
  // The same confinement as data/context/: a link out of the repository (to /dev/stdin, to a file elsewhere) is not followed.
  const confined = await confineToRoot(root, [CONTEXT_CONFIG_FILE]);
  if (E.isLeft(confined)) return E.left(configError(confined.left.message));
  const config = await readConfig(path.join(root, CONTEXT_CONFIG_FILE));
  return E.chain((value: boolean | undefined) => resolveSharedContextFlag(undefined, undefined, value))(config);
};

/** The file names of the context directory, in the order the shell checks them. */
const CHECKED_NAMES = (kind: ContextKind): ReadonlyArray<string> => {
  const names = contextFileNames(kind);
  return [names.json, `${names.json}.lock`, names.dashboard, names.sessions, '.gitignore'];
};

/** Refuses when any path of `kind` would lead out of the repository at `root` through a symbolic link, or the folder is the root itself. */
export const confine = async (root: string, kind: ContextKind): Result<void> => {
  const directory = CONTEXT_DIRECTORY.split('/');
  const inDirectory = await confineToRoot(root, directory);
  if (E.isLeft(inDirectory)) return inDirectory;
  // The root's own .gitignore and files would pass for the context's: its folder must be one of its own.
  if ((await resolvedRelative(root, directory)) === '')
    return E.left({
      code: 'unsafe_path',
      message: `${CONTEXT_DIRECTORY} is a symbolic link to the repository root: the context needs a folder of its own (point the link at one inside the repository, such as ../ctx, or put a real folder in its place)`,
    });
  for (const name of CHECKED_NAMES(kind)) {
    const file = await confineToRoot(root, [...directory, name]);
    if (E.isLeft(file)) return file;
  }
  return E.right(undefined);
};

/** The paths of `kind` in the repository at `root`. */
const pathsFor = (root: string, kind: ContextKind): ContextPaths => {
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
 * The key parts the caller named: one that is none (undefined, null from an unset variable) is
 * not named (the repository's own, the current branch, the default workstream); one of another
 * kind is refused by name, never keyed under a made-up part.
 */
const keyPartsOf = (
  options: ContextOptions,
): E.Either<ContextError, { readonly repo?: string; readonly branch?: string; readonly workstreamId?: string }> => {
  const parts: Record<string, string> = {};
  for (const name of ['repo', 'branch', 'workstreamId'] as const) {
    const value: unknown = options[name];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string')
      return E.left({ code: 'invalid', message: `the ${name} is ${kindOf(value)}, not text` });
    parts[name] = value;
  }
  return E.right(parts);
};

/**
 * The caller's clock, as the shell reads it: one that throws answers no time (NaN), which every
 * write refuses as a time that is not one, rather than failing as a bug of the shell's.
 */
const clockOf =
  (now: () => number): (() => number) =>
  () => {
    try {
      return now();
    } catch {
      return Number.NaN;
    }
  };

/** The paths of the context that `options` names in the repository at `location`, once each is known to stay inside it. */
const scopeFor = async (
  options: ContextOptions,
  location: RepositoryLocation,
  flag: SharedContextFlag,
): Result<Scope> => {
  const kind = options.kind ?? 'planning';
  if (!(CONTEXT_KINDS as ReadonlyArray<string>).includes(kind))
    return E.left({
      code: 'invalid',
      message: `the kind of a context is ${CONTEXT_KINDS.join(' or ')}, not ${quoteValue(kind)}`,
    });
  const given = keyPartsOf(options);
  if (E.isLeft(given)) return given;
  const { repo, branch, workstreamId } = given.right;
  const { now } = options;
  if (now !== undefined && now !== null && typeof now !== 'function')
    return E.left({
      code: 'invalid',
      message: `now is ${kindOf(now)}, not a function (a clock in epoch milliseconds)`,
    });
  const { root } = location;
  const confined = await confine(root, kind);
  if (E.isLeft(confined)) return confined;
  // An explicit key part must be valid as it is; the repository's own names are sanitized when read.
  // Parts typed by someone are normalized first: names that only look alike are one.
  const explicit = parseContextKey({
    repo: normalizeKeyPart(repo ?? 'unset'),
    branch: normalizeKeyPart(branch ?? 'unset'),
    workstreamId: normalizeKeyPart(workstreamId ?? DEFAULT_WORKSTREAM),
  });
  if (E.isLeft(explicit)) return explicit;
  return E.right({
    kind,
    flag,
    location,
    named: {
      ...(repo === undefined ? {} : { repo: explicit.right.repo }),
      ...(branch === undefined ? {} : { branch: explicit.right.branch }),
      workstreamId: explicit.right.workstreamId,
    },
    paths: pathsFor(root, kind),
    trackedDirectory: await resolvedRelative(root, CONTEXT_DIRECTORY.split('/')),
    gitAnswers: new Map(),
    now: typeof now === 'function' ? clockOf(now) : Date.now,
    display: (file) => path.relative(root, file).split(path.sep).join('/'),
  });
};

/** The directory `options` name, or why there is none (a deleted working directory). */
const workingDirectory = (options: ContextOptions): E.Either<ContextError, string> => {
  const { cwd } = options as { readonly cwd?: unknown };
  if (cwd !== undefined && typeof cwd !== 'string')
    return E.left({ code: 'invalid', message: `the cwd is ${kindOf(cwd)}, not the path of a folder` });
  try {
    return E.right(path.resolve(options.cwd ?? process.cwd()));
  } catch (error) {
    // process.cwd() throws when the folder the process runs in was removed.
    return E.left(ioFailure('the current directory no longer exists (was it deleted?)', error));
  }
};

/** Where a call with the flag on works: the repository found, and what turned the flag on. */
interface Decided {
  readonly location: RepositoryLocation;
  readonly flag: SharedContextFlag;
}

/**
 * Resolves the flag, and the repository where it is on. An option or an environment variable
 * decides before anything is read; only when neither says is the config file at the repository
 * root consulted, and git runs no more than the one command that finds the root (none when
 * the directory holds `.git`).
 */
const decide = async (options: ContextOptions): Result<O.Option<Decided>> => {
  const early = resolveSharedContextFlag(options.enabled, (options.env ?? process.env)[SHARED_CONTEXT_ENV], undefined);
  if (E.isLeft(early)) return early;
  if (early.right.source !== 'default' && !early.right.enabled) return E.right(O.none);
  const cwd = workingDirectory(options);
  if (E.isLeft(cwd)) return cwd;
  const location = await locateRepository(cwd.right);
  if (E.isLeft(location)) return location;
  const flag = await resolveFlag(early.right, location.right.root);
  if (E.isLeft(flag)) return flag;
  return E.right(flag.right.enabled ? O.some({ location: location.right, flag: flag.right }) : O.none);
};

/** The flag and, when it is on, the repository, the key and the paths: only then does git run more. */
const begin = async (options: ContextOptions): Result<O.Option<Scope>> => {
  const decided = await decide(options);
  if (E.isLeft(decided) || O.isNone(decided.right)) return decided as E.Either<ContextError, O.None>;
  const { location, flag } = decided.right.value;
  return E.map((scope: Scope) => O.some(scope))(await scopeFor(options, location, flag));
};

/** The options the shell reads, in the order it reads them. */
const OPTION_NAMES = [
  'enabled',
  'env',
  'cwd',
  'kind',
  'repo',
  'branch',
  'workstreamId',
  'now',
] as const satisfies ReadonlyArray<keyof ContextOptions>;

/**
 * The caller's options, each read once into the plain copy the call then reads (of `env`, the
 * one variable the shell reads): a getter or Proxy trap that throws is the caller's input at
 * fault, refused as `invalid` naming the option, not an `internal` that names none.
 */
const readOptions = (given: object): E.Either<ContextError, ContextOptions> => {
  const read: Record<string, unknown> = {};
  for (const name of OPTION_NAMES)
    try {
      const value: unknown = (given as Record<string, unknown>)[name];
      read[name] =
        name === 'env' && typeof value === 'object' && value !== null
          ? { [SHARED_CONTEXT_ENV]: (value as Record<string, unknown>)[SHARED_CONTEXT_ENV] }
          : value;
    } catch (error) {
      return E.left({ code: 'invalid', message: `reading option ${name} threw: ${describeError(error)}` });
    }
  return E.right(read as ContextOptions);
};

/**
 * Runs `start` on `options`, read once (`readOptions`), at the shell's outermost boundary:
 * options that are none (null from an unset variable) are refused as input, never read as
 * "off", and an exception nobody expected (a bug) becomes a `Left` of code `internal`, never a
 * throw.
 */
const guarded = async <T>(given: ContextOptions, start: (options: ContextOptions) => Result<T>): Result<T> => {
  if (typeof given !== 'object' || given === null)
    return E.left({
      code: 'invalid',
      message: `the options are ${kindOf(given)}, not an object ({ kind, cwd, workstreamId, ... })`,
    });
  try {
    const options = readOptions(given);
    return E.isLeft(options) ? options : await start(options.right);
  } catch (error) {
    return E.left(internalFailure(error));
  }
};

/**
 * Whether the feature flag is on for `options`, decided as every call of the shell decides it,
 * so that a caller can tell before it reads an input of its own (a summary file) that the call
 * would not touch it: off means off, decided first.
 */
export const isContextEnabled = (options: ContextOptions): Result<boolean> =>
  guarded(options, async (read) => E.map((decided: O.Option<Decided>) => O.isSome(decided))(await decide(read)));

/**
 * Runs `work` on the scope `options` name; `None` without running it when the feature flag is
 * off. The shell's outermost boundary: a caller never gets a throw, nor an answer that looks
 * like "nothing stored" for a failure.
 */
export const whenEnabled = <T>(options: ContextOptions, work: (scope: Scope) => Result<T>): Result<O.Option<T>> =>
  guarded(options, async (read) => {
    const begun = await begin(read);
    if (E.isLeft(begun)) return begun;
    return O.isNone(begun.right) ? E.right(O.none) : E.map((value: T) => O.some(value))(await work(begun.right.value));
  });

/** The command line that runs `subcommand` on this scope's kind (`--kind implementation` included when it is). */
export const contextCommand = (scope: Scope, subcommand: string): string =>
  `fact-tracker context ${subcommand}${scope.kind === 'planning' ? '' : ` --kind ${scope.kind}`}`;

/** `error` with its message prefixed by the file it is about, as the repository names it. */
export const located = (scope: Scope, file: string, error: ContextError): ContextError => ({
  ...error,
  message: `${scope.display(file)}: ${error.message}`,
});

/** How to bring the context file back under its size cap. */
export const prune = (scope: Scope): string =>
  `prune it: remove the workstreams you no longer need from "contexts" in ${scope.display(scope.paths.json)} (or old claims from their evidence_ledger), then try again`;
