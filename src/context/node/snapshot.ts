/**
 * The repository's state as one call reads it: HEAD and the branch (or the branch a rebase or
 * bisect works for), the index, the files deleted from the working tree, and the hash of the
 * tracked files' content with the working tree's edits, its new files git does not ignore and
 * the submodules' own states in it.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { BigIntStats } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { sha256HexPrefix } from '../../base/hash.js';
import {
  hashTrackedFilesByVersion,
  type IndexEntry,
  parseIndexEntries,
  parseWorkingTreeStatus,
  type RepositorySnapshot,
  splitNulSeparated,
  type WorkingFile,
  type WorkingTreeStatus,
} from '../checkpoint.js';
import { type ContextExclusion, isExcluded } from '../exclusion.js';
import { CONTEXT_DIRECTORY } from '../layout.js';
import type { ContextError } from '../model.js';
import { readTextIfExists } from './files.js';
import {
  blockingExcludeFile,
  blockingIgnoreFileIn,
  DETACHED,
  type GitAnswers,
  gitFailed,
  NO_BRANCH,
  objectFormat,
  type RepositoryLocation,
  runGit,
} from './git.js';
import { displayGitPath, pathUnder, stdinPathLine } from './gitPaths.js';

/**
 * The largest new file hashed as `git add` would record it, on every read of the repository;
 * a larger one (a dataset, a build's output git does not ignore) counts by what `lstat` says of
 * it (see `statSignature`), so reading stays fast whatever it holds. Decided for each file
 * alone, so that committing some new files changes nothing of how the others count: committing
 * the verified work keeps it verified, whatever else the working tree holds; committing such a
 * large file leaves the summary stale.
 */
const LARGEST_HASHED_NEW_FILE = 16 * 1024 * 1024;

/**
 * A file git is not asked to hash, as the hash counts it: its size, and the times of its last
 * write and last change of its inode to the nanosecond, so an edit that keeps its size is seen
 * (the inode's change time cannot be set back by hand, as the write time can). Only a file this
 * checkout holds and has not committed counts so: a committed file counts by its blob, so a
 * checkout elsewhere gives the same verdict; a `touch` reads as an edit, which only asks for a
 * new checkpoint.
 */
const statSignature = (stat: BigIntStats, readFrom: bigint): string =>
  isUnsettled(stat, readFrom) ? `unsettled:${randomUUID()}` : `${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;

/**
 * The tick of a file's times: a filesystem that keeps whole seconds (ext2 or ext3 with small
 * inodes, some network ones; FAT keeps two) gives both times without nanoseconds; the others
 * take them from the kernel's coarse clock, which moves a jiffy (at most 10 ms) at a time.
 */
const timeTick = (stat: BigIntStats): bigint =>
  stat.mtimeNs % 1_000_000_000n === 0n && stat.ctimeNs % 1_000_000_000n === 0n ? 2_000_000_000n : 10_000_000n;

/**
 * True when a file's times are too recent to vouch for its content (git's "racily clean" file):
 * written or changed within a tick of `readFrom` (the clock, in nanoseconds, just before its
 * times were read) or later, so an edit that keeps its size, made after this read in the same
 * tick, would leave both times as they are. Such a file counts as changed at every later read
 * (its signature never repeats): a checkpoint over it is stale next time, never wrongly verified.
 */
const isUnsettled = (stat: BigIntStats, readFrom: bigint): boolean => {
  const latest = stat.mtimeNs > stat.ctimeNs ? stat.mtimeNs : stat.ctimeNs;
  return latest >= readFrom - timeTick(stat);
};

/** The wall clock in nanoseconds, as file times are kept. */
const clockNs = (): bigint => BigInt(Date.now()) * 1_000_000n;

/** The entry at `file` without following a link, its times to the nanosecond; undefined when it cannot be seen. */
const lstatExact = (file: Buffer): Promise<BigIntStats | undefined> =>
  fs.lstat(file, { bigint: true }).catch(() => undefined);

/** A symbolic link's blob, and as version 1 of the files hash took it: a hash of its target text alone. */
interface LinkBlob {
  readonly blob: string;
  readonly blobV1: string;
}

/**
 * The blobs of symbolic links as `git add` records them: each link's target text as the blob's
 * content, never filtered (hash-object given the path would follow the link, and fail on a
 * dangling one), so committing it keeps the hash. Hashed here, in the repository's object
 * format (which git gave with the clone's other facts: no process of its own).
 */
const linkBlobs = async (
  answers: GitAnswers,
  root: string,
  links: ReadonlyArray<string>,
): Promise<E.Either<ContextError, ReadonlyMap<string, LinkBlob>>> => {
  if (links.length === 0) return E.right(new Map());
  const format = await objectFormat(answers, root);
  if (E.isLeft(format)) return E.left(gitFailed(format.left));
  const algorithm = format.right === 'sha256' ? 'sha256' : 'sha1';
  const blobs = new Map<string, LinkBlob>();
  for (const link of links) {
    const target = await fs.readlink(pathUnder(root, link), { encoding: 'buffer' }).catch(() => Buffer.alloc(0));
    const header = Buffer.from(`blob ${target.length}\0`, 'latin1');
    blobs.set(link, {
      blob: createHash(algorithm).update(header).update(target).digest('hex'),
      blobV1: `link:${sha256HexPrefix(target.toString('latin1'), 20)}`,
    });
  }
  return E.right(blobs);
};

/** True for a regular file this process may read (git reads it as this process). */
const isReadableFile = async (file: Buffer): Promise<boolean> =>
  (await fs.lstat(file).catch(() => undefined))?.isFile() === true &&
  (await fs.access(file, fs.constants.R_OK).then(
    () => true,
    () => false,
  ));

/** How many times a chunk of files is hashed before a failure is the answer. */
const HASH_ATTEMPTS = 5;

/**
 * The blobs of the regular files `paths` as `git hash-object` gives them (the filters of `git
 * add` applied), by path. A file gone between git listing it and reading it (a build's or an
 * editor's temporary file) is left out, not a failure: the others are hashed again without it.
 */
const fileBlobs = async (
  root: string,
  paths: ReadonlyArray<string>,
): Promise<E.Either<ContextError, ReadonlyMap<string, string>>> => {
  const blobs = new Map<string, string>();
  for (let i = 0; i < paths.length; i += 200) {
    let chunk = paths.slice(i, i + 200);
    for (let attempt = 1; ; attempt += 1) {
      // Paths on standard input, as bytes (C-quoted where a line break would split one): git takes any name there.
      const hashes = await runGit(root, ['hash-object', '--stdin-paths'], Buffer.concat(chunk.map(stdinPathLine)));
      if (E.isRight(hashes)) {
        const lines = hashes.right.split('\n');
        chunk.forEach((file, j) => blobs.set(file, lines[j] ?? ''));
        break;
      }
      // A file may also come back before it is looked at (one made and removed again and again).
      if (attempt === HASH_ATTEMPTS) return E.left(gitFailed(hashes.left));
      const present: string[] = [];
      for (const file of chunk) if (await isReadableFile(pathUnder(root, file))) present.push(file);
      chunk = present;
    }
  }
  return E.right(blobs);
};

/**
 * The state of the working-tree files git lists as changed: a regular file's blob from `git
 * hash-object` (which applies the same filters as `git add`); a symbolic link's from its target
 * text; a file gone from the working tree (deleted, also in a merge conflict) as deleted; a
 * FIFO, socket or device in a file's place as such, never opened; a submodule's from its own
 * checked-out commit and, when its tracked files changed, their state too. A new file (untracked,
 * not ignored) is taken as `git add` would record it: a regular file by its blob and its owner's
 * execute bit, a symbolic link by its target; a nested repository or a special file, which it
 * would not record as a blob, is left out.
 */
const workingFiles = async (
  answers: GitAnswers,
  root: string,
  tree: WorkingTreeStatus,
  untracked: ReadonlyArray<string>,
  depth: number,
): Promise<E.Either<ContextError, WorkingFile[]>> => {
  const modes = new Map(tree.modes);
  const withMode = (file: string): { mode?: string } => {
    const mode = modes.get(file);
    return mode === undefined ? {} : { mode };
  };
  const files: WorkingFile[] = tree.deleted.map((file) => ({ path: file, blob: null }));
  const regular: string[] = [];
  const links: string[] = [];
  for (const file of [...new Set(tree.modified)]) {
    // The path as bytes: a name that is not UTF-8 names its file all the same.
    const full = pathUnder(root, file);
    const stat = await fs.lstat(full).catch(() => undefined);
    if (stat === undefined) files.push({ path: file, blob: null });
    else if (stat.isSymbolicLink()) links.push(file);
    else if (stat.isDirectory()) files.push({ path: file, blob: 'directory' });
    else if (stat.isFile()) regular.push(file);
    // A FIFO, socket or device in a tracked file's place: hash-object would open it and wait on it.
    else files.push({ path: file, blob: 'not a regular file' });
  }
  for (const file of untracked) {
    const readFrom = clockNs();
    const stat = await lstatExact(pathUnder(root, file));
    if (stat === undefined || !(stat.isSymbolicLink() || stat.isFile())) continue;
    // git records a new file as executable by its owner's execute bit alone.
    const mode = stat.isSymbolicLink() ? '120000' : (stat.mode & 0o100n) === 0n ? '100644' : '100755';
    if (stat.isFile() && stat.size > LARGEST_HASHED_NEW_FILE)
      files.push({ path: file, blob: `stat:${statSignature(stat, readFrom)}`, mode });
    else {
      modes.set(file, mode);
      (stat.isSymbolicLink() ? links : regular).push(file);
    }
  }
  const [linked, hashes] = [await linkBlobs(answers, root, links), await fileBlobs(root, regular)];
  if (E.isLeft(linked)) return linked;
  if (E.isLeft(hashes)) return hashes;
  for (const [file, blob] of linked.right) files.push({ path: file, ...blob, ...withMode(file) });
  for (const [file, blob] of hashes.right) files.push({ path: file, blob, ...withMode(file) });
  // A file left unhashed is gone (a changed file git tracks is deleted; a new one is no file), or
  // unreadable by this process (one a container left, `chmod 000`): counted by its size and
  // times, as git could not add it either.
  const untrackedSet = new Set(untracked);
  for (const file of regular) {
    if (hashes.right.has(file)) continue;
    const readFrom = clockNs();
    const stat = await lstatExact(pathUnder(root, file));
    if (stat !== undefined)
      files.push({ path: file, blob: `unreadable:${statSignature(stat, readFrom)}`, ...withMode(file) });
    else if (!untrackedSet.has(file)) files.push({ path: file, blob: null });
  }
  for (const submodule of tree.submodules) {
    const inner = await observeSnapshotAt(answers, path.join(root, ...submodule.split('/')), '', depth + 1);
    if (E.isLeft(inner)) return inner;
    const { snapshot, clean } = inner.right;
    // A clean submodule is its commit, as the index will hold it once added: committing it keeps the hash.
    files.push(
      clean
        ? { path: submodule, blob: snapshot.head }
        : {
            path: submodule,
            blob: `${snapshot.head}+${snapshot.trackedFilesHash}`,
            blobV1: `${snapshot.head}+${snapshot.trackedFilesHashV1 ?? snapshot.trackedFilesHash}`,
          },
    );
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
  /** The blobs of each file in a merge conflict (the index's stages 1, 2 and 3), by path. */
  readonly conflictStages: ReadonlyMap<string, ConflictStages>;
  /** New files git does not track and does not ignore, outside the context directory, as shown. */
  readonly untracked: ReadonlyArray<string>;
}

/**
 * The versions git holds of a file in a merge conflict, by blob: the common ancestor (stage 1),
 * ours (stage 2) and theirs (stage 3), each when git has it (an add/add conflict has no ancestor).
 */
export interface ConflictStages {
  readonly base?: string;
  readonly ours?: string;
  readonly theirs?: string;
}

const STAGE_NAMES: Readonly<Record<string, keyof ConflictStages>> = { '1': 'base', '2': 'ours', '3': 'theirs' };

/** The conflict stages of the index, by path. */
const conflictStagesOf = (index: ReadonlyArray<IndexEntry>): ReadonlyMap<string, ConflictStages> => {
  const stages = new Map<string, ConflictStages>();
  for (const entry of index) {
    const name = STAGE_NAMES[entry.stage];
    if (name !== undefined) stages.set(entry.path, { ...stages.get(entry.path), [name]: entry.blob });
  }
  return stages;
};

/** Nested submodules deeper than this are taken by their commit alone. */
const MAX_SUBMODULE_DEPTH = 8;

interface SnapshotAt {
  readonly snapshot: GitSnapshot;
  readonly clean: boolean;
  readonly tree: WorkingTreeStatus;
  /** New files git does not ignore, outside the context directory. */
  readonly untracked: ReadonlyArray<string>;
  readonly index: ReadonlyArray<IndexEntry>;
}

/**
 * `git status` of the working tree at `root`, unless the clone's ignore rules are in a file git
 * would wait on for good (it reads them even with untracked files left out).
 */
const readStatus = async (
  answers: GitAnswers,
  root: string,
  depth: number,
): Promise<E.Either<ContextError, string>> => {
  const blocking = await blockingExcludeFile(answers, root);
  if (blocking !== undefined) return E.left(blocking);
  const status = await runGit(root, [
    'status',
    '--porcelain=v2',
    '--branch',
    '-z',
    '--untracked-files=no',
    // Submodules count, by their commit and their tracked files; only their untracked files do not.
    depth < MAX_SUBMODULE_DEPTH ? '--ignore-submodules=untracked' : '--ignore-submodules=all',
  ]);
  return E.mapLeft(gitFailed)(status);
};

/**
 * The new files of the working tree at `root` that git does not ignore (`git ls-files --others
 * --exclude-standard`), but those `excluded` leaves out; a folder it leaves out whole git is not
 * even asked to walk. Git opens the `.gitignore` of every folder it walks and would wait for
 * good on one that is a FIFO, socket or device: where the root or a folder holding tracked files
 * has one, no new file is listed.
 */
const readUntracked = async (
  root: string,
  excluded: ContextExclusion,
  index: ReadonlyArray<IndexEntry>,
): Promise<E.Either<ContextError, ReadonlyArray<string>>> => {
  const skipped = typeof excluded === 'string' ? excluded : '';
  const folders = new Set(['']);
  for (const { path: file } of index)
    for (let end = file.lastIndexOf('/'); end > 0; end = file.lastIndexOf('/', end - 1)) {
      const folder = file.slice(0, end);
      if (folders.has(folder)) break;
      folders.add(folder);
    }
  if (
    blockingIgnoreFileIn(
      root,
      [...folders].filter((folder) => !isExcluded(skipped, folder)),
    )
  )
    return E.right([]);
  const listed = await runGit(root, [
    'ls-files',
    '--others',
    '--exclude-standard',
    '-z',
    '--',
    '.',
    ...(skipped === '' ? [] : [`:(exclude,literal)${skipped}`]),
  ]);
  if (E.isLeft(listed)) return E.left(gitFailed(listed.left));
  return E.right(splitNulSeparated(listed.right).filter((file) => !isExcluded(excluded, file)));
};

const observeSnapshotAt = async (
  answers: GitAnswers,
  root: string,
  excluded: ContextExclusion,
  depth: number,
): Promise<E.Either<ContextError, SnapshotAt>> => {
  const [lsFiles, status] = await Promise.all([
    // -t tags each entry (S: outside a sparse checkout); the hash reads the entries without it.
    runGit(root, ['ls-files', '-s', '-t', '-z']),
    readStatus(answers, root, depth),
  ]);
  if (E.isLeft(lsFiles)) return E.left(gitFailed(lsFiles.left));
  if (E.isLeft(status)) return status;
  const tree = parseWorkingTreeStatus(status.right);
  const index = parseIndexEntries(lsFiles.right);
  // New files are part of the work; a submodule's own are not, since committing here does not add them.
  const untracked = depth === 0 ? await readUntracked(root, excluded, index) : E.right([]);
  if (E.isLeft(untracked)) return untracked;
  const working = await workingFiles(answers, root, tree, untracked.right, depth);
  if (E.isLeft(working)) return working;
  const outside = (file: string): boolean => !isExcluded(excluded, file);
  const unmerged = tree.unmerged.filter(outside);
  const uncommitted = [...new Set([...tree.modified, ...tree.deleted, ...tree.submodules, ...untracked.right])].filter(
    outside,
  );
  return E.right({
    snapshot: {
      kind: 'git',
      head: tree.head,
      ...hashTrackedFilesByVersion(lsFiles.right, working.right, excluded),
      ...(unmerged.length === 0 ? {} : { unmerged: unmerged.map(displayGitPath) }),
      ...(uncommitted.length === 0 ? {} : { uncommitted: uncommitted.map(displayGitPath) }),
    },
    clean: working.right.length === 0,
    tree,
    untracked: untracked.right,
    index,
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
 * which branch a rebase or bisect is working for. `answers` keeps what git said of the
 * repository itself for the rest of the call.
 */
export const observeSnapshot = async (
  answers: GitAnswers,
  location: RepositoryLocation,
  excluded: ContextExclusion = CONTEXT_DIRECTORY,
): Promise<E.Either<ContextError, Observed>> => {
  if (location.kind === 'none')
    return E.right({
      snapshot: { kind: 'none', reason: location.reason },
      branch: NO_BRANCH,
      head: 'none',
      index: new Map(),
      deleted: new Set(),
      conflictStages: new Map(),
      untracked: [],
    });
  const observed = await observeSnapshotAt(answers, location.root, excluded, 0);
  if (E.isLeft(observed)) return observed;
  const { snapshot, tree, index, untracked } = observed.right;
  const branch =
    tree.branch === undefined ? await detachedFor(location.root) : { branch: tree.branch, head: 'branch' as const };
  return E.right({
    snapshot,
    ...branch,
    index: new Map(index.map((entry) => [entry.path, entry])),
    deleted: new Set(tree.deleted),
    conflictStages: conflictStagesOf(index),
    untracked: untracked.map(displayGitPath),
  });
};
