/**
 * The context file's history as git keeps it: the file as committed at a commit, which of two
 * commits came first, and whether a context stayed in the file from a commit until now. What a
 * move between branches reads their common ancestor from.
 */
import * as E from 'fp-ts/lib/Either.js';
import { CONTEXT_FILE_MAX_BYTES, type ContextFile } from '../model.js';
import { decodeContextFile } from '../schema.js';
import { gitPathOf } from './derived.js';
import { readBlob, runGit, runGitBytes } from './git.js';
import { decodeText } from './read.js';
import type { Scope } from './scope.js';

/** The context file's history (a port the write shell gives an edit). */
export interface ContextHistory {
  /** The context file as committed at `commit`; undefined when git has none there, or it is no context file of this kind. */
  readonly fileAt: (commit: string) => Promise<ContextFile | undefined>;
  /** True when commit `earlier` is an ancestor of commit `later` (or the same); false when git cannot say. */
  readonly isAncestor: (earlier: string, later: string) => Promise<boolean>;
  /**
   * True when `commit` is an ancestor of HEAD (or of the merge in progress) and every commit
   * since that changed the context file still held a context of `branch` and `workstreamId`:
   * the context there now is the one the file held at `commit`, edited since, not a new one
   * made after it was removed. False when git cannot say, or there are too many such commits.
   */
  readonly keptSince: (commit: string, branch: string, workstreamId: string) => Promise<boolean>;
}

/** A full object id: 40 hex digits (SHA-1) or 64 (SHA-256), never a prefix or a ref name. */
const COMMIT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/u;

/**
 * The most commits `keptSince` reads the file at, and the most bytes in all: past either, git
 * is not asked further and the answer is false (the move then keeps everything of both sides).
 */
const KEPT_SINCE_LIMITS = { commits: 1000, bytes: 256 * 1024 * 1024 } as const;

/** True when `id` names a commit object itself: a full id of this repository's hash, never a ref or a tag that looks like one. */
const isCommitId = async (root: string, id: string): Promise<boolean> => {
  if (!COMMIT_ID.test(id)) return false;
  const named = await runGit(root, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${id}^{commit}`]);
  return E.isRight(named) && named.right.trim() === id;
};

/** The blobs of `paths` (`commit:path`, one each) by `git cat-file --batch-check`: id and size, or undefined where git has none. */
const blobsOf = async (
  root: string,
  paths: ReadonlyArray<string>,
): Promise<ReadonlyArray<{ readonly id: string; readonly size: number } | undefined> | undefined> => {
  const listed = await runGit(
    root,
    ['cat-file', '--batch-check=%(objectname) %(objecttype) %(objectsize)'],
    Buffer.from(paths.map((path) => `${path}\n`).join(''), 'utf8'),
  );
  if (E.isLeft(listed)) return undefined;
  const lines = listed.right.split('\n').filter((line) => line !== '');
  if (lines.length !== paths.length) return undefined;
  return lines.map((line) => {
    const [id, type, size] = line.split(' ');
    return id !== undefined && type === 'blob' && COMMIT_ID.test(id) ? { id, size: Number(size) } : undefined;
  });
};

/** The contents of `blobs` by one `git cat-file --batch`, in order; undefined when git's answer cannot be read. */
const contentsOf = async (root: string, blobs: ReadonlyArray<string>): Promise<ReadonlyArray<Buffer> | undefined> => {
  const read = await runGitBytes(root, ['cat-file', '--batch'], Buffer.from(blobs.map((id) => `${id}\n`).join('')));
  if (E.isLeft(read)) return undefined;
  const out = read.right;
  const contents: Buffer[] = [];
  let at = 0;
  for (const id of blobs) {
    const end = out.indexOf(0x0a, at);
    if (end === -1) return undefined;
    const [named, type, size] = out.subarray(at, end).toString('utf8').split(' ');
    if (named !== id || type !== 'blob') return undefined;
    const bytes = Number(size);
    contents.push(out.subarray(end + 1, end + 1 + bytes));
    at = end + 1 + bytes + 1;
  }
  return contents;
};

/** The history of the context file of `scope`, read with git on demand. */
export const contextHistory = (scope: Scope): ContextHistory => {
  const root = scope.paths.root;
  const path = gitPathOf(scope, scope.paths.json);
  const decode = (bytes: Buffer): ContextFile | undefined => {
    const file = decodeText(bytes.toString('utf8'), (value) => decodeContextFile(value, scope.kind));
    return E.isRight(file) ? file.right : undefined;
  };
  const isAncestor = async (earlier: string, later: string): Promise<boolean> =>
    COMMIT_ID.test(earlier) &&
    COMMIT_ID.test(later) &&
    E.isRight(await runGit(root, ['merge-base', '--is-ancestor', '--end-of-options', earlier, later]));
  return {
    fileAt: async (commit) => {
      if (!(await isCommitId(root, commit))) return undefined;
      const blob = await runGit(root, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${commit}:${path}`]);
      if (E.isLeft(blob)) return undefined;
      const bytes = await readBlob(root, blob.right.trim(), CONTEXT_FILE_MAX_BYTES);
      return E.isLeft(bytes) ? undefined : decode(bytes.right);
    },
    isAncestor,
    keptSince: async (commit, branch, workstreamId) => {
      if (!(await isCommitId(root, commit))) return false;
      // A merge not committed yet brings the arriving context from MERGE_HEAD's side.
      const tips: string[] = [];
      for (const tip of ['HEAD', 'MERGE_HEAD']) {
        const id = await runGit(root, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${tip}^{commit}`]);
        if (E.isRight(id) && COMMIT_ID.test(id.right.trim())) tips.push(id.right.trim());
      }
      const reached = await Promise.all(tips.map((tip) => isAncestor(commit, tip)));
      if (!reached.includes(true)) return false;
      const listed = await runGit(root, [
        '--literal-pathspecs',
        'rev-list',
        `--max-count=${KEPT_SINCE_LIMITS.commits + 1}`,
        ...tips,
        `^${commit}`,
        '--',
        path,
      ]);
      if (E.isLeft(listed)) return false;
      const commits = listed.right.split('\n').filter((line) => line !== '');
      if (commits.length > KEPT_SINCE_LIMITS.commits) return false;
      if (commits.length === 0) return true;
      const blobs = await blobsOf(
        root,
        commits.map((at) => `${at}:${path}`),
      );
      // A commit without the file held no context at all.
      if (blobs === undefined || blobs.some((blob) => blob === undefined)) return false;
      const distinct = [...new Map(blobs.map((blob) => [blob!.id, blob!.size])).entries()];
      if (
        distinct.some(([, size]) => !(size <= CONTEXT_FILE_MAX_BYTES)) ||
        distinct.reduce((sum, [, size]) => sum + size, 0) > KEPT_SINCE_LIMITS.bytes
      )
        return false;
      const contents = await contentsOf(
        root,
        distinct.map(([id]) => id),
      );
      return (
        contents !== undefined &&
        contents.every((bytes) =>
          decode(bytes)?.contexts.some(
            (context) => context.key.branch === branch && context.key.workstreamId === workstreamId,
          ),
        )
      );
    },
  };
};
