/**
 * Writing a file whole or not at all, the one way every shell does it: the text goes to a
 * temporary file beside it, created exclusively under an unpredictable name and never through a
 * link (so nothing planted in the folder can catch the write), is flushed to disk, and replaces
 * the file by a rename, which is atomic; the folder's entry is flushed after it. A crash at any
 * point leaves the old file or the new one, never a mix, and at worst a temporary file that
 * `removeStaleTemporaries` clears later.
 *
 * The calls are synchronous: each is one short system call on a local file, and a synchronous
 * call costs no round trip through libuv's thread pool.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  lstatSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import type { Failure } from '../base/failure.js';
import { fileErrorCode, ioFailure } from './fileFailure.js';

/** How a write is made. */
export interface AtomicWriteOptions<F> {
  /** Asked just before the rename (a write whose lock was lost must not land); its failure is returned. */
  readonly stillSafe?: () => E.Either<F, true>;
  /** Flush the file and its folder to disk (default true); a cache rebuilt from elsewhere may skip it. */
  readonly flush?: boolean;
  /** The new file's mode (default 0o644). */
  readonly mode?: number;
}

/** Opening never follows a link: a hostile repository could point one anywhere. */
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;

/** A temporary file's name beside `file`: `FILE.PID.STAMP.tmp`, with random bits in the stamp so no one can guess it. */
export const temporaryName = (file: string): string =>
  `${file}.${process.pid}.${Date.now().toString(36)}${randomBytes(6).toString('hex')}.tmp`;

/**
 * The temporary files `writeFileAtomic` makes, by what follows `FILE.` (`PID.STAMP.tmp`): what a
 * killed writer may leave behind. Matched whole, so that a file of another name that merely
 * starts with `FILE.` (a session `{id}.jsonl.hooks.x` beside `{id}.jsonl.hooks`) is never one.
 */
export const TEMPORARY_SHAPE = /^\d+\.[0-9a-z]+\.tmp$/u;

/** Writes all of `bytes` (a write may take fewer than asked). */
const writeAll = (fd: number, bytes: Buffer): void => {
  for (let written = 0; written < bytes.length;) written += writeSync(fd, bytes, written, bytes.length - written);
};

/**
 * Appends all of `bytes` to `fd` (opened to append), or none: the bytes a write refused part way
 * (a full disk, a file size limit) left are cut off again. Left there, they would be a torn line
 * the caller was told failed: in a log, one the next writer must first set aside, in more space
 * than the line it came to append; in a user's own file, a line cut short for good (a rule of a
 * `.gitignore` cut to `*`). Call it holding the lock: the end of the file is then this call's own.
 */
export const appendWhole = (fd: number, bytes: Buffer): void => {
  let written = 0;
  try {
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
  } catch (error) {
    if (written > 0)
      try {
        ftruncateSync(fd, fstatSync(fd).size - written);
      } catch {
        // Left as a torn line: a log's next writer sets it aside.
      }
    throw error;
  }
};

/** Flushes a folder's entries (a rename) to disk; platforms that cannot open a folder skip it. */
export const syncDirectory = (directory: string): void => {
  let fd: number;
  try {
    fd = openSync(directory, constants.O_RDONLY);
  } catch {
    // Windows cannot open a folder; the rename itself is still atomic there.
    return;
  }
  try {
    fsyncSync(fd);
  } catch {
    // Some file systems refuse to flush a folder; the rename itself is still atomic there.
  } finally {
    closeSync(fd);
  }
};

/**
 * Writes `file` whole or not at all (see above). `stillSafe` is asked just before the rename;
 * when it fails, the temporary file is removed and its failure returned.
 */
export const writeFileAtomic = <F = never>(
  file: string,
  text: string | Buffer,
  options: AtomicWriteOptions<F> = {},
): E.Either<F | Failure<'io'>, void> => {
  const temporary = temporaryName(file);
  const flush = options.flush ?? true;
  try {
    const fd = openSync(
      temporary,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NO_FOLLOW,
      options.mode ?? 0o644,
    );
    try {
      writeAll(fd, typeof text === 'string' ? Buffer.from(text, 'utf8') : text);
      if (flush) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    const safe = options.stillSafe?.() ?? E.right(true);
    if (E.isLeft(safe)) {
      rmSync(temporary, { force: true });
      return safe;
    }
    renameSync(temporary, file);
    if (flush) syncDirectory(dirname(file));
    return E.right(undefined);
  } catch (error) {
    try {
      rmSync(temporary, { force: true });
    } catch {
      // Left for removeStaleTemporaries.
    }
    return E.left(ioFailure(`cannot write ${file}`, error));
  }
};

/**
 * Writes `file` only when there is nothing at its name yet (a user's own version is kept);
 * true when it wrote. `what` says what failed (default `cannot write FILE`). A write that fails
 * once the file is made (a full disk, a file size limit) removes it: left empty or cut short, it
 * would pass for the user's own version, and every later call would keep it.
 */
export const writeFileIfMissing = (
  file: string,
  text: string,
  what = `cannot write ${file}`,
): E.Either<Failure<'io'>, boolean> => {
  let fd: number;
  try {
    fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NO_FOLLOW, 0o666);
  } catch (error) {
    return fileErrorCode(error) === 'EEXIST' ? E.right(false) : E.left(ioFailure(what, error));
  }
  try {
    try {
      writeAll(fd, Buffer.from(text, 'utf8'));
    } finally {
      closeSync(fd);
    }
    return E.right(true);
  } catch (error) {
    try {
      // Made exclusively above: the file is this call's own.
      rmSync(file, { force: true });
    } catch {
      // Nothing more to do: the failure to report is the write's.
    }
    return E.left(ioFailure(what, error));
  }
};

/**
 * Removes the temporary files that writers killed mid-write left next to `names` in
 * `directory`: the regular files named `NAME.` and what one of `shapes` matches whole (by
 * default `TEMPORARY_SHAPE`), older than `olderThanMs` (a stale lock's age: a live writer renames
 * its file within milliseconds, and holds the lock meanwhile). A link is never followed nor
 * removed. Call it holding the lock; best effort.
 */
export const removeStaleTemporaries = (
  directory: string,
  names: ReadonlyArray<string>,
  now: number,
  olderThanMs: number,
  shapes: ReadonlyArray<RegExp> = [TEMPORARY_SHAPE],
): void => {
  let entries: string[];
  try {
    entries = readdirSync(directory);
  } catch {
    // No folder, or one that cannot be listed: nothing to clear.
    return;
  }
  for (const entry of entries) {
    const isLeftover = (name: string): boolean =>
      entry.startsWith(`${name}.`) && shapes.some((shape) => shape.test(entry.slice(name.length + 1)));
    if (!names.some(isLeftover)) continue;
    const file = join(directory, entry);
    try {
      const stat = lstatSync(file, { throwIfNoEntry: false });
      if (stat?.isFile() === true && now - stat.mtimeMs > olderThanMs) rmSync(file, { force: true });
    } catch {
      // Best effort: the next writer tries again.
    }
  }
};
