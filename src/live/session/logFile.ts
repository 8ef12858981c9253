/**
 * The file side of a session log: reading what was appended since an offset, appending whole
 * lines with fsync, setting a torn last line aside, and the cross-process lock (proper-lockfile)
 * that serializes writers. A log is never rewritten: a line, once complete, stays where it is.
 *
 * A line counts once its newline is written. Bytes after the last newline are either a line
 * another process is writing right now or what a killed writer left; only a writer holding the
 * lock can tell the two apart (nobody else is writing then), so only it sets such a tail aside.
 */
import {
  closeSync,
  constants,
  fdatasyncSync,
  fstatSync,
  ftruncateSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  realpathSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import lockfile from 'proper-lockfile';
import { describeFileFailure, fileErrorCode } from '../../node/fileFailure.js';
import type { SessionError, SetAsideLine } from './model.js';

// The calls below are synchronous on purpose: each is one short system call on a local file,
// and a synchronous call costs no round trip through libuv's thread pool. On a loaded machine
// those round trips, a dozen per append, cost more than the appends themselves.

const NEWLINE = 0x0a;
/** Opening a log through a symbolic link is refused: a hostile repository could point one anywhere. */
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;

const codeOf = fileErrorCode;

/** A file system failure about `what`, as one line. */
export const ioError = (what: string, error: unknown): SessionError => ({
  code: 'io',
  message: `${what}: ${describeFileFailure(error)}`,
});

/** What a read from an offset found. */
export interface LogRead {
  /** False when there is no log file yet. */
  readonly exists: boolean;
  /** The file's identity (device and inode): a log replaced behind the reader's back has another. */
  readonly identity: string;
  readonly size: number;
  /** The complete lines after the offset, each ended by its newline. */
  readonly text: string;
  /** Bytes of `text`. */
  readonly consumed: number;
  /** Bytes after the last newline. */
  readonly tail: number;
}

const identityOf = (fd: number): string => {
  const stat = fstatSync(fd);
  return `${stat.dev}:${stat.ino}`;
};

/** Reads `length` bytes at `position`, or as many as the file holds there. */
export const readFully = (fd: number, position: number, length: number): Buffer => {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const read = readSync(fd, buffer, filled, length - filled, position + filled);
    if (read === 0) break;
    filled += read;
  }
  return buffer.subarray(0, filled);
};

/**
 * Opening never waits: a FIFO in a log's place would otherwise block the process until a writer
 * came, and SIGTERM would not end it.
 */
const NON_BLOCKING = constants.O_NONBLOCK ?? 0;

/**
 * Runs `work` on `file` opened with `flags`, closing it whatever happens. Only a regular file (or
 * a directory, to flush its entries) is worked on: a symbolic link is refused by the open
 * itself (ELOOP), and a FIFO, socket or device, opened without waiting, is refused (ENOTREG)
 * before `work` reads or writes it.
 */
export const withFile = <T>(file: string, flags: number, work: (fd: number) => T): T => {
  const fd = openSync(file, flags | NO_FOLLOW | NON_BLOCKING, 0o644);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() && !stat.isDirectory())
      throw Object.assign(new Error(`${file} is not a regular file`), { code: 'ENOTREG' });
    return work(fd);
  } finally {
    closeSync(fd);
  }
};

/** Reads the complete lines appended after `offset` (a line boundary). */
export const readLog = async (file: string, offset: number): Promise<E.Either<SessionError, LogRead>> => {
  try {
    return withFile(file, constants.O_RDONLY, (fd): E.Either<SessionError, LogRead> => {
      const stat = fstatSync(fd);
      if (!stat.isFile()) return E.left({ code: 'io', message: `cannot read ${file}: it is not a regular file` });
      const identity = `${stat.dev}:${stat.ino}`;
      if (stat.size <= offset)
        return E.right({ exists: true, identity, size: stat.size, text: '', consumed: 0, tail: 0 });
      const bytes = readFully(fd, offset, stat.size - offset);
      const consumed = bytes.lastIndexOf(NEWLINE) + 1;
      // A newline byte never occurs inside a multi-byte UTF-8 sequence: the cut is always clean.
      return E.right({
        exists: true,
        identity,
        size: offset + bytes.length,
        text: bytes.subarray(0, consumed).toString('utf8'),
        consumed,
        tail: bytes.length - consumed,
      });
    });
  } catch (error) {
    return codeOf(error) === 'ENOENT'
      ? E.right({ exists: false, identity: '', size: 0, text: '', consumed: 0, tail: 0 })
      : E.left(ioError(`cannot read ${file}`, error));
  }
};

/** Flushes a directory entry (a new file) to disk; platforms that cannot open a directory skip it. */
const syncDirectory = (directory: string): void => {
  try {
    withFile(directory, constants.O_RDONLY, fdatasyncSync);
  } catch {
    // Windows cannot fsync a directory.
  }
};

/** Writes all of `bytes` (a write may take fewer than asked). */
const writeAll = (fd: number, bytes: Buffer): void => {
  for (let written = 0; written < bytes.length;) written += writeSync(fd, bytes, written, bytes.length - written);
};

/** What an append wrote, and to which file. */
export interface Appended {
  readonly bytes: number;
  /** The file's identity (device and inode). */
  readonly identity: string;
}

/**
 * Appends `text` (whole lines) to `file`, without waiting for the disk: `flushLog` does that,
 * after the lock is released, so writers do not queue behind each other's flushes. A flush
 * writes out everything appended to the file before it, whoever appended it, so a line whose
 * writer has not flushed yet is flushed by any later writer's flush: the log on disk is always
 * a prefix of what was appended.
 */
export const appendToLog = async (file: string, text: string): Promise<E.Either<SessionError, Appended>> => {
  const bytes = Buffer.from(text, 'utf8');
  try {
    const identity = withFile(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, (fd) => {
      writeAll(fd, bytes);
      return identityOf(fd);
    });
    return E.right({ bytes: bytes.length, identity });
  } catch (error) {
    return E.left(ioError(`cannot append to ${file}`, error));
  }
};

/** Flushes `file` to disk, and its directory entry too when the file is new (`created`). */
export const flushLog = (file: string, created: boolean): E.Either<SessionError, void> => {
  try {
    withFile(file, constants.O_RDONLY, fdatasyncSync);
    if (created) syncDirectory(dirname(file));
    return E.right(undefined);
  } catch (error) {
    return E.left(ioError(`appended to ${file}, but could not flush it to disk`, error));
  }
};

/**
 * Moves the bytes after `end` (the end of the last complete line) into `sideFile`, flushed, and
 * only then cuts them off the log. Call it holding the lock. A crash between the two steps
 * leaves the tail in both places, and the next writer sets it aside again: it is never lost.
 */
export const setAsideTail = async (
  file: string,
  sideFile: string,
  end: number,
  line: number,
  at: number,
): Promise<E.Either<SessionError, SetAsideLine>> => {
  try {
    const tail = withFile(file, constants.O_RDONLY, (fd) => readFully(fd, end, fstatSync(fd).size - end));
    const record = {
      setAsideAt: new Date(at).toISOString(),
      line,
      bytes: tail.length,
      text: tail.toString('utf8'),
      base64: tail.toString('base64'),
    };
    const side = pipe(
      await appendToLog(sideFile, `${JSON.stringify(record)}\n`),
      E.chain(() => flushLog(sideFile, true)),
    );
    if (E.isLeft(side)) return side;
    withFile(file, constants.O_WRONLY, (fd) => {
      ftruncateSync(fd, end);
      fdatasyncSync(fd);
    });
    return E.right({ line, bytes: tail.length, file: sideFile });
  } catch (error) {
    return E.left(ioError(`cannot set the torn last line of ${file} aside`, error));
  }
};

/** How long a writer waits for the lock, and when a dead holder's lock counts as abandoned. */
export interface LockSettings {
  /** A lock not refreshed for this long is taken over (proper-lockfile's `stale`, at least 2,000 ms). */
  readonly staleMs: number;
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The lock directory proper-lockfile makes for `file`. */
const lockPath = (file: string): string => `${file}.lock`;

/**
 * Takes the lock of `file`, retrying with short jittered pauses (a writer holds it for a
 * millisecond or two) for a little longer than an abandoned lock takes to count as stale.
 * A waiter looks at the lock before trying to take it: a failed attempt creates a directory
 * entry, and many waiters doing that at once slow the holder's own release down. (The attempt
 * itself is proper-lockfile's synchronous one: its retries would go through the thread pool.)
 */
const acquire = async (
  file: string,
  settings: LockSettings,
  onCompromised: (error: Error) => void,
): Promise<() => void> => {
  const deadline = Date.now() + settings.staleMs * 2 + 5_000;
  for (let attempt = 0; ; attempt += 1) {
    const held = statSync(lockPath(file), { throwIfNoEntry: false });
    if (held === undefined || held.mtimeMs < Date.now() - settings.staleMs)
      try {
        return lockfile.lockSync(file, { realpath: false, stale: settings.staleMs, onCompromised });
      } catch (error) {
        if (codeOf(error) !== 'ELOCKED') throw error;
      }
    if (Date.now() > deadline) throw Object.assign(new Error('the lock is held'), { code: 'ELOCKED' });
    await pause(Math.min(1 + attempt, 10) * (0.5 + Math.random()));
  }
};

/**
 * Runs `work` holding the lock of `file` (a `FILE.lock` directory), so writers in every process
 * take turns. `work` gets a check that fails once the lock was lost (another process judged it
 * abandoned), to be asked just before writing.
 */
export const withLogLock = async <T>(
  file: string,
  settings: LockSettings,
  work: (stillLocked: () => E.Either<SessionError, true>) => Promise<E.Either<SessionError, T>>,
): Promise<E.Either<SessionError, T>> => {
  let compromised: unknown;
  let release: () => void;
  try {
    release = await acquire(file, settings, (error) => {
      compromised = error;
    });
  } catch (error) {
    return E.left(ioError(`cannot lock ${file}`, error));
  }
  try {
    return await work(() =>
      compromised === undefined ? E.right(true) : E.left(ioError(`lost the lock of ${file}`, compromised)),
    );
  } finally {
    try {
      release();
    } catch {
      // A lock already lost or removed has nothing left to release.
    }
  }
};

/** True when `inner` is `outer` or inside it. */
const isWithin = (outer: string, inner: string): boolean => {
  const path = relative(outer, inner);
  return path === '' || (path !== '..' && !path.startsWith(`..${sep}`) && !isAbsolute(path));
};

/** The entry at `path` without following a link, or undefined when there is none. */
const entryAt = (path: string) => lstatSync(path, { throwIfNoEntry: false });

const refuseLink = (directory: string, within: string, link: string): SessionError => ({
  code: 'io',
  message: `the sessions folder ${directory} leads out of ${within} (through the symbolic link ${link}); refusing to write there`,
});

/**
 * Makes `directory` exist, one missing folder at a time from its deepest existing ancestor, and
 * checks each existing one on the way before anything is created below it. One `mkdir` per
 * missing folder and no more: Node's recursive `mkdir` loops forever where the parent refuses
 * new entries in an odd way (procfs answers ENOENT for a folder that is there).
 */
const makeFolders = (
  directory: string,
  within: string | undefined,
  check: (existing: string) => E.Either<SessionError, void>,
): E.Either<SessionError, void> => {
  const missing: string[] = [];
  let current = directory;
  for (;;) {
    const entry = entryAt(current);
    if (entry !== undefined) {
      const checked = check(current);
      if (E.isLeft(checked)) return checked;
      if (!entry.isDirectory() && !entry.isSymbolicLink())
        return E.left({
          code: 'io',
          message: `cannot prepare the sessions folder ${directory}: ${current} is not a folder`,
        });
      break;
    }
    const parent = dirname(current);
    if (parent === current || (within !== undefined && current === within)) break;
    missing.unshift(current);
    current = parent;
  }
  for (const folder of missing) {
    try {
      mkdirSync(folder);
    } catch (error) {
      if (codeOf(error) !== 'EEXIST') throw error;
    }
    // Made by us or by a process racing us: either way it must be a plain folder now.
    const made = entryAt(folder);
    if (made === undefined || made.isSymbolicLink() || !made.isDirectory())
      return E.left({
        code: 'io',
        message: `cannot prepare the sessions folder ${directory}: ${folder} is not a folder`,
      });
  }
  return E.right(undefined);
};

/**
 * Creates the sessions folder when `create` (with a `.gitignore` that keeps the logs out of
 * git) and, when `within` is given, checks that the folder is really inside it: a symbolic link
 * in a hostile repository must not send the logs elsewhere. Every folder on the way is checked
 * before anything is created below it, so a link out of `within` is refused before any folder
 * is made at its target. A folder that does not exist and is not to be created is fine: there
 * is nothing in it.
 */
export const prepareDirectory = async (
  directory: string,
  within: string | undefined,
  create: boolean,
): Promise<E.Either<SessionError, void>> => {
  try {
    const root = within === undefined ? undefined : realpathSync(within);
    // Each existing folder between `within` and the sessions folder: a link is fine while it stays inside.
    const stayInside = (existing: string): E.Either<SessionError, void> =>
      root === undefined || within === undefined || isWithin(root, realpathSync(existing))
        ? E.right(undefined)
        : E.left(refuseLink(directory, within, existing));
    if (within !== undefined && !isWithin(resolve(within), resolve(directory)))
      return E.left({
        code: 'io',
        message: `the sessions folder ${directory} is not inside ${within}; refusing to write there`,
      });
    if (within !== undefined) {
      // Checked from the top down: the first link out of `within` is the one named.
      const steps = relative(resolve(within), resolve(directory))
        .split(sep)
        .filter((part) => part !== '');
      let current = resolve(within);
      for (const step of steps) {
        current = join(current, step);
        if (entryAt(current) === undefined) break;
        const inside = stayInside(current);
        if (E.isLeft(inside)) return inside;
      }
    }
    if (create) {
      const made = makeFolders(directory, within === undefined ? undefined : resolve(within), stayInside);
      if (E.isLeft(made)) return made;
    } else if (!statSync(directory, { throwIfNoEntry: false })) return E.right(undefined);
    if (root !== undefined && within !== undefined && !isWithin(root, realpathSync(directory)))
      return E.left(refuseLink(directory, within, directory));
    if (create)
      writeIfMissing(join(directory, '.gitignore'), '# Session logs of fact-tracker: local to this machine.\n*\n');
    return E.right(undefined);
  } catch (error) {
    return E.left(ioError(`cannot prepare the sessions folder ${directory}`, error));
  }
};

/** Writes `file` unless it exists (a user's own version is kept). */
const writeIfMissing = (file: string, text: string): void => {
  try {
    writeFileSync(file, text, { flag: 'wx' });
  } catch (error) {
    if (codeOf(error) !== 'EEXIST') throw error;
  }
};
