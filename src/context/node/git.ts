/**
 * The repository as git sees it, read with `execFile` (no shell, so no path is ever
 * interpreted). Only read-only commands run, with `GIT_OPTIONAL_LOCKS=0` so that none of them
 * refreshes the index behind the user's back. Outside a repository (or without git) the
 * location says so, and everything counts as stale; a git that fails inside a repository is
 * an error of its own, with git's own words, never mistaken for "not a repository".
 */
import * as E from 'fp-ts/lib/Either.js';
import { sha256HexPrefix } from '../../base/hash.js';
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
import type { ContextError } from '../model.js';
import { normalizeRemoteUrl, type RepositoryFacts } from '../repository.js';
import { nodeModules } from './modules.js';

/** The branch part of a key outside a git repository. */
export const NO_BRANCH = '(no branch)';
/** The branch part of a key on a detached HEAD. */
export const DETACHED = '(detached)';

/** Where the shell works: the top level of a repository's working tree, or a folder outside any repository. */
export type RepositoryLocation =
  | { readonly kind: 'git'; readonly root: string }
  | { readonly kind: 'none'; readonly root: string; readonly reason: string };

interface GitFailure {
  readonly missing: boolean;
  readonly code: number | undefined;
  readonly message: string;
}

type GitResult = E.Either<GitFailure, string>;

const runGit = async (cwd: string, args: ReadonlyArray<string>): Promise<GitResult> => {
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
              code: typeof error.code === 'number' ? error.code : undefined,
              message: (stderr.trim().split('\n')[0] ?? '').trim() || error.message.split('\n')[0]!,
            }),
          );
      },
    );
  });
};

/** A git failure inside a repository, in git's own words. */
const gitFailed = (failure: GitFailure): ContextError => ({
  code: 'git_failed',
  message: `git failed: ${failure.message}`,
});

/**
 * Where `cwd` is: the top level of its repository's working tree (a directory with a `.git`
 * entry is its own top level, which saves a git process in the common case), or a folder
 * outside any repository. A bare repository and a `.git` directory have no working tree to
 * keep context in: refused, as is a git that fails for another reason (git's first line).
 */
export const locateRepository = async (cwd: string): Promise<E.Either<ContextError, RepositoryLocation>> => {
  const { fs, path } = await nodeModules();
  const stat = await fs.stat(cwd).catch(() => undefined);
  if (stat === undefined || !stat.isDirectory())
    return E.left({ code: 'io', message: `the working directory ${cwd} does not exist (was it deleted?)` });
  if (path.basename(cwd) !== '.git' && (await fs.lstat(path.join(cwd, '.git')).catch(() => undefined)) !== undefined)
    return E.right({ kind: 'git', root: cwd });
  const top = await runGit(cwd, ['rev-parse', '--show-toplevel']);
  if (E.isRight(top)) return E.right({ kind: 'git', root: top.right.trim() });
  if (top.left.missing) return E.right({ kind: 'none', root: cwd, reason: 'git is not installed' });
  if (/not a git repository/iu.test(top.left.message))
    return E.right({ kind: 'none', root: cwd, reason: `${cwd} is not in a git repository` });
  const where = await runGit(cwd, ['rev-parse', '--is-bare-repository', '--is-inside-git-dir']);
  const [bare, insideGitDir] = E.isRight(where) ? where.right.trim().split('\n') : [];
  if (bare === 'true')
    return E.left({
      code: 'invalid',
      message: `${cwd} is a bare repository: it has no working tree to keep data/context in; run fact-tracker in a checkout`,
    });
  if (insideGitDir === 'true')
    return E.left({
      code: 'invalid',
      message: `${cwd} is inside a repository's .git directory: run fact-tracker in the working tree, not in .git`,
    });
  return E.left(gitFailed(top.left));
};

/**
 * What the repository says about itself (its origin, else its first commits): what keys its
 * contexts. Finding the first commits walks the whole history; `knownRoot`, the first commit a
 * context file records, is taken as it is instead (a file that records an identity is read
 * under it whatever a checkout computes: see `resolveRepositoryKey`), so the walk runs once,
 * before the first write. A failing git is an error, never a switch to another key.
 */
export const readRepositoryFacts = async (
  location: RepositoryLocation,
  knownRoot?: string,
): Promise<E.Either<ContextError, RepositoryFacts>> => {
  const { path } = await nodeModules();
  const folder = path.basename(location.root);
  if (location.kind === 'none') return E.right({ rootCommits: [], folder });
  const origin = await runGit(location.root, ['config', '--get', 'remote.origin.url']);
  // Exit 1 is the documented answer for an unset key.
  if (E.isLeft(origin) && origin.left.code !== 1) return E.left(gitFailed(origin.left));
  const url = E.isRight(origin) ? origin.right.trim() : '';
  // A local path as origin names a folder on this machine, not the repository: the first commit does.
  if (normalizeRemoteUrl(url) !== undefined) return E.right({ origin: url, rootCommits: [], folder });
  const roots = await rootCommits(location.root, knownRoot);
  return E.map((ids: ReadonlyArray<string>): RepositoryFacts => ({ rootCommits: ids, folder }))(roots);
};

/** The commits without parents reachable from HEAD; `knownRoot` when a file records it. */
const rootCommits = async (
  root: string,
  knownRoot?: string,
): Promise<E.Either<ContextError, ReadonlyArray<string>>> => {
  if (knownRoot !== undefined) return E.right([knownRoot]);
  const roots = await runGit(root, ['rev-list', '--max-parents=0', 'HEAD', '--']);
  if (E.isRight(roots)) return E.right(roots.right.split('\n').filter((line) => line !== ''));
  // Before the first commit HEAD names no commit: no roots yet.
  return /unknown revision|ambiguous argument|bad revision/iu.test(roots.left.message)
    ? E.right([])
    : E.left(gitFailed(roots.left));
};

/**
 * The state of the working-tree files git lists as changed: a regular file's blob from `git
 * hash-object` (which applies the same filters as `git add`); a symbolic link's from its
 * target text (hash-object would follow it, and fail on a dangling one); a file gone from the
 * working tree (deleted, also in a merge conflict) as deleted; a submodule's from its own
 * checked-out commit and, when its tracked files changed, their state too.
 */
const workingFiles = async (
  root: string,
  tree: WorkingTreeStatus,
  depth: number,
): Promise<E.Either<ContextError, WorkingFile[]>> => {
  const { fs, path } = await nodeModules();
  const files: WorkingFile[] = tree.deleted.map((file) => ({ path: file, blob: null }));
  const regular: string[] = [];
  for (const file of [...new Set(tree.modified)]) {
    const full = path.join(root, ...file.split('/'));
    const stat = await fs.lstat(full).catch(() => undefined);
    if (stat === undefined) files.push({ path: file, blob: null });
    else if (stat.isSymbolicLink())
      files.push({ path: file, blob: `link:${sha256HexPrefix(await fs.readlink(full).catch(() => ''), 20)}` });
    else if (stat.isDirectory()) files.push({ path: file, blob: 'directory' });
    else regular.push(file);
  }
  for (let i = 0; i < regular.length; i += 200) {
    const chunk = regular.slice(i, i + 200);
    const hashes = await runGit(root, ['hash-object', '--', ...chunk]);
    if (E.isLeft(hashes)) return E.left(gitFailed(hashes.left));
    const lines = hashes.right.split('\n');
    chunk.forEach((file, j) => files.push({ path: file, blob: lines[j] ?? '' }));
  }
  for (const submodule of tree.submodules) {
    const inner = await observeSnapshotAt(path.join(root, ...submodule.split('/')), '', depth + 1);
    if (E.isLeft(inner)) return inner;
    const { snapshot, clean } = inner.right;
    // A clean submodule is its commit, as the index will hold it once added: committing it keeps the hash.
    files.push({ path: submodule, blob: clean ? snapshot.head : `${snapshot.head}+${snapshot.trackedFilesHash}` });
  }
  return E.right(files);
};

type GitSnapshot = RepositorySnapshot & { readonly kind: 'git' };

/** The repository's state and the checkout's branch, read together (`git status --branch` says both). */
export interface Observed {
  readonly snapshot: RepositorySnapshot;
  readonly branch: string;
}

/** Nested submodules deeper than this are taken by their commit alone. */
const MAX_SUBMODULE_DEPTH = 8;

const observeSnapshotAt = async (
  root: string,
  excluded: string,
  depth: number,
): Promise<
  E.Either<ContextError, { readonly snapshot: GitSnapshot; readonly clean: boolean; readonly branch: string }>
> => {
  const [lsFiles, status] = await Promise.all([
    runGit(root, ['ls-files', '-s', '-z']),
    runGit(root, [
      'status',
      '--porcelain=v2',
      '--branch',
      '-z',
      '--untracked-files=no',
      // Submodules count, by their commit and their tracked files; only their untracked files do not.
      depth < MAX_SUBMODULE_DEPTH ? '--ignore-submodules=untracked' : '--ignore-submodules=all',
    ]),
  ]);
  if (E.isLeft(lsFiles)) return E.left(gitFailed(lsFiles.left));
  if (E.isLeft(status)) return E.left(gitFailed(status.left));
  const tree = parseWorkingTreeStatus(status.right);
  const working = await workingFiles(root, tree, depth);
  if (E.isLeft(working)) return working;
  return E.right({
    snapshot: {
      kind: 'git',
      head: tree.head,
      trackedFilesHash: hashTrackedFiles(lsFiles.right, working.right, excluded),
    },
    clean: working.right.length === 0,
    branch: tree.branch ?? DETACHED,
  });
};

/**
 * HEAD, the branch and the tracked-files hash of the repository at `location` (outside a
 * repository, why there is none). The index listing and the working-tree status run at once
 * (process start-up is most of their cost); one more process hashes the modified files, when
 * there are any, and a changed submodule is read the same way.
 */
export const observeSnapshot = async (location: RepositoryLocation): Promise<E.Either<ContextError, Observed>> => {
  if (location.kind === 'none')
    return E.right({ snapshot: { kind: 'none', reason: location.reason }, branch: NO_BRANCH });
  return E.map(({ snapshot, branch }: Observed) => ({ snapshot, branch }))(
    await observeSnapshotAt(location.root, CONTEXT_DIRECTORY, 0),
  );
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
