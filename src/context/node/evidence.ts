/**
 * Evidence checked against the repository, not only the disk: a claim points at a file git
 * tracks (what a teammate's clone will have: not an untracked file, not `.git/config`, not a
 * directory), at lines that file has, and a file removed from the index, or deleted from the
 * working tree, is flagged. A sparse checkout's files are in the index even when they are not
 * on disk, so they are neither refused nor flagged.
 */
import * as fs from 'node:fs/promises';
import * as E from 'fp-ts/lib/Either.js';
import { number } from '../../base/count.js';
import { isInside } from '../exclusion.js';
import { normalizeEvidencePath, parseLineRange, selectEvidencePaths } from '../ledger.js';
import type { Claim, ContextError, EvidenceLedger, FileEvidence, SharedContext } from '../model.js';
import { readBlob } from './git.js';
import type { Observed } from './snapshot.js';
import { pathUnder } from './gitPaths.js';

/** Index modes of entries that are not files with lines. */
const SYMLINK = '120000';
const GITLINK = '160000';

/** The submodule (a gitlink in the index) that holds `file`, if one does: the superproject does not index its files. */
const submoduleOf = (observed: Observed, file: string): string | undefined => {
  const parts = file.split('/');
  for (let i = 1; i < parts.length; i += 1) {
    const prefix = parts.slice(0, i).join('/');
    if (observed.index.get(prefix)?.mode === GITLINK) return prefix;
  }
  return undefined;
};

/** Why a path cannot be read on disk without leaving the repository, or what else is in its place. */
type Unreachable =
  { readonly kind: 'missing' | 'directory' | 'special' } | { readonly kind: 'link'; readonly link: string };

/**
 * The file at the repository-relative `file` under `root`, reached one segment at a time
 * without following a symbolic link: a link (`sub/etclink` to `/etc`, committed inside a
 * submodule, or anywhere outside git) could lead anywhere, and evidence is a file the
 * repository holds, never a link. `file` is one the schema or the claim's parser resolved, so
 * it holds no `.` or `..` segment; checked again here, since nothing must climb out.
 */
const reachFile = async (root: string, file: string): Promise<E.Either<Unreachable, Buffer>> => {
  const resolved = normalizeEvidencePath(file);
  if (E.isLeft(resolved) || resolved.right !== file) return E.left({ kind: 'missing' });
  const parts = file.split('/');
  for (let i = 1; i <= parts.length; i += 1) {
    const prefix = parts.slice(0, i).join('/');
    const stat = await fs.lstat(pathUnder(root, prefix)).catch(() => undefined);
    if (stat === undefined) return E.left({ kind: 'missing' });
    if (stat.isSymbolicLink()) return E.left({ kind: 'link', link: prefix });
    if (i < parts.length && !stat.isDirectory()) return E.left({ kind: 'missing' });
    if (i === parts.length && stat.isDirectory()) return E.left({ kind: 'directory' });
    if (i === parts.length && !stat.isFile()) return E.left({ kind: 'special' });
  }
  return E.right(pathUnder(root, file));
};

/** Why `file`, unreachable as `unreachable` says, is no evidence: one clause after the path. */
const unreachableReason = (file: string, unreachable: Unreachable): string =>
  unreachable.kind === 'link'
    ? unreachable.link === file
      ? 'is a symbolic link: point at the file it links to'
      : `goes through the symbolic link ${unreachable.link}: point at a file the repository holds`
    : unreachable.kind === 'directory'
      ? 'is a directory'
      : unreachable.kind === 'special'
        ? 'is not a regular file in the working tree'
        : 'is not in the repository';

/**
 * Whether the repository still holds `file` as evidence: a file in the index (a symbolic link
 * or a submodule entry is none, whatever it points at), not deleted from the working tree, and
 * reached on disk without a link (a file turned into one, committed or not, would be read
 * through it). A file outside a sparse checkout is held by the index alone.
 */
const isEvidenceHeld = async (root: string, observed: Observed, file: string): Promise<boolean> => {
  if (observed.head === 'none' || submoduleOf(observed, file) !== undefined)
    return E.isRight(await reachFile(root, file));
  const entry = observed.index.get(file);
  if (entry === undefined || entry.mode === SYMLINK || entry.mode === GITLINK || observed.deleted.has(file))
    return false;
  return entry.skipWorktree || E.isRight(await reachFile(root, file));
};

/**
 * The paths of the ledger's evidence the repository no longer holds: not in the index (a file
 * removed with `git rm --cached` too), a link or a submodule now, deleted from the working
 * tree, or unreachable on disk (through a link, a directory in its place). Files inside a
 * submodule, and everything outside a repository, are looked for on disk. Flagged as missing,
 * such a path is never read, nor offered as a pointer.
 */
export const missingEvidencePaths = async (
  root: string,
  context: SharedContext,
  observed: Observed,
): Promise<ReadonlyArray<string>> => {
  const paths = selectEvidencePaths(context.evidenceLedger);
  const held = await Promise.all(paths.map((file) => isEvidenceHeld(root, observed, file)));
  return paths.filter((_, i) => !held[i]);
};

/** The number of lines in `bytes`, a line being text ended by a line feed or by the end of the text. */
const linesIn = (bytes: Buffer): number => {
  let count = 0;
  for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) count += 1;
  return bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a ? count + 1 : count;
};

const unreadable = (message: string): ContextError => ({ code: 'io', message });

/** The most a line count reads of one file: past it, a range is taken to fit (a file that large is not read whole for a pointer). */
const LINE_COUNT_MAX_BYTES = 64 * 1024 * 1024;

/** How many lines the working-tree file at `full` has, reading no further than needed to see `needed` of them. */
const countLinesOnDisk = async (
  root: string,
  file: string,
  needed: number,
): Promise<E.Either<ContextError, number>> => {
  const full = await reachFile(root, file);
  if (E.isLeft(full)) return E.left(unreadable(unreachableReason(file, full.left)));
  let handle: Awaited<ReturnType<typeof fs.open>>;
  try {
    // Not through a link swapped in since the path was walked either.
    handle = await fs.open(
      full.right,
      fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0) | (fs.constants.O_NOFOLLOW ?? 0),
    );
  } catch {
    return E.left(unreadable('cannot be read'));
  }
  try {
    if (!(await handle.stat()).isFile()) return E.left(unreadable('is not a regular file in the working tree'));
    const buffer = Buffer.alloc(64 * 1024);
    let count = 0;
    let last = 0x0a;
    for (let read = 0; ;) {
      // Past the bound the file is taken to have the lines: a pointer is not worth reading more.
      if (read >= LINE_COUNT_MAX_BYTES) return E.right(needed);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      for (let at = chunk.indexOf(0x0a); at !== -1; at = chunk.indexOf(0x0a, at + 1)) count += 1;
      last = chunk[bytesRead - 1]!;
      read += bytesRead;
      if (count >= needed) return E.right(count);
    }
    return E.right(last === 0x0a ? count : count + 1);
  } catch {
    return E.left(unreadable('cannot be read'));
  } finally {
    await handle.close().catch(() => undefined);
  }
};

/** Why `evidence` does not point at lines the repository holds, or undefined when it does. */
const evidenceProblem = async (
  root: string,
  observed: Observed,
  evidence: FileEvidence,
): Promise<string | undefined> => {
  const { path: file, lines } = evidence;
  const range = parseLineRange(lines);
  if (E.isLeft(range)) return range.left.message;
  const inSubmodule = submoduleOf(observed, file) !== undefined;
  const entry = observed.index.get(file);
  let count: E.Either<ContextError, number>;
  if (inSubmodule) count = await countLinesOnDisk(root, file, range.right.end);
  else if (entry === undefined) {
    const reached = await reachFile(root, file);
    const what = isInside('.git', file)
      ? "is inside the repository's .git directory"
      : E.isLeft(reached)
        ? unreachableReason(file, reached.left)
        : 'is not tracked by git (git add it first)';
    return `${file} ${what}: evidence points at a file the repository holds, so that every clone can follow it`;
  } else if (entry.mode === GITLINK) return `${file} is a submodule: point at a file inside it`;
  else if (entry.mode === SYMLINK) return `${file} is a symbolic link: point at the file it links to`;
  else if (observed.deleted.has(file)) return `${file} is deleted in the working tree`;
  else if (entry.skipWorktree) {
    // Outside a sparse checkout: the index has the file, the disk does not.
    const blob = await readBlob(root, entry.blob, LINE_COUNT_MAX_BYTES);
    count = E.isRight(blob) ? E.right(linesIn(blob.right)) : E.right(Number.MAX_SAFE_INTEGER);
  } else count = await countLinesOnDisk(root, file, range.right.end);
  if (E.isLeft(count)) return `${file} ${count.left.message}`;
  return count.right >= range.right.end
    ? undefined
    : `${file} has ${number(count.right)} ${count.right === 1 ? 'line' : 'lines'}: ${lines} ends past them`;
};

const sameEvidence = (a: Claim, b: Claim): boolean =>
  a.files.length === b.files.length &&
  a.files.every((file, i) => file.path === b.files[i]!.path && file.lines === b.files[i]!.lines);

/**
 * Checks the file evidence of the claims `after` adds to (or changes in) `before` against the
 * repository: each file tracked by git, and each range within the file. Evidence already in
 * the ledger is not checked again (the file may have changed since; a read flags what is gone).
 */
export const checkNewEvidence = async (
  root: string,
  before: EvidenceLedger,
  after: EvidenceLedger,
  observed: Observed,
): Promise<E.Either<ContextError, void>> => {
  if (before === after || observed.head === 'none') return E.right(undefined);
  for (const claim of after) {
    const known = before.find((entry) => entry.claim === claim.claim);
    if (known !== undefined && sameEvidence(known, claim)) continue;
    for (const evidence of claim.files) {
      const problem = await evidenceProblem(root, observed, evidence);
      if (problem !== undefined)
        return E.left({
          code: 'invalid',
          message: `claim refused: "${claim.claim.length > 60 ? `${claim.claim.slice(0, 57)}...` : claim.claim}": ${problem}`,
        });
    }
  }
  return E.right(undefined);
};

/**
 * How many lines each evidence file of the ledger has now, as far as its ranges need counting
 * (a file is read no further than its longest range, and not at all when it is missing): what
 * a bundle re-checks every range against, since a teammate may have shrunk the file since the
 * claim was recorded. A file that cannot be read is left out (taken to reach its ranges).
 */
export const evidenceLineCounts = async (
  root: string,
  context: SharedContext,
  observed: Observed,
  missing: ReadonlyArray<string>,
): Promise<ReadonlyMap<string, number>> => {
  const needed = new Map<string, number>();
  for (const claim of context.evidenceLedger)
    for (const file of claim.files) {
      const range = parseLineRange(file.lines);
      if (E.isRight(range) && !missing.includes(file.path))
        needed.set(file.path, Math.max(needed.get(file.path) ?? 0, range.right.end));
    }
  const counts = new Map<string, number>();
  for (const [file, end] of needed) {
    const entry = observed.index.get(file);
    if (observed.head !== 'none' && submoduleOf(observed, file) === undefined && entry === undefined) continue;
    const count =
      entry?.skipWorktree === true
        ? E.map(linesIn)(await readBlob(root, entry.blob, LINE_COUNT_MAX_BYTES))
        : await countLinesOnDisk(root, file, end);
    if (E.isRight(count)) counts.set(file, count.right);
  }
  return counts;
};
