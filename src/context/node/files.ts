/**
 * The context shell's own file operations: bounded reads that never wait on a FIFO, moving a
 * broken file aside to a timestamped backup, the check that keeps every path the shell touches
 * inside the repository, and how long a writer waits for the lock. The writes themselves, the
 * lock and the folder go through the Node plumbing every shell shares (`src/node/`).
 */
import type { Stats } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { isWithin } from '../../node/directory.js';
import { fileErrorCode as errorCode, ioFailure as ioError } from '../../node/fileFailure.js';
import type { LockSettings } from '../../node/lock.js';
import type { ContextError } from '../model.js';

/** A size in bytes for people: `5 MiB`, `640 KiB`, `12 bytes`. */
export const formatBytes = (bytes: number): string =>
  bytes >= 1024 * 1024
    ? `${Number((bytes / (1024 * 1024)).toFixed(1))} MiB`
    : bytes >= 1024
      ? `${Number((bytes / 1024).toFixed(1))} KiB`
      : `${bytes} bytes`;

/**
 * Runs `work` on `file` opened for reading, only when it is a regular file: opening does not
 * block (a FIFO returns at once instead of waiting for a writer), and anything else (a FIFO, a
 * device, a folder) is refused before a byte is read. `missing` is what a file that does not
 * exist gives.
 */
const withRegularFile = async <T>(
  file: string,
  missing: () => E.Either<ContextError, T>,
  work: (handle: fs.FileHandle, size: number) => Promise<E.Either<ContextError, T>>,
): Promise<E.Either<ContextError, T>> => {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (error) {
    return errorCode(error) === 'ENOENT' ? missing() : E.left(ioError(`cannot read ${file}`, error));
  }
  try {
    const stat = await handle.stat();
    return stat.isFile()
      ? await work(handle, stat.size)
      : E.left({
          code: 'unsafe_path',
          message: `is ${describeFileType(stat)}, not a regular file: refusing to read it`,
        });
  } catch (error) {
    return E.left(ioError(`cannot read ${file}`, error));
  } finally {
    await handle.close().catch(() => undefined);
  }
};

const tooLargeFor = (maxBytes: number): ContextError => ({
  code: 'too_large',
  message: `is larger than ${formatBytes(maxBytes)}, the most it may hold`,
});

/**
 * The text of `file`, at most `maxBytes` of it, or undefined when there is no such file. A
 * longer file is refused after reading `maxBytes + 1` bytes, so no read costs more than its
 * bound; a FIFO or a device is refused unread.
 */
export const readTextIfExists = (
  file: string,
  maxBytes: number,
  /** Return the first `maxBytes` of a longer file instead of refusing it. */
  headOnly = false,
): Promise<E.Either<ContextError, string | undefined>> =>
  withRegularFile(
    file,
    () => E.right(undefined),
    async (handle) => {
      const buffer = Buffer.alloc(Math.min(maxBytes + 1, 64 * 1024));
      const chunks: Buffer[] = [];
      let total = 0;
      for (;;) {
        const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, maxBytes + 1 - total), null);
        if (bytesRead === 0) break;
        chunks.push(Buffer.from(buffer.subarray(0, bytesRead)));
        total += bytesRead;
        if (total > maxBytes && headOnly) return E.right(Buffer.concat(chunks, total).toString('utf8', 0, maxBytes));
        if (total > maxBytes) return E.left(tooLargeFor(maxBytes));
      }
      return E.right(Buffer.concat(chunks, total).toString('utf8'));
    },
  );

/** What a file system entry that is not a regular file is, for a message. */
export const describeFileType = (stat: Stats): string =>
  stat.isDirectory()
    ? 'a directory'
    : stat.isFIFO()
      ? 'a FIFO (named pipe)'
      : stat.isCharacterDevice()
        ? 'a character device'
        : stat.isBlockDevice()
          ? 'a block device'
          : stat.isSocket()
            ? 'a socket'
            : 'a special file';

/** The size of `file` in bytes; 0 when it cannot be read. */
export const fileSize = (file: string): Promise<number> =>
  fs.stat(file).then(
    (stat) => stat.size,
    () => 0,
  );

/** True when nothing is at `file` (not even a link); false when something is, or it cannot be told. */
export const isAbsent = (file: string): Promise<boolean> =>
  fs.lstat(file).then(
    () => false,
    (error: unknown) => errorCode(error) === 'ENOENT',
  );

/**
 * Checks that `relative` (a path under `root`, as its parts) and every folder on the way stay
 * inside the repository once symbolic links are resolved, and outside its `.git` directory. A
 * committed link may point anywhere the user can write; the shell refuses to follow it out,
 * naming the link. Parts that do not exist yet are fine: the shell creates them as real folders.
 */
export const confineToRoot = async (
  root: string,
  relative: ReadonlyArray<string>,
): Promise<E.Either<ContextError, void>> => {
  const realRoot = await fs.realpath(root).catch(() => path.resolve(root));
  const gitDirectory = path.join(realRoot, '.git');
  for (let i = 1; i <= relative.length; i += 1) {
    const shown = relative.slice(0, i).join('/');
    const part = path.join(root, ...relative.slice(0, i));
    const stat = await fs.lstat(part).catch((error: unknown) => error);
    if (!(stat instanceof Object && 'isSymbolicLink' in stat)) {
      if (errorCode(stat) === 'ENOENT') return E.right(undefined);
      return E.left(ioError(`cannot inspect ${shown}`, stat));
    }
    const resolved = await fs.realpath(part).catch((error: unknown) => error);
    const refuse = (where: string): E.Either<ContextError, void> =>
      E.left({
        code: 'unsafe_path',
        message: `${shown} is a symbolic link to ${where}: refusing to read or write through it (remove the link, or put a real file or folder inside the repository in its place)`,
      });
    if (typeof resolved !== 'string') {
      // A real file or folder gone since the lstat (another writer's lock, released) is as
      // absent as one never there; only a link whose target is missing is refused.
      if (!(stat as Stats).isSymbolicLink() && errorCode(resolved) === 'ENOENT') return E.right(undefined);
      return refuse('a missing target');
    }
    const real = resolved;
    if (!isWithin(realRoot, real)) return refuse(`${real}, outside the repository`);
    if (isWithin(gitDirectory, real)) return refuse("the repository's .git directory");
  }
  return E.right(undefined);
};

/**
 * The folder `relative` (under `root`) leads to, named from the real root with `/` as git
 * names paths: `data/context`, or `ctx` when `data/context` is a link to `../ctx` (a link
 * `confineToRoot` accepted, so it stays inside). A part not there yet is taken as named; `''`
 * when it leads to the repository root itself.
 */
export const resolvedRelative = async (root: string, relative: ReadonlyArray<string>): Promise<string> => {
  const realRoot = await fs.realpath(root).catch(() => path.resolve(root));
  let real = realRoot;
  for (const [i, part] of relative.entries()) {
    const next = await fs.realpath(path.join(real, part)).catch(() => undefined);
    if (next === undefined) {
      real = path.join(real, ...relative.slice(i));
      break;
    }
    real = next;
  }
  const named = path.relative(realRoot, real);
  if (named === '') return '';
  return named.startsWith('..') || path.isAbsolute(named) ? relative.join('/') : named.split(path.sep).join('/');
};

const exists = (file: string): Promise<boolean> =>
  fs.access(file).then(
    () => true,
    () => false,
  );

/** Moves a broken `file` aside to `FILE.<time>.corrupt` (never over an earlier backup) and returns the backup's path. */
export const moveAside = async (file: string, at: number): Promise<E.Either<ContextError, string>> => {
  const stamp = new Date(at).toISOString().replace(/[:.]/gu, '-');
  let backup = `${file}.${stamp}.corrupt`;
  for (let attempt = 1; (await exists(backup)) && attempt < 100; attempt += 1)
    backup = `${file}.${stamp}-${attempt}.corrupt`;
  try {
    await fs.rename(file, backup);
    return E.right(backup);
  } catch (error) {
    return E.left(ioError(`cannot move ${file} aside`, error));
  }
};

/** A lock not refreshed for this long belongs to a crashed holder and may be taken over. */
export const LOCK_STALE_MS = 10_000;

/** How long a writer waits for the lock on a small file: longer than a crashed holder's lock takes to turn stale. */
export const LOCK_WAIT_BASE_MS = 15_000;

/**
 * How much longer a writer waits per MiB of the file: every holder ahead of it reads, decodes
 * and rewrites the whole file, so the wait grows with the work (the measured cost per MiB is in
 * docs/context.md, from `npm run bench -- --only=context`).
 */
export const LOCK_WAIT_PER_MIB_MS = 3_000;

/** The lock wait for a file of `bytes`: the base, and more in proportion to the work each holder does. */
export const lockWaitFor = (bytes: number): number =>
  LOCK_WAIT_BASE_MS + Math.ceil(bytes / (1024 * 1024)) * LOCK_WAIT_PER_MIB_MS;

/** The lock settings of a context file of `bytes`, named `shown` in messages. */
export const contextLock = (bytes: number, shown: string): LockSettings => ({
  staleMs: LOCK_STALE_MS,
  waitMs: lockWaitFor(bytes),
  shown,
});

/**
 * Refuses `file` (an absolute path) unless it is a regular file of at most `maxBytes`, and,
 * when it lies inside the repository at `root`, one reached without a link out of it: a
 * committed link to `/dev/zero`, a FIFO or a folder is named at once, never read or waited on.
 * Opening does not block, so a FIFO is refused without waiting for a writer.
 */
export const checkRegularFile = async (
  file: string,
  root: string,
  maxBytes: number,
): Promise<E.Either<ContextError, void>> => {
  if (isWithin(root, file)) {
    const confined = await confineToRoot(root, path.relative(root, file).split(path.sep));
    if (E.isLeft(confined)) return confined;
  }
  return withRegularFile(
    file,
    () => E.left({ code: 'io', message: 'cannot read it: no such file or directory' }),
    async (_, size) => (size <= maxBytes ? E.right(undefined) : E.left(tooLargeFor(maxBytes))),
  );
};
