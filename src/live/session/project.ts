/**
 * The project a session belongs to, so every process of one session finds the same log: an
 * agent that runs `cd packages/api` between two dispatches still works on the project it
 * started in. The project is the directory the agent names (Claude Code's `CLAUDE_PROJECT_DIR`),
 * else the top level of the git work tree holding the working directory, else the working
 * directory itself.
 */
import { lstatSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { type Failure, failure } from '../../base/failure.js';

/** Where to look for the project. */
export interface ProjectHint {
  /** A project directory the agent names; used when it is an absolute path to a directory. */
  readonly projectDir?: string;
  /** The working directory (absolute); absent when there is none: the process's was deleted. */
  readonly cwd?: string;
}

const isDirectory = (path: string): boolean => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};

/** True when `directory` holds a `.git` entry (a folder, or the file of a linked work tree or submodule). */
const holdsGit = (directory: string): boolean => {
  try {
    lstatSync(join(directory, '.git'));
    return true;
  } catch {
    return false;
  }
};

/**
 * The top level of the git work tree holding `cwd` (the nearest ancestor with a `.git` entry,
 * as `git rev-parse --show-toplevel` finds it), or undefined outside one. Looks at one entry
 * per ancestor and starts no process: a hook runs on every dispatch.
 */
export const findGitTopLevel = (cwd: string): string | undefined => {
  for (let directory = resolve(cwd); ; directory = dirname(directory)) {
    if (holdsGit(directory)) return directory;
    if (dirname(directory) === directory) return undefined;
  }
};

/** Why a path relative to the working directory cannot be used: the directory was deleted. */
export const NO_WORKING_DIRECTORY =
  'the working directory no longer exists (was it deleted?): cd into a folder that exists and run it again';

/**
 * The working directory `cwd`, or why there is none. A shell can stay in a folder another
 * removed: Node's `process.cwd()` then throws, and so does resolving any relative path.
 */
export const workingDirectory = (cwd: string | undefined): E.Either<Failure<'io'>, string> =>
  cwd === undefined ? E.left(failure('io', NO_WORKING_DIRECTORY)) : E.right(cwd);

/** The project directory of a hook event or a server (see the module comment for the order), or why there is none. */
export const resolveProjectDirectory = (hint: ProjectHint): E.Either<Failure<'io'>, string> => {
  const { projectDir, cwd } = hint;
  if (projectDir !== undefined && projectDir !== '' && isAbsolute(projectDir) && isDirectory(projectDir))
    return E.right(resolve(projectDir));
  return E.map((directory: string) => findGitTopLevel(directory) ?? resolve(directory))(workingDirectory(cwd));
};
