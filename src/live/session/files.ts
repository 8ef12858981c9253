/**
 * The embedded default session store: one JSON Lines log per session under a folder
 * (`.fact-tracker/sessions` in the project), appended and flushed under a cross-process lock,
 * with the snapshot beside it. A log is a dispatch history, so `fact-tracker replay` reads it
 * as it is. The store remembers, per session and per follower (see `SessionFollower`), where in
 * the file the last line it read or wrote ends, so a reader only reads what was appended since.
 */
import { createHash, type Hash } from 'node:crypto';
import { accessSync, constants, type Dirent, existsSync, statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { internalFailure } from '../../base/failure.js';
import { readableFields } from '../../base/record.js';
import { parseSessionId } from './id.js';
import {
  appendToLog,
  flushLog,
  ioError,
  lastBytes,
  logLines,
  type LockSettings,
  type LogRead,
  prepareDirectory,
  readLog,
  setAsideTail,
  withLogLock,
} from './logFile.js';
import type { SessionError, SetAsideLine } from './model.js';
import { LOG_EXTENSION, lstatQuietly, removeSession, type RemovedSession } from './removal.js';
import { readSnapshot, readSnapshotAtMost, snapshotTail, writeSnapshot } from './snapshot.js';
import { followerMemory } from './follower.js';
import {
  type AppendResult,
  invalidSnapshot,
  parseLinesToAppend,
  parseStoredSnapshot,
  type SessionFollower,
  type SessionStore,
  type SessionStoreError,
  type StoredLine,
  type TailRead,
} from './store.js';

/** Where session logs live when nothing says otherwise, under the working directory. */
export const DEFAULT_SESSIONS_DIRECTORY = '.fact-tracker/sessions';
/** Appended to a log's name for the side file that keeps torn last lines. */
const SET_ASIDE_EXTENSION = '.set-aside';
/** A lock not refreshed for this long is taken over: its holder died. */
export const DEFAULT_LOCK_STALE_MS = 5_000;

/** Where the session logs are. */
export interface SessionsFolder {
  /** The folder of the logs (default `.fact-tracker/sessions` under `cwd`). */
  readonly directory?: string;
  /** The working directory (default: the process's). */
  readonly cwd?: string;
}

/** Options of `fileSessionStore`. */
export interface FileSessionStoreOptions extends SessionsFolder {
  /** When a dead writer's lock is taken over (default 5,000 ms; at least 2,000). */
  readonly lockStaleMs?: number;
  /** Epoch milliseconds now, for the record of a torn line set aside (default `Date.now`). */
  readonly clock?: () => number;
}

/** `options`, or none when they are none (null from an unset variable): options read null as none. */
/**
 * The options as given, each own field read once: options that are none read as none, and a
 * field whose getter (or Proxy trap) throws reads as not given, so no reading of them throws.
 */
const optionsOf = <T extends object>(options: T | undefined): Partial<T> =>
  typeof options === 'object' && options !== null ? (readableFields(options) as Partial<T>) : {};

/**
 * The sessions folder `options` name, and the folder it must stay inside (the default one must
 * stay in `cwd`), or the project it was named in (`cwd`, which it may be). A folder that is no
 * text (null from an unset variable) reads as none.
 */
export const resolveSessionsDirectory = (
  given: SessionsFolder = {},
): { readonly directory: string; readonly within?: string; readonly project?: string } => {
  const { cwd: givenCwd, directory } = optionsOf(given);
  // The process's working directory is read only when a path needs it: it may have been
  // deleted (Node throws then), and an absolute folder needs none.
  const cwd = typeof givenCwd === 'string' ? givenCwd : undefined;
  if (typeof directory === 'string')
    return cwd === undefined
      ? { directory: resolve(directory) }
      : { directory: resolve(cwd, directory), project: resolve(cwd) };
  const within = resolve(cwd ?? process.cwd());
  return { directory: join(within, ...DEFAULT_SESSIONS_DIRECTORY.split('/')), within };
};

/**
 * The ids of the sessions in the folder `options` name, sorted: those whose log is a regular
 * file, as every reader of a log reads only such a file (a link, a folder or a pipe named as a
 * log is no session); none when the project's own folder leads out of the project (a link).
 */
export const listSessionIds = async (given: SessionsFolder = {}): Promise<ReadonlyArray<string>> => {
  const options = optionsOf(given);
  const { directory, within } = resolveSessionsDirectory(options);
  // The project's own folder that leads out of it (a link in a hostile checkout) holds none of its sessions.
  if (within !== undefined && E.isLeft(await prepareDirectory(directory, within, false))) return [];
  return sessionIdsOf(await readdir(directory, { withFileTypes: true }).catch(() => []));
};

/**
 * The ids of the sessions in `directory`, as `listSessionIds` gives them, or why the folder
 * could not be read: a folder that is not there holds none, but one this process may not read
 * (or a failing disk) is not an empty one.
 */
const readSessionIds = async (directory: string): Promise<E.Either<SessionError, ReadonlyArray<string>>> => {
  try {
    return E.right(sessionIdsOf(await readdir(directory, { withFileTypes: true })));
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === 'ENOENT') return E.right([]);
    return E.left(ioError(`cannot list the sessions in ${directory}`, error));
  }
};

const sessionIdsOf = (entries: ReadonlyArray<Dirent>): ReadonlyArray<string> =>
  entries
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name)
    .filter((name) => name.endsWith(LOG_EXTENSION))
    .map((name) => name.slice(0, -LOG_EXTENSION.length))
    .filter((id) => E.isRight(parseSessionId(id)))
    .sort();

/**
 * The id of the session whose log changed last in the folder `options` name (ties: the smaller
 * id), or undefined when it holds none. Only regular files count: a symlinked log is not
 * followed. Never throws.
 */
export const latestSessionId = async (given: SessionsFolder = {}): Promise<string | undefined> => {
  const options = optionsOf(given);
  const { directory } = resolveSessionsDirectory(options);
  let latest: { readonly id: string; readonly at: number } | undefined;
  for (const id of await listSessionIds(options)) {
    // Synchronous, as the log's own calls are: one short call each, where a round trip through
    // the thread pool per log made a large folder slow to list.
    const stats = lstatQuietly(join(directory, `${id}${LOG_EXTENSION}`));
    if (stats?.isFile() === true && (latest === undefined || stats.mtimeMs > latest.at))
      latest = { id, at: stats.mtimeMs };
  }
  return latest?.id;
};

/** Where a session's files are. */
export interface SessionFiles {
  readonly id: string;
  /** The log. */
  readonly file: string;
  /** Torn last lines set aside. */
  readonly setAsideFile: string;
}

/**
 * Checks `sessionId` and the sessions folder (creating it when `create`) and names the
 * session's files, without reading them: for shells that keep files of their own beside a log.
 */
export const locateSession = async (
  sessionId: unknown,
  given: SessionsFolder & { readonly create?: boolean } = {},
): Promise<E.Either<SessionError, SessionFiles>> => {
  const options = optionsOf(given);
  const id = parseSessionId(sessionId);
  if (E.isLeft(id)) return id;
  const { directory, within, project } = resolveSessionsDirectory(options);
  const ready = await prepareDirectory(directory, within, options.create !== false, project);
  if (E.isLeft(ready)) return ready;
  const file = join(directory, `${id.right}${LOG_EXTENSION}`);
  return E.right({ id: id.right, file, setAsideFile: `${file}${SET_ASIDE_EXTENSION}` });
};

/**
 * Checks, creating nothing, that the sessions folder `options` name can be used as a store: a
 * folder this process can read, or, where there is none yet, a place where one can be made (the
 * nearest entry above it a folder it may write in); links out of the project are refused as
 * `locateSession` refuses them. For a process that serves sessions (the MCP server): a folder it
 * cannot use is said once, at its start, rather than by every call.
 */
export const checkSessionsFolder = async (given: SessionsFolder = {}): Promise<E.Either<SessionError, void>> => {
  const { directory, within } = resolveSessionsDirectory(optionsOf(given));
  const prepared = await prepareDirectory(directory, within, false);
  if (E.isLeft(prepared)) return prepared;
  const what = `cannot use the sessions folder ${directory}`;
  try {
    let current = directory;
    while (!existsSync(current) && dirname(current) !== current) current = dirname(current);
    if (!statSync(current).isDirectory()) return E.left({ code: 'io', message: `${what}: ${current} is not a folder` });
    accessSync(current, current === directory ? constants.R_OK | constants.X_OK : constants.W_OK | constants.X_OK);
    return E.right(undefined);
  } catch (error) {
    return E.left(ioError(what, error));
  }
};

/**
 * How many bytes of a session's log a process opening it would replay: those after its
 * snapshot when the snapshot's header says it can be used, else the whole log; undefined when
 * the session has no log (or the id or the folder is not valid). Reads no store, creates
 * nothing, follows no symlinked log. Never throws.
 */
export const bytesToReplay = async (sessionId: unknown, given: SessionsFolder = {}): Promise<number | undefined> => {
  const options = optionsOf(given);
  try {
    const files = await locateSession(sessionId, { ...options, create: false });
    if (E.isLeft(files)) return undefined;
    const stats = lstatQuietly(files.right.file);
    if (stats?.isFile() !== true) return undefined;
    return snapshotTail(files.right.file) ?? stats.size;
  } catch {
    return undefined;
  }
};

/**
 * Why a log in UTF-16 is refused (`what` would change its bytes), and what reads it: a live
 * session and an export read and write UTF-8, and replay reads either.
 */
const utf16Log = (id: string, file: string, what: string): { readonly code: 'io'; readonly message: string } => ({
  code: 'io',
  message: `the log ${file} is UTF-16 (it starts with a UTF-16 byte-order mark or with text in UTF-16): ${what}; \`fact-tracker replay --session ${id}\` reads it as it is`,
});

/**
 * The complete lines of session `sessionId`'s log as the file holds them, byte for byte (its
 * line breaks, blank lines, byte-order mark and any byte that is not UTF-8, as written; bytes
 * after the last line break, a line still being written, are left out); undefined when the
 * session has no log. A log in UTF-16 is refused: its lines do not end at the bytes a UTF-8
 * log's do. Follows no symlinked log and creates nothing.
 */
export const readLogBytes = async (
  sessionId: unknown,
  options: SessionsFolder = {},
): Promise<E.Either<SessionError, Buffer | undefined>> => {
  const files = await locateSession(sessionId, { ...options, create: false });
  if (E.isLeft(files)) return files;
  const { id, file } = files.right;
  const read = await readLog(file, 0);
  return E.chain((log: LogRead): E.Either<SessionError, Buffer | undefined> =>
    log.utf16
      ? E.left(utf16Log(id, file, 'export prints a log as UTF-8 text, which would not be its bytes'))
      : E.right(log.exists ? log.bytes : undefined),
  )(read);
};

/** The longest a timer waits (2^31 - 1 ms, about 24.8 days): a longer one would fire at once, and then every millisecond. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The lock settings `options` give: `lockStaleMs` that is no number, or NaN, reads as the
 * default; at least 2 s, and at most what a timer can wait (Infinity is that long).
 */
const lockSettingsOf = (options: Partial<FileSessionStoreOptions>): LockSettings => {
  const given: unknown = options.lockStaleMs;
  const staleMs = typeof given === 'number' && !Number.isNaN(given) ? given : DEFAULT_LOCK_STALE_MS;
  return { staleMs: Math.min(Math.max(staleMs, 2_000), MAX_TIMER_MS) };
};

/**
 * Deletes session `sessionId` of the folder `options` name, as the store's `delete` does, and
 * says what it removed: whether its log was there, and which files beside it went (those of a
 * session whose log is gone too). Creates nothing; never throws.
 */
export const deleteSessionFiles = async (
  sessionId: unknown,
  given: FileSessionStoreOptions = {},
): Promise<E.Either<SessionError, RemovedSession>> => {
  const options = optionsOf(given);
  try {
    const files = await locateSession(sessionId, { ...options, create: false });
    if (E.isLeft(files)) return files;
    const { directory } = resolveSessionsDirectory(options);
    return await removeSession(directory, files.right.id, files.right.file, lockSettingsOf(options));
  } catch (error) {
    return E.left(internalFailure(error));
  }
};

/**
 * Where a reader of a log is: after line `lines`, which ends at byte `offset` of the file
 * `identity`, with `last` just before it.
 */
interface Cursor {
  readonly lines: number;
  readonly offset: number;
  readonly identity: string;
  /** The last bytes before `offset` (see `CONTINUITY_BYTES`); empty when not known. */
  readonly last: Buffer;
  /**
   * A hash of the `offset` bytes before it as they were read (never updated in place: a cursor
   * taken further hashes on from a copy), what a snapshot at the cursor vouches for. A line
   * changed in place after it was read leaves the log another hash, so no snapshot of the state
   * read before the change is taken for one of the log as it now is.
   */
  readonly hash: Hash;
}

const START: Cursor = { lines: 0, offset: 0, identity: '', last: Buffer.alloc(0), hash: createHash('sha256') };

/** A session log store over the files of a folder (default `.fact-tracker/sessions` under `cwd`). */
export const fileSessionStore = (given: FileSessionStoreOptions = {}): SessionStore => {
  const options = optionsOf(given);
  const { directory, within, project } = resolveSessionsDirectory(options);
  const lock = lockSettingsOf(options);
  const clock = options.clock ?? Date.now;
  /** Per session, where the last read or append of this store's calls ended, per follower. */
  const memory = followerMemory<Cursor>();
  const cursorsOf = memory.of;
  /**
   * The sessions whose lock a call of `exclusive` holds, with the check that it is still held and
   * the follower it runs for; an append of that follower inside appends without taking the lock
   * again, and leaves the flush to `exclusive` (another's takes the lock, so waits for it).
   */
  const held = new Map<
    string,
    {
      readonly stillLocked: () => E.Either<SessionError, true>;
      readonly follower: SessionFollower | undefined;
      flush?: boolean;
    }
  >();

  /** The session's files, the folder checked (and made, with `create`). */
  const filesOf = async (id: string, create: boolean): Promise<E.Either<SessionStoreError, SessionFiles>> => {
    const checked = parseSessionId(id);
    if (E.isLeft(checked)) return checked;
    const ready = await prepareDirectory(directory, within, create, project);
    if (E.isLeft(ready)) return E.left({ code: 'io', message: ready.left.message });
    const file = join(directory, `${id}${LOG_EXTENSION}`);
    return E.right({ id, file, setAsideFile: `${file}${SET_ASIDE_EXTENSION}` });
  };

  /**
   * Reads the lines after line `after`: from the cursor when it is there, else from the first
   * byte (skipping the lines up to `after`). A log that is not the one the cursor saw
   * (another file, or shorter) is read again from its first line, and says so.
   */
  const readTail = async (
    file: string,
    id: string,
    after: number,
    cursors: Map<string, Cursor>,
  ): Promise<E.Either<SessionStoreError, TailRead>> => {
    const known = cursors.get(id);
    const from: Cursor = known !== undefined && known.lines === after ? known : START;
    const read = await readLog(file, from.offset, from.last);
    if (E.isLeft(read)) return E.left({ code: 'io', message: read.left.message });
    const { exists, identity, size, bytes, consumed, consumedBytes, tail, continues, last, utf16 } = read.right;
    // Read as UTF-8, every line would be rejected, and a line appended in UTF-8 would corrupt it.
    if (utf16)
      return E.left(
        utf16Log(
          id,
          file,
          'a live session reads and appends UTF-8 only, so it leaves the log as it is (converted to UTF-8, the session goes on)',
        ),
      );
    if (from.offset > 0 && (!exists || identity !== from.identity || size < from.offset || !continues)) {
      cursors.delete(id);
      const again = await readTail(file, id, 0, cursors);
      return E.map((tailRead: TailRead) => ({ ...tailRead, restarted: true }))(again);
    }
    // A byte order mark opens only the file's first line.
    const pieces = logLines(bytes, from.offset === 0);
    const position = from.lines + pieces.length;
    // A reader that asked for lines past the end of a log now shorter has lost its place: it
    // starts over, so it is given every line from the first (read from the first byte, as only
    // a reader without the cursor there can be past the end).
    const restarted = after > position;
    const lines: StoredLine[] = [];
    pieces.forEach((piece, i) => {
      const line = from.lines + i + 1;
      if ((restarted || line > after) && piece.trim() !== '') lines.push({ line, text: piece });
    });
    // A read that goes back from where the cursor is (a resent prompt's, an explanation's) leaves
    // the cursor the catch-up follows, and with it what tells that the log was replaced meanwhile.
    if (known === undefined || after >= known.lines)
      cursors.set(id, {
        lines: position,
        offset: from.offset + consumed,
        identity,
        last,
        hash: from.hash.copy().update(consumedBytes),
      });
    return E.right({ exists, restarted, lines, position, torn: tail > 0 });
  };

  /** Sets a torn last line aside. Call it holding the lock, with the cursor at the end of the complete lines. */
  const setAside = async (
    files: SessionFiles,
    read: TailRead,
    cursors: Map<string, Cursor>,
  ): Promise<E.Either<SessionStoreError, ReadonlyArray<SetAsideLine>>> => {
    if (!read.torn) return E.right([]);
    const cursor = cursors.get(files.id)!;
    const moved = await setAsideTail(files.file, files.setAsideFile, cursor.offset, read.position + 1, clock());
    return E.isLeft(moved) ? E.left({ code: 'io', message: moved.left.message }) : E.right([moved.right]);
  };

  /** Runs `work` on a session's files, turning an exception nobody expected into `internal`. */
  const guarded = async <T>(
    id: string,
    create: boolean,
    work: (files: SessionFiles) => Promise<E.Either<SessionStoreError, T>>,
  ): Promise<E.Either<SessionStoreError, T>> => {
    try {
      const files = await filesOf(id, create);
      return E.isLeft(files) ? files : await work(files.right);
    } catch (error) {
      return E.left(internalFailure(error));
    }
  };

  const locked = <T>(
    files: SessionFiles,
    work: (stillLocked: () => E.Either<SessionError, true>) => Promise<E.Either<SessionStoreError, T>>,
  ): Promise<E.Either<SessionStoreError, T>> => withLogLock(files.file, lock, work).then(E.mapLeft(toStoreError));

  return {
    location: directory,
    list: async () => {
      try {
        // A folder that is not there yet holds no session; a file in its place is a mistake to say.
        const entry = lstatQuietly(directory);
        if (entry !== undefined && !entry.isDirectory() && !entry.isSymbolicLink())
          return E.left({ code: 'io', message: `the sessions folder ${directory} is not a folder` });
        // A folder that leads out of the project is refused, as for reading a session there.
        const inside = await prepareDirectory(directory, within, false);
        if (E.isLeft(inside)) return E.left(toStoreError(inside.left));
        return E.mapLeft(toStoreError)(await readSessionIds(directory));
      } catch (error) {
        return E.left(internalFailure(error));
      }
    },
    read: (id, after, follower) => guarded(id, false, (files) => readTail(files.file, id, after, cursorsOf(follower))),
    append: (id, expected, texts, follower) =>
      guarded(id, true, async (files) => {
        const cursors = cursorsOf(follower);
        const lines = parseLinesToAppend(texts);
        if (E.isLeft(lines)) return lines;
        let created = false;
        const write = async (
          stillLocked: () => E.Either<SessionError, true>,
        ): Promise<E.Either<SessionStoreError, AppendResult>> => {
          const before = cursors.get(id);
          const read = await readTail(files.file, id, expected, cursors);
          if (E.isLeft(read)) return read;
          // The writer's next read must find the log made anew too: it reads from where it was.
          if (read.right.restarted && before !== undefined) cursors.set(id, before);
          if (read.right.restarted || read.right.position !== expected)
            return E.left({
              code: 'conflict',
              message: read.right.restarted
                ? `the log of session ${id} was made anew since line ${expected} was read`
                : `session ${id} holds ${read.right.position} lines, not ${expected}: another writer appended first`,
            });
          const setAsideLines = await setAside(files, read.right, cursors);
          if (E.isLeft(setAsideLines)) return setAsideLines;
          const safe = stillLocked();
          if (E.isLeft(safe)) return E.left(toStoreError(safe.left));
          const cursor = cursors.get(id)!;
          created = cursor.offset === 0;
          const text = lines.right.map((line) => `${line}\n`).join('');
          const appended = await appendToLog(files.file, text);
          if (E.isLeft(appended)) return E.left(toStoreError(appended.left));
          const position = expected + lines.right.length;
          cursors.set(id, {
            lines: position,
            offset: cursor.offset + appended.right.bytes,
            identity: appended.right.identity,
            last: lastBytes(cursor.last, appended.right.end),
            hash: cursor.hash.copy().update(text),
          });
          return E.right({ position, setAside: setAsideLines.right });
        };
        const holder = held.get(id);
        if (holder !== undefined && holder.follower === follower) {
          const written = await write(holder.stillLocked);
          // The flush waits for `exclusive` to release the lock.
          if (E.isRight(written)) holder.flush = (holder.flush ?? false) || created;
          return written;
        }
        const written = await locked(files, write);
        if (E.isLeft(written)) return written;
        // Flushed after the lock is released (see `appendToLog`), but before the call returns.
        const flushed = flushLog(files.file, created);
        return E.isLeft(flushed) ? E.left(toStoreError(flushed.left)) : written;
      }),
    repair: (id, follower) =>
      guarded(id, false, async (files) => {
        const cursors = cursorsOf(follower);
        const first = await readTail(files.file, id, cursors.get(id)?.lines ?? 0, cursors);
        if (E.isLeft(first) || !first.right.torn) return E.map(() => [])(first);
        return locked(files, async () => {
          const read = await readTail(files.file, id, cursors.get(id)?.lines ?? 0, cursors);
          return E.isLeft(read) ? read : setAside(files, read.right, cursors);
        });
      }),
    readSnapshot: async (id, follower, atMost) => {
      try {
        const files = await filesOf(id, false);
        if (E.isLeft(files)) return E.left(invalidSnapshot(files.left.message));
        const read = E.mapLeft(invalidSnapshot)(
          atMost === undefined ? readSnapshot(files.right.file) : readSnapshotAtMost(files.right.file, atMost),
        );
        if (E.isRight(read) && read.right !== undefined) {
          const { position, offset, identity, hash, last } = read.right;
          // The snapshot checked the log it covers: what comes after it is read on from there,
          // once its last bytes are still there. One read while the store follows the log (a
          // resent prompt's) leaves that as it is.
          const cursors = cursorsOf(follower);
          if (!cursors.has(id)) cursors.set(id, { lines: position, offset, identity, last, hash });
          return E.right({ position, state: read.right.state });
        }
        return E.map(() => undefined)(read);
      } catch (error) {
        return E.left(invalidSnapshot(internalFailure(error).message));
      }
    },
    writeSnapshot: (id, snapshot, follower) =>
      guarded(id, false, async (files) => {
        const given = parseStoredSnapshot(snapshot);
        if (E.isLeft(given)) return given;
        const { position, state } = given.right;
        const cursor = cursorsOf(follower).get(id);
        // Only a position this store has read or written to: its byte offset is known.
        if (cursor === undefined || cursor.lines !== position || cursor.offset === 0) return E.right(undefined);
        return locked(files, async () => {
          const written = writeSnapshot(files.file, { ...cursor, position, state });
          return E.isLeft(written) ? E.left(toStoreError(written.left)) : written;
        });
      }),
    exclusive: async <L, T>(id: string, work: () => Promise<E.Either<L, T>>, follower?: SessionFollower) => {
      const files = await filesOf(id, true);
      if (E.isLeft(files)) return files;
      const holder: { flush: boolean | undefined } = { flush: undefined };
      // The work's own answer travels inside a Right: a Left from the lock is the lock's failure.
      const result = await withLogLock(files.right.file, lock, async (stillLocked) => {
        held.set(id, { stillLocked, follower });
        try {
          return E.right(await work());
        } finally {
          holder.flush = held.get(id)?.flush;
          held.delete(id);
        }
      });
      if (E.isLeft(result)) return E.left(toStoreError(result.left));
      if (holder.flush === undefined) return result.right;
      // Flushed after the lock is released, as a lone append is, but before the call returns.
      const flushed = flushLog(files.right.file, holder.flush);
      return E.isLeft(flushed) && E.isRight(result.right) ? E.left(toStoreError(flushed.left)) : result.right;
    },
    delete: (id) =>
      guarded(id, false, async (files) => {
        // A follower's position in the log deleted is found gone by its next read.
        const removed = await removeSession(directory, id, files.file, lock, () => memory.of(undefined).delete(id));
        return E.bimap(toStoreError, (session: RemovedSession) => session.log)(removed);
      }),
    // The log's directory entry too: the append that answered a failure may have made the log.
    flush: (id) => guarded(id, false, async (files) => E.mapLeft(toStoreError)(flushLog(files.file, true))),
    backlog: (id) => bytesToReplay(id, { directory }),
    close: async () => {
      memory.clear();
    },
  };
};

/** A session failure as the store reports it: its own codes kept, anything else a failure of the files. */
const toStoreError = (error: SessionError): SessionStoreError => {
  switch (error.code) {
    case 'conflict':
    case 'internal':
    case 'invalid_session_id':
    case 'unknown_session':
    case 'io':
      return { code: error.code, message: error.message };
    default:
      return { code: 'io', message: error.message };
  }
};
