/**
 * Writing the settings files of one `init` run together. Each file's new text goes first to a
 * temporary file beside it, and only once every one is written and flushed are they renamed
 * over the files, one after another: a failure before the renames (a full disk, a file size
 * limit) leaves every file as it was, and this run's temporary files and the folders it made are
 * removed. A rename rarely fails after the writes went through (the folder changed under the
 * run, the lock was lost meanwhile): then the line names the files already written.
 */
import {
  closeSync,
  constants,
  fchmodSync,
  fdatasyncSync,
  mkdirSync,
  openSync,
  renameSync,
  rmdirSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { basename, dirname } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describeFileFailure, fileErrorCode } from '../../node/fileFailure.js';
import { removeStaleTemporaries, temporaryName } from '../../node/atomicWrite.js';
import { isOutsideFailure } from '../boundary.js';

/** One file to write whole. */
export interface FileToWrite {
  /** As messages name it: relative to the project. */
  readonly path: string;
  readonly absolute: string;
  readonly text: string;
  /** The permission bits of the file it replaces; none for a new file. */
  readonly mode?: number;
}

/** What a run made that is not in place yet, removed when it does not go through. */
interface Made {
  /** The temporary files this process created, and has not renamed yet. */
  readonly temporaries: Set<string>;
  /** The folders it created, deepest last. */
  readonly folders: string[];
}

/** The mode of a new settings file, narrowed by the umask as any file a program creates. */
const NEW_FILE_MODE = 0o644;

/** Names tried for a temporary file before giving up: one is taken only by a clash of random names. */
const ATTEMPTS = 5;

/** Writes all of `bytes` (a write may take fewer than asked). */
const writeAll = (fd: number, bytes: Buffer): void => {
  for (let written = 0; written < bytes.length;) written += writeSync(fd, bytes, written, bytes.length - written);
};

/**
 * Creates a temporary file beside `absolute`, exclusively (never through a link, never someone
 * else's file), under a name with this process's id and random bits; another name when one is
 * taken. Throws what the system does.
 */
const createTemporary = (absolute: string, made: Made): { readonly fd: number; readonly temporary: string } => {
  for (let attempt = 1; ; attempt += 1) {
    const temporary = temporaryName(absolute);
    try {
      const fd = openSync(
        temporary,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0),
        NEW_FILE_MODE,
      );
      made.temporaries.add(temporary);
      return { fd, temporary };
    } catch (error) {
      if (fileErrorCode(error) !== 'EEXIST' || attempt === ATTEMPTS) throw error;
    }
  }
};

/** Makes the folder of `file` when it is not there yet (one level: the project is there), noting it as made. */
const makeFolder = (file: FileToWrite, made: Made): E.Either<string, void> => {
  const folder = dirname(file.absolute);
  try {
    mkdirSync(folder);
    made.folders.push(folder);
  } catch (error) {
    if (!isOutsideFailure(error)) throw error;
    if (error.code !== 'EEXIST') return E.left(`cannot create ${dirname(file.path)}: ${describeFileFailure(error)}`);
  }
  return E.right(undefined);
};

/**
 * Writes the new text of `file` into a temporary file beside it, flushed, with the permission
 * bits of the file it replaces: those given to `open` are narrowed by the umask (0664 would come
 * out 0644), so they are set on the open file. Right: the temporary file's path.
 */
const stage = (file: FileToWrite, made: Made): E.Either<string, string> => {
  const folder = makeFolder(file, made);
  if (E.isLeft(folder)) return folder;
  try {
    const { fd, temporary } = createTemporary(file.absolute, made);
    try {
      if (file.mode !== undefined) fchmodSync(fd, file.mode);
      writeAll(fd, Buffer.from(file.text, 'utf8'));
      fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
    return E.right(temporary);
  } catch (error) {
    if (!isOutsideFailure(error)) throw error;
    return E.left(`cannot write ${file.path}: ${describeFileFailure(error)}`);
  }
};

/** Removes what a run made and did not put in place: its temporary files, then the folders it made that stayed empty. Best effort. */
const removeMade = (made: Made): void => {
  for (const temporary of made.temporaries)
    try {
      rmSync(temporary, { force: true });
    } catch (error) {
      if (!isOutsideFailure(error)) throw error;
    }
  for (const folder of [...made.folders].reverse())
    try {
      rmdirSync(folder);
    } catch (error) {
      // A folder that holds a file written before the failure stays, with it.
      if (!isOutsideFailure(error)) throw error;
    }
};

/** Renames a temporary file over the file it holds the new text of. */
const renameInto = (temporary: string, file: FileToWrite): E.Either<string, void> => {
  try {
    renameSync(temporary, file.absolute);
    return E.right(undefined);
  } catch (error) {
    if (!isOutsideFailure(error)) throw error;
    return E.left(`cannot write ${file.path}: ${describeFileFailure(error)}`);
  }
};

/**
 * Removes the temporary files that runs killed halfway left beside `files` (`FILE.PID.STAMP.tmp`,
 * which `git add -A` would commit), once older than the lock's stale time `staleMs` at `now`: a
 * live run holds the lock while its own are there. Never a link, nor through one: call it with
 * files whose folders were checked, holding the lock. Best effort.
 */
export const removeStaleStaged = (files: ReadonlyArray<FileToWrite>, now: number, staleMs: number): void => {
  for (const file of files) removeStaleTemporaries(dirname(file.absolute), [basename(file.absolute)], now, staleMs);
};

/** How a failure's line ends: nothing was written, or these files were. */
const whatWasWritten = (written: ReadonlyArray<string>): string =>
  written.length === 0
    ? ' (nothing was written)'
    : ` (${written.join(' and ')} ${written.length === 1 ? 'was' : 'were'} written already, the rest not: run init again once this is fixed)`;

/**
 * Writes `files` together (see above). `stillSafe` is asked before each rename, not once, so
 * that a run whose lock was lost (stopped between two renames past its stale time) renames
 * nothing more over another run's files; its Left is the line, followed by the files already
 * written when there are some. Left: one line saying what failed, and what was written.
 */
export const writeTogether = (
  files: ReadonlyArray<FileToWrite>,
  stillSafe: () => E.Either<string, unknown>,
): E.Either<string, void> => {
  const made: Made = { temporaries: new Set(), folders: [] };
  const staged: Array<readonly [FileToWrite, string]> = [];
  for (const file of files) {
    const temporary = stage(file, made);
    if (E.isLeft(temporary)) {
      removeMade(made);
      return E.left(`${temporary.left}${whatWasWritten([])}`);
    }
    staged.push([file, temporary.right]);
  }
  const written: string[] = [];
  for (const [file, temporary] of staged) {
    const safe = stillSafe();
    const renamed = E.isLeft(safe) ? safe : renameInto(temporary, file);
    if (E.isLeft(renamed)) {
      removeMade(made);
      return E.left(written.length === 0 && E.isLeft(safe) ? safe.left : `${renamed.left}${whatWasWritten(written)}`);
    }
    made.temporaries.delete(temporary);
    written.push(file.path);
  }
  return E.right(undefined);
};
