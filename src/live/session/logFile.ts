/**
 * The file side of a session log: reading what was appended since an offset, appending whole
 * lines with fsync, setting a torn last line aside, and the cross-process lock that serializes
 * writers (`node/lock.ts`, shared with the shared context). A log is never rewritten: a line,
 * once complete, stays where it is.
 *
 * A line counts once its line break is written: `\n`, `\r\n` or a lone `\r`, as every history's
 * lines break (`fact-tracker replay` reads a log as one). Bytes after the last line break are
 * either a line another process is writing right now or what a killed writer left; only a
 * writer holding the lock can tell the two apart (nobody else is writing then), so only it sets
 * such a tail aside.
 */
import {
  closeSync,
  constants,
  fdatasyncSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readdirSync,
  readSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { encodingOf } from '../../core/history/encoding.js';
import { HISTORY_LINE_LIMITS } from '../../core/history/lines.js';
import { appendWhole, syncDirectory, writeFileIfMissing } from '../../node/atomicWrite.js';
import { prepareDirectory as prepareFolder } from '../../node/directory.js';
import { fileErrorCode, ioFailure } from '../../node/fileFailure.js';
import { withFileLock } from '../../node/lock.js';
import type { SessionError, SetAsideLine } from './model.js';

// The calls below are synchronous on purpose: each is one short system call on a local file,
// and a synchronous call costs no round trip through libuv's thread pool. On a loaded machine
// those round trips, a dozen per append, cost more than the appends themselves.

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
/** Where a line of a log (or of a hooks file) ends, as a history's lines end: `\n`, `\r\n` or a lone `\r`. */
export const LOG_LINE_BREAK = /\r\n|\n|\r/u;
/** Opening a log through a symbolic link is refused: a hostile repository could point one anywhere. */
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;

const codeOf = fileErrorCode;

/** A file system failure about `what`, as one line. */
export const ioError: (what: string, error: unknown) => SessionError = ioFailure;

/** What a read from an offset found. */
export interface LogRead {
  /** False when there is no log file yet. */
  readonly exists: boolean;
  /** The file's identity (device and inode): a log replaced behind the reader's back has another. */
  readonly identity: string;
  readonly size: number;
  /** The complete lines after the offset, each ended by its line break. */
  readonly text: string;
  /** The bytes `text` decodes, as the file holds them (a byte that is not UTF-8 included). */
  readonly bytes: Buffer;
  /**
   * Bytes read past the offset: those of `text`, after the `\n` that opens them when it ends a
   * `\r\n` whose `\r` ended the last read (the rest of that line's break, not a line of its own).
   */
  readonly consumed: number;
  /**
   * The `consumed` bytes themselves, as the file holds them: what a reader that keeps a hash of
   * the bytes it read (`snapshot.ts`) takes in.
   */
  readonly consumedBytes: Buffer;
  /** Bytes after the last line break. */
  readonly tail: number;
  /** False when the bytes before the offset are not the `before` the reader gave: another log stands there now. */
  readonly continues: boolean;
  /**
   * The last bytes (at most `CONTINUITY_BYTES`) of the complete lines up to `offset + consumed`,
   * as far as known: the next read's `before`.
   */
  readonly last: Buffer;
  /**
   * True when the read began at the file's first byte and its first bytes are UTF-16's, a mark or
   * text (`encodingOf`): its lines are not UTF-8, and `text` is not what they say.
   */
  readonly utf16: boolean;
}

/**
 * How many bytes before a reader's offset it checks before reading on: a log deleted and made
 * anew often gets the freed inode back, and may have grown past the old offset by then, so the
 * file's identity and size alone cannot tell it from the log the reader was reading.
 */
export const CONTINUITY_BYTES = 64;

const NO_BYTES = Buffer.alloc(0);

/** The last `CONTINUITY_BYTES` of `before` followed by `added`. */
export const lastBytes = (before: Buffer, added: Buffer): Buffer =>
  added.length >= CONTINUITY_BYTES
    ? Buffer.from(added.subarray(added.length - CONTINUITY_BYTES))
    : Buffer.concat([before, added]).subarray(-CONTINUITY_BYTES);

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

/** Opened to write (append or cut short), not only to read. */
const WRITING = constants.O_WRONLY | constants.O_RDWR;

/**
 * Runs `work` on `file` opened with `flags`, closing it whatever happens. Only a regular file (or
 * a directory, to flush its entries) is worked on: a symbolic link is refused by the open
 * itself (ELOOP), and a FIFO, socket or device, opened without waiting, is refused (ENOTREG)
 * before `work` reads or writes it. A file with another name (a hard link, which may be any
 * file outside the folder) is never written (EHARDLINK): the open alone changes none of it.
 */
export const withFile = <T>(file: string, flags: number, work: (fd: number) => T): T => {
  const fd = openSync(file, flags | NO_FOLLOW | NON_BLOCKING, 0o644);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() && !stat.isDirectory())
      throw Object.assign(new Error(`${file} is not a regular file`), { code: 'ENOTREG' });
    if ((flags & WRITING) !== 0 && stat.isFile() && stat.nlink > 1)
      throw Object.assign(new Error(`${file} has other names`), { code: 'EHARDLINK' });
    return work(fd);
  } finally {
    closeSync(fd);
  }
};

/**
 * Reads the complete lines appended after `offset` (a line boundary), where the file holds
 * `before` (the last bytes a reader saw, see `LogRead.last`) just before `offset`; in the same
 * read, so checking costs no more calls. A last line ended by a lone `\r` is complete: a `\n`
 * written after it later finishes its break, as it does for `fact-tracker replay`.
 */
export const readLog = async (
  file: string,
  offset: number,
  before: Buffer = NO_BYTES,
): Promise<E.Either<SessionError, LogRead>> => {
  try {
    return withFile(file, constants.O_RDONLY, (fd): E.Either<SessionError, LogRead> => {
      const stat = fstatSync(fd);
      if (!stat.isFile()) return E.left({ code: 'io', message: `cannot read ${file}: it is not a regular file` });
      const identity = `${stat.dev}:${stat.ino}`;
      // At least the byte before the offset, in the same read: whether it is a `\r` the line ended at.
      const start = Math.max(0, offset - Math.max(before.length, 1));
      const read = stat.size < offset ? NO_BYTES : readFully(fd, start, stat.size - start);
      const seen = read.subarray(0, offset - start);
      const checked = seen.subarray(Math.max(0, seen.length - before.length));
      const continues =
        seen.length === offset - start && checked.equals(before.subarray(before.length - checked.length));
      const bytes = read.subarray(offset - start);
      const consumed = Math.max(bytes.lastIndexOf(NEWLINE), bytes.lastIndexOf(CARRIAGE_RETURN)) + 1;
      const breakRest = seen.at(-1) === CARRIAGE_RETURN && bytes[0] === NEWLINE ? 1 : 0;
      // A line break byte never occurs inside a multi-byte UTF-8 sequence: the cut is always clean.
      const complete = bytes.subarray(breakRest, consumed);
      // Decoded when first asked for: an export wants the bytes only, and a log over V8's longest
      // string (512 MiB) can still be exported.
      let text: string | undefined;
      return E.right({
        exists: true,
        identity,
        size: stat.size < offset ? stat.size : offset + bytes.length,
        get text() {
          return (text ??= complete.toString('utf8'));
        },
        bytes: complete,
        consumed,
        consumedBytes: bytes.subarray(0, consumed),
        tail: bytes.length - consumed,
        continues,
        last: consumed === 0 ? before : lastBytes(before, bytes.subarray(0, consumed)),
        utf16: start === 0 && encodingOf(read) !== 'utf-8',
      });
    });
  } catch (error) {
    return codeOf(error) === 'ENOENT'
      ? E.right({
          exists: false,
          identity: '',
          size: 0,
          text: '',
          bytes: NO_BYTES,
          consumed: 0,
          consumedBytes: NO_BYTES,
          tail: 0,
          continues: offset === 0,
          last: NO_BYTES,
          utf16: false,
        })
      : E.left(ioError(`cannot read ${file}`, error));
  }
};

/** Bytes of a log decoded at a time (cut after a line break): a log is never one string, which the engine caps at 512 MiB. */
const DECODED_PIECE_BYTES = 1024 * 1024;
/**
 * The most bytes of one line decoded: a UTF-16 unit takes at most 3 bytes of UTF-8, so these give
 * more than the `HISTORY_LINE_LIMITS.length` characters a line may hold, and a line longer than
 * that is kept to its first `length + 1`, as a history's reader keeps it: rejected as `too_large`.
 */
const MAX_DECODED_LINE_BYTES = 3 * (HISTORY_LINE_LIMITS.length + 1) + 4;
const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * The lines of `bytes`, complete lines as `LogRead.bytes` holds them, without their breaks, as a
 * history's reader splits them: `\n`, `\r\n` or a lone `\r`, a byte-order mark dropped when they
 * open the file (`atStart`). Decoded a piece at a time, so a log of any size is read as replay
 * reads it (a line break byte never occurs inside a multi-byte UTF-8 sequence: a cut is clean).
 */
export const logLines = (bytes: Buffer, atStart: boolean): string[] => {
  const lines: string[] = [];
  const first = atStart && bytes.subarray(0, UTF8_BOM.length).equals(UTF8_BOM) ? UTF8_BOM.length : 0;
  let piece = first;
  const decode = (end: number): void => {
    if (end === piece) return;
    const pieces = bytes.toString('utf8', piece, end).split(LOG_LINE_BREAK);
    // The piece ends with a line break: the last element is the empty rest after it.
    for (let i = 0; i < pieces.length - 1; i += 1) lines.push(pieces[i]!);
    piece = end;
  };
  let nextLf = bytes.indexOf(NEWLINE, first);
  let nextCr = bytes.indexOf(CARRIAGE_RETURN, first);
  let start = first;
  while (start < bytes.length) {
    if (nextLf !== -1 && nextLf < start) nextLf = bytes.indexOf(NEWLINE, start);
    if (nextCr !== -1 && nextCr < start) nextCr = bytes.indexOf(CARRIAGE_RETURN, start);
    const end = nextCr === -1 || (nextLf !== -1 && nextLf < nextCr) ? nextLf : nextCr;
    // Bytes after the last line break are no complete line.
    if (end === -1) break;
    const next = end + (bytes[end] === CARRIAGE_RETURN && bytes[end + 1] === NEWLINE ? 2 : 1);
    if (end - start > MAX_DECODED_LINE_BYTES) {
      decode(start);
      const kept = bytes.toString('utf8', start, start + MAX_DECODED_LINE_BYTES);
      lines.push(kept.slice(0, HISTORY_LINE_LIMITS.length + 1));
      piece = next;
    } else if (next - piece >= DECODED_PIECE_BYTES) decode(next);
    start = next;
  }
  decode(start);
  return lines;
};

/** What an append wrote, and to which file. */
export interface Appended {
  readonly bytes: number;
  /** Its last bytes (at most `CONTINUITY_BYTES`). */
  readonly end: Buffer;
  /** The file's identity (device and inode). */
  readonly identity: string;
}

/**
 * Appends `text` (whole lines) to `file`, all of it or none (see `appendWhole`: call it holding
 * the lock), without waiting for the disk: `flushLog` does that, after the lock is released, so
 * writers do not queue behind each other's flushes. A flush writes out everything appended to
 * the file before it, whoever appended it, so a line whose writer has not flushed yet is flushed
 * by any later writer's flush: the log on disk is always a prefix of what was appended.
 */
export const appendToLog = async (file: string, text: string): Promise<E.Either<SessionError, Appended>> => {
  const bytes = Buffer.from(text, 'utf8');
  try {
    const identity = withFile(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, (fd) => {
      appendWhole(fd, bytes);
      return identityOf(fd);
    });
    return E.right({ bytes: bytes.length, end: lastBytes(NO_BYTES, bytes), identity });
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
    // Opened to write, as it is to cut the tail off: a log that may not be written (a hard link)
    // is refused before anything is set aside.
    const tail = withFile(file, constants.O_RDWR, (fd) => readFully(fd, end, fstatSync(fd).size - end));
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

/**
 * Runs `work` holding the lock of `file` (a `FILE.lock` directory, `node/lock.ts`), so writers
 * in every process take turns; a writer tries for a little longer than an abandoned lock takes
 * to count as stale. `work` gets a check that fails once the lock was lost (another process
 * judged it abandoned), to be asked just before writing.
 */
export const withLogLock = <T>(
  file: string,
  settings: LockSettings,
  work: (stillLocked: () => E.Either<SessionError, true>) => Promise<E.Either<SessionError, T>>,
): Promise<E.Either<SessionError, T>> =>
  withFileLock(file, { staleMs: settings.staleMs, waitMs: settings.staleMs * 2 + 5_000 }, work);

/**
 * Creates the sessions folder when `create` (with a `.gitignore` that keeps the logs out of
 * git, written only into a folder made now or still empty: a folder that holds anything else,
 * and the `project` named as the sessions folder, even while it is empty, are not hidden from
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
  project?: string,
): Promise<E.Either<SessionError, void>> => {
  const prepared = prepareFolder(directory, {
    ...(within === undefined ? {} : { within }),
    create,
    label: 'the sessions folder',
  });
  if (E.isLeft(prepared)) return prepared;
  if (!create || directory === project) return E.right(undefined);
  let ours = prepared.right.created.includes(directory);
  try {
    ours ||= readdirSync(directory).length === 0;
  } catch (error) {
    return E.left(ioFailure(`cannot prepare the sessions folder ${directory}`, error));
  }
  if (!ours) return E.right(undefined);
  return E.map(() => undefined)(
    writeFileIfMissing(
      join(directory, '.gitignore'),
      '# Session logs of fact-tracker: local to this machine.\n*\n',
      `cannot prepare the sessions folder ${directory}`,
    ),
  );
};
