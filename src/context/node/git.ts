/**
 * The repository as git sees it, read with `execFile` (no shell, so no path is ever
 * interpreted). Only read-only commands run, with `GIT_OPTIONAL_LOCKS=0` so that none of them
 * refreshes the index behind the user's back. Outside a repository (or without git) the
 * snapshot says so, and everything counts as stale.
 */
import * as E from 'fp-ts/lib/Either.js';
import {
  type ChangedFile,
  hashTrackedFiles,
  parseNameStatus,
  parseWorkingTreeStatus,
  type RepositorySnapshot,
  splitNulSeparated,
  type WorkingFile,
  type WorkingTreeStatus,
} from '../checkpoint.js';
import { CONTEXT_DIRECTORY } from '../layout.js';
import { nodeModules } from './modules.js';

/** The branch part of a key outside a git repository. */
export const NO_BRANCH = '(no branch)';
/** The branch part of a key on a detached HEAD. */
export const DETACHED = '(detached)';

/** What the shell learned about the directory it works in. */
export interface Repository {
  /** The repository's top level, or the working directory outside a repository. */
  readonly root: string;
  readonly branch: string;
  readonly snapshot: RepositorySnapshot;
}

interface GitFailure {
  readonly missing: boolean;
  readonly message: string;
}

const runGit = async (cwd: string, args: ReadonlyArray<string>): Promise<E.Either<GitFailure, string>> => {
  const { childProcess } = await nodeModules();
  return new Promise((resolve) => {
    childProcess.execFile(
      'git',
      [...args],
      {
        cwd,
        encoding: 'utf8',
        maxBuffer: 512 * 1024 * 1024,
        env: { ...process.env, GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C' },
        windowsHide: true,
      },
      (error, stdout, stderr) => {
        if (error === null) resolve(E.right(stdout));
        else
          resolve(
            E.left({
              missing: (error as NodeJS.ErrnoException).code === 'ENOENT',
              message: (stderr.trim().split('\n')[0] ?? '') || error.message,
            }),
          );
      },
    );
  });
};

/** The working-tree blobs of the modified files (`git hash-object`, which applies the same filters as `git add`); deleted ones as null. */
const workingFiles = async (root: string, tree: WorkingTreeStatus): Promise<E.Either<GitFailure, WorkingFile[]>> => {
  const files: WorkingFile[] = tree.deleted.map((path) => ({ path, blob: null }));
  const present = [...new Set(tree.modified)];
  for (let i = 0; i < present.length; i += 200) {
    const chunk = present.slice(i, i + 200);
    const hashes = await runGit(root, ['hash-object', '--', ...chunk]);
    if (E.isLeft(hashes)) return hashes;
    const lines = hashes.right.split('\n');
    chunk.forEach((path, j) => files.push({ path, blob: lines[j] ?? '' }));
  }
  return E.right(files);
};

/**
 * The top level of the repository that holds `cwd`, or why there is none. A directory with a
 * `.git` entry is its own top level, which saves a git process in the common case; otherwise
 * `git rev-parse --show-toplevel` finds it.
 */
const findRoot = async (cwd: string): Promise<E.Either<string, string>> => {
  const { fs, path } = await nodeModules();
  const exists = (file: string): Promise<boolean> =>
    fs.stat(file).then(
      () => true,
      () => false,
    );
  if (await exists(path.join(cwd, '.git'))) return E.right(cwd);
  if (!(await exists(cwd))) return E.left(`${cwd} does not exist`);
  const top = await runGit(cwd, ['rev-parse', '--show-toplevel']);
  if (E.isRight(top)) return E.right(top.right.trim());
  return E.left(top.left.missing ? 'git is not installed' : `${cwd} is not in a git repository`);
};

/**
 * Reads the repository that holds `cwd`: its root, its branch, HEAD and the tracked-files
 * hash. The index listing and the working-tree status run at once (process start-up is most
 * of their cost); one more process hashes the modified files, when there are any.
 */
export const observeRepository = async (cwd: string): Promise<Repository> => {
  const root = await findRoot(cwd);
  if (E.isLeft(root)) return { root: cwd, branch: NO_BRANCH, snapshot: { kind: 'none', reason: root.left } };
  const [lsFiles, status] = await Promise.all([
    runGit(root.right, ['ls-files', '-s', '-z']),
    runGit(root.right, ['status', '--porcelain=v2', '--branch', '-z', '--untracked-files=no', '--ignore-submodules']),
  ]);
  const tree = E.map(parseWorkingTreeStatus)(status);
  const working = E.isRight(tree) ? await workingFiles(root.right, tree.right) : tree;
  if (E.isLeft(lsFiles) || E.isLeft(tree) || E.isLeft(working))
    return {
      root: root.right,
      branch: NO_BRANCH,
      snapshot: { kind: 'none', reason: `git cannot list the files of ${root.right}` },
    };
  return {
    root: root.right,
    branch: tree.right.branch ?? DETACHED,
    snapshot: {
      kind: 'git',
      head: tree.right.head,
      trackedFilesHash: hashTrackedFiles(lsFiles.right, working.right, CONTEXT_DIRECTORY),
    },
  };
};

/**
 * The files changed between the commit `since` and the working tree (`git diff --name-status`),
 * or why they cannot be listed. Since no commit (a checkpoint taken before the first one),
 * every tracked file is new.
 */
export const changedFiles = async (
  root: string,
  since: string,
): Promise<E.Either<string, ReadonlyArray<ChangedFile>>> => {
  if (since === '') {
    const files = await runGit(root, ['ls-files', '-z']);
    return E.isLeft(files)
      ? E.left(files.left.message)
      : E.right(splitNulSeparated(files.right).map((path) => ({ status: 'A', path })));
  }
  if (!/^[0-9a-f]{7,64}$/u.test(since))
    return E.left(`the checkpoint's commit ${JSON.stringify(since)} is not a commit id`);
  const diff = await runGit(root, ['diff', '--name-status', '-z', since, '--']);
  return E.isRight(diff)
    ? E.right(parseNameStatus(diff.right))
    : E.left(
        `the checkpoint's commit ${since.slice(0, 7)} is not in this repository (rebased away or not fetched), so the changed files are unknown`,
      );
};
