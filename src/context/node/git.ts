/**
 * The repository as git sees it, read with `execFile` (no shell, so no path is ever
 * interpreted). Only read-only commands run, with `GIT_OPTIONAL_LOCKS=0` so that none of them
 * refreshes the index behind the user's back. Outside a repository (or without git) the
 * location says so, and everything counts as stale; a git that fails inside a repository is
 * an error of its own, with git's own words, never mistaken for "not a repository".
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { sha256HexPrefix } from '../../base/hash.js';
import {
  type ChangedFile,
  hashTrackedFiles,
  type IndexEntry,
  isInside,
  parseIndexEntries,
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
import { readTextIfExists } from './files.js';
import { decodeGitOutput, displayGitPath, pathUnder, stdinPathLine } from './gitPaths.js';

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

/**
 * Runs git and returns its output as bytes; `input`, when given, is its standard input. Git's
 * paths are bytes, not always UTF-8: callers that read paths decode with `decodeGitOutput`.
 */
const runGitBytes = async (
  cwd: string,
  args: ReadonlyArray<string>,
  input?: Buffer,
): Promise<E.Either<GitFailure, Buffer>> => {
  return new Promise((resolve) => {
    const child = execFile(
      'git',
      [...args],
      {
        cwd,
        encoding: 'buffer',
        maxBuffer: 512 * 1024 * 1024,
        env: { ...process.env, GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C' },
        windowsHide: true,
      },
      (error, stdout, stderr) => {
        if (error === null) resolve(E.right(stdout));
        else {
          const said = stderr.toString('utf8').trim().split('\n')[0]?.trim() ?? '';
          resolve(
            E.left({
              missing: (error as NodeJS.ErrnoException).code === 'ENOENT',
              code: typeof error.code === 'number' ? error.code : undefined,
              message: said || error.message.split('\n')[0]!,
            }),
          );
        }
      },
    );
    // A git that exits before reading all of its input is reported by its exit status, not by EPIPE.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input);
  });
};

/** Runs git and returns its output as text: UTF-8, or for output that is not, each other byte kept (see `decodeGitOutput`). */
const runGit = async (cwd: string, args: ReadonlyArray<string>, input?: Buffer): Promise<GitResult> =>
  E.map(decodeGitOutput)(await runGitBytes(cwd, args, input));

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
 * context file records, is checked instead (one `git cat-file`: a commit of this repository
 * without parents), so the walk runs only until a context file records it. A recorded commit
 * that is not one of this repository's first commits is not trusted: the history is walked,
 * and the key resolution says the checkout computes another identity. A shallow clone, which
 * may lack the first commit, takes the recorded one. A failing git is an error, never a switch
 * to another key.
 */
export const readRepositoryFacts = async (
  location: RepositoryLocation,
  knownRoot?: string,
): Promise<E.Either<ContextError, RepositoryFacts>> => {
  const folder = path.basename(location.root);
  if (location.kind === 'none') return E.right({ rootCommits: [], folder });
  // The recorded first commit is checked while the origin is read: each is one short git process.
  const [origin, confirmed] = await Promise.all([
    runGit(location.root, ['config', '--get', 'remote.origin.url']),
    knownRoot === undefined ? Promise.resolve(false) : isFirstCommit(location.root, knownRoot),
  ]);
  // Exit 1 is the documented answer for an unset key.
  if (E.isLeft(origin) && origin.left.code !== 1) return E.left(gitFailed(origin.left));
  const url = E.isRight(origin) ? origin.right.trim() : '';
  // A local path as origin names a folder on this machine, not the repository: the first commit does.
  if (normalizeRemoteUrl(url) !== undefined) return E.right({ origin: url, rootCommits: [], folder });
  const roots = confirmed ? E.right([knownRoot!]) : await rootCommits(location.root);
  return E.map((ids: ReadonlyArray<string>): RepositoryFacts => ({ rootCommits: ids, folder }))(roots);
};

/** True when `id` names a commit of the repository at `root` without parents; shallow clones may lack it, and are taken at their word. */
const isFirstCommit = async (root: string, id: string): Promise<boolean> => {
  const commit = await runGit(root, ['cat-file', 'commit', id]);
  if (E.isRight(commit)) return !/^parent /mu.test(commit.right.split('\n\n')[0] ?? '');
  const shallow = await runGit(root, ['rev-parse', '--is-shallow-repository']);
  return E.isRight(shallow) && shallow.right.trim() === 'true';
};

/** The commits without parents reachable from HEAD: a walk of the whole history. */
const rootCommits = async (root: string): Promise<E.Either<ContextError, ReadonlyArray<string>>> => {
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
  const modes = new Map(tree.modes);
  const withMode = (file: string): { mode?: string } => {
    const mode = modes.get(file);
    return mode === undefined ? {} : { mode };
  };
  const files: WorkingFile[] = tree.deleted.map((file) => ({ path: file, blob: null }));
  const regular: string[] = [];
  for (const file of [...new Set(tree.modified)]) {
    // The path as bytes: a name that is not UTF-8 names its file all the same.
    const full = pathUnder(root, file);
    const stat = await fs.lstat(full).catch(() => undefined);
    if (stat === undefined) files.push({ path: file, blob: null });
    else if (stat.isSymbolicLink()) {
      const target = await fs.readlink(full, { encoding: 'buffer' }).catch(() => Buffer.alloc(0));
      files.push({ path: file, blob: `link:${sha256HexPrefix(target.toString('latin1'), 20)}`, ...withMode(file) });
    } else if (stat.isDirectory()) files.push({ path: file, blob: 'directory' });
    else regular.push(file);
  }
  for (let i = 0; i < regular.length; i += 200) {
    const chunk = regular.slice(i, i + 200);
    // Paths on standard input, as bytes (C-quoted where a line break would split one): git takes any name there.
    const hashes = await runGit(root, ['hash-object', '--stdin-paths'], Buffer.concat(chunk.map(stdinPathLine)));
    if (E.isLeft(hashes)) return E.left(gitFailed(hashes.left));
    const lines = hashes.right.split('\n');
    chunk.forEach((file, j) => files.push({ path: file, blob: lines[j] ?? '', ...withMode(file) }));
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

/**
 * Where the branch part of a key comes from: HEAD on a branch; HEAD detached by a rebase or a
 * bisect of a branch (git records which); a HEAD detached on its own (a CI checkout, a commit
 * checked out by hand); no repository at all.
 */
export type HeadState = 'branch' | 'rebase' | 'bisect' | 'detached' | 'none';

/** The repository's state, the checkout's branch and its index, read together. */
export interface Observed {
  readonly snapshot: RepositorySnapshot;
  /** The branch as git names it (not sanitized); `DETACHED` or `NO_BRANCH` when there is none. */
  readonly branch: string;
  readonly head: HeadState;
  /** The index by path: what the repository holds, in and out of a sparse checkout. */
  readonly index: ReadonlyMap<string, IndexEntry>;
  /** Tracked files deleted from the working tree (not those a sparse checkout leaves out). */
  readonly deleted: ReadonlySet<string>;
}

/** Nested submodules deeper than this are taken by their commit alone. */
const MAX_SUBMODULE_DEPTH = 8;

interface SnapshotAt {
  readonly snapshot: GitSnapshot;
  readonly clean: boolean;
  readonly tree: WorkingTreeStatus;
  readonly index: ReadonlyArray<IndexEntry>;
}

const observeSnapshotAt = async (
  root: string,
  excluded: string,
  depth: number,
): Promise<E.Either<ContextError, SnapshotAt>> => {
  const [lsFiles, status] = await Promise.all([
    // -t tags each entry (S: outside a sparse checkout); the hash reads the entries without it.
    runGit(root, ['ls-files', '-s', '-t', '-z']),
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
  const unmerged = tree.unmerged.filter((file) => excluded === '' || !isInside(excluded, file));
  return E.right({
    snapshot: {
      kind: 'git',
      head: tree.head,
      trackedFilesHash: hashTrackedFiles(lsFiles.right, working.right, excluded),
      ...(unmerged.length === 0 ? {} : { unmerged: unmerged.map(displayGitPath) }),
    },
    clean: working.right.length === 0,
    tree,
    index: parseIndexEntries(lsFiles.right),
  });
};

/** The first line of a small file git keeps in its directory, or undefined when there is none. */
const readGitFile = async (file: string): Promise<string | undefined> => {
  const text = await readTextIfExists(file, 4096, true);
  return E.isRight(text) ? text.right?.split('\n')[0]?.trim() || undefined : undefined;
};

/**
 * The branch a detached HEAD works for: the one a rebase is rewriting (`rebase-merge/head-name`
 * or `rebase-apply/head-name`), or the one a bisect started from (`BISECT_START`); otherwise a
 * HEAD detached on its own.
 */
const detachedFor = async (root: string): Promise<{ readonly branch: string; readonly head: HeadState }> => {
  // `git status` says "(detached)" for a branch of that very name too: HEAD's full name tells them apart.
  const paths = await runGit(root, [
    'rev-parse',
    '--symbolic-full-name',
    'HEAD',
    '--git-path',
    'rebase-merge/head-name',
    '--git-path',
    'rebase-apply/head-name',
    '--git-path',
    'BISECT_START',
  ]);
  const detached = { branch: DETACHED, head: 'detached' } as const;
  if (E.isLeft(paths)) return detached;
  const [name = '', ...files] = paths.right.split('\n');
  if (name.startsWith('refs/heads/')) return { branch: name.slice('refs/heads/'.length), head: 'branch' };
  const [merge, apply, bisect] = files.map((file) => path.resolve(root, file));
  for (const file of [merge, apply]) {
    const name = file === undefined ? undefined : await readGitFile(file);
    if (name?.startsWith('refs/heads/') === true) return { branch: name.slice('refs/heads/'.length), head: 'rebase' };
  }
  const started = bisect === undefined ? undefined : await readGitFile(bisect);
  // A bisect started on a detached HEAD records its commit instead of a branch.
  if (started !== undefined && !/^[0-9a-f]{40,64}$/u.test(started)) return { branch: started, head: 'bisect' };
  return detached;
};

/**
 * HEAD, the branch, the index and the tracked-files hash of the repository at `location`
 * (outside a repository, why there is none). The index listing and the working-tree status run
 * at once (process start-up is most of their cost); one more process hashes the modified files,
 * when there are any, a changed submodule is read the same way, and a detached HEAD is asked
 * which branch a rebase or bisect is working for.
 */
export const observeSnapshot = async (location: RepositoryLocation): Promise<E.Either<ContextError, Observed>> => {
  if (location.kind === 'none')
    return E.right({
      snapshot: { kind: 'none', reason: location.reason },
      branch: NO_BRANCH,
      head: 'none',
      index: new Map(),
      deleted: new Set(),
    });
  const observed = await observeSnapshotAt(location.root, CONTEXT_DIRECTORY, 0);
  if (E.isLeft(observed)) return observed;
  const { snapshot, tree, index } = observed.right;
  const branch =
    tree.branch === undefined ? await detachedFor(location.root) : { branch: tree.branch, head: 'branch' as const };
  return E.right({
    snapshot,
    ...branch,
    index: new Map(index.map((entry) => [entry.path, entry])),
    deleted: new Set(tree.deleted),
  });
};

/**
 * The files changed between the commit `since` and the working tree (`git diff --name-status`),
 * or why they cannot be listed. Since no commit (a checkpoint taken before the first one),
 * every tracked file is new.
 */
export const changedFiles = async (
  root: string,
  since: string,
): Promise<E.Either<ContextError, ReadonlyArray<ChangedFile>>> => {
  if (since === '') {
    const files = await runGit(root, ['ls-files', '-z']);
    return E.isLeft(files)
      ? E.left(gitFailed(files.left))
      : E.right(splitNulSeparated(files.right).map((path) => ({ status: 'A', path: displayGitPath(path) })));
  }
  if (!/^[0-9a-f]{7,64}$/u.test(since))
    return E.left({ code: 'invalid', message: `the checkpoint's commit ${JSON.stringify(since)} is not a commit id` });
  const diff = await runGit(root, ['diff', '--name-status', '-z', since, '--']);
  return E.isRight(diff)
    ? E.right(
        parseNameStatus(diff.right).map((change) => ({
          ...change,
          path: displayGitPath(change.path),
          ...(change.from === undefined ? {} : { from: displayGitPath(change.from) }),
        })),
      )
    : E.left({
        code: 'git_failed',
        message: `the checkpoint's commit ${since.slice(0, 7)} is not in this repository (rebased away or not fetched), so the changed files are unknown`,
      });
};

/**
 * The content of the blob `blob` (`git cat-file blob`), or why not; one larger than `maxBytes`
 * is refused. Reads what a sparse checkout leaves out of the working tree.
 */
export const readBlob = async (
  root: string,
  blob: string,
  maxBytes: number,
): Promise<E.Either<ContextError, Buffer>> => {
  if (!/^[0-9a-f]{40,64}$/u.test(blob)) return E.left({ code: 'git_failed', message: `${blob} is not a blob id` });
  const size = await runGit(root, ['cat-file', '-s', blob]);
  if (E.isLeft(size)) return E.left(gitFailed(size.left));
  if (Number(size.right.trim()) > maxBytes)
    return E.left({ code: 'too_large', message: `is larger than ${maxBytes} bytes, the most it may hold` });
  const content = await runGitBytes(root, ['cat-file', 'blob', blob]);
  return E.isLeft(content) ? E.left(gitFailed(content.left)) : E.right(content.right);
};
