/**
 * The session store port: what a live session needs from storage, and nothing more. A session
 * is a log of lines (one history event each, in the dispatch-history format) numbered from 1,
 * and a snapshot beside it (the session's state after some line, a cache the log can always
 * rebuild). Writers append with the number of the last line they have read; a writer that lost
 * the race to another gets `conflict`, reads what it missed and tries again, so nothing is lost
 * or written twice. The files under `.fact-tracker/sessions` are the embedded default
 * (`fileSessionStore`); `memorySessionStore` keeps sessions in the process; every adapter passes
 * the same conformance suite.
 */
import * as E from 'fp-ts/lib/Either.js';
import { kindOf } from '../../base/describe.js';
import { type Failure, failure, internalFailure } from '../../base/failure.js';
import { isRecord } from '../../base/record.js';
import type { SetAsideLine, StoreAccessCode } from './model.js';

/**
 * Why a store call did nothing. `conflict`: another writer appended first, or an append's
 * outcome is unknown (a connection lost before its answer), which the store marks `unanswered`:
 * read the tail, then retry. Only an unanswered append's line, found there, is the caller's own;
 * any other is another writer's, a resend of the same event among them.
 */
export type SessionStoreError = Failure<
  'conflict' | 'io' | 'invalid_session_id' | 'unknown_session' | 'internal' | StoreAccessCode
> & { readonly unanswered?: true };

/** Why a kept snapshot cannot be used (the log still rebuilds the state): unreadable, of another version, or of another line than its position. */
export type SnapshotFailure = Failure<'invalid_snapshot'>;

/** A `SnapshotFailure` saying `message`. */
export const invalidSnapshot = (message: string): SnapshotFailure => failure('invalid_snapshot', message);

/** One line of a session's log: its number and its text (without its line break). */
export interface StoredLine {
  readonly line: number;
  readonly text: string;
}

/** What reading a log's tail found. */
export interface TailRead {
  /** False when the session has no log yet. */
  readonly exists: boolean;
  /**
   * True when the log is not the one the earlier reads saw (replaced, cut short or rewritten):
   * `lines` then start from line 1, and the reader must start over from an empty state.
   */
  readonly restarted: boolean;
  /** The non-blank lines after the position asked for, in order. */
  readonly lines: ReadonlyArray<StoredLine>;
  /** The number of the last complete line read (blank lines count): the position to read or append after next. */
  readonly position: number;
  /** True when bytes follow the last complete line: a line being written, or a dead writer's torn line. */
  readonly torn: boolean;
}

/** A line break inside a line to append: it would read back as two lines of the log. */
const LINE_BREAK = /[\r\n]/u;

/**
 * The lines a caller gives `append`, or why they are none (`io`, as every adapter answers): a
 * value that is not a list of texts would be kept as something no read can take back as a line
 * (a number breaks every later read of the session), and a text holding a line break would
 * forge a second line.
 */
export const parseLinesToAppend = (texts: unknown): E.Either<SessionStoreError, ReadonlyArray<string>> => {
  if (!Array.isArray(texts)) return E.left(failure('io', 'the lines to append must be a list of texts'));
  // Copied once: the lines checked are the lines kept, whatever the caller's array does after.
  const lines: unknown[] = Array.from(texts as unknown[]);
  if (!lines.every((text): text is string => typeof text === 'string'))
    return E.left(failure('io', 'the lines to append must be a list of texts'));
  if (lines.some((text) => LINE_BREAK.test(text)))
    return E.left(failure('io', 'a line to append holds a line break: it would forge a line of the log'));
  return E.right(lines);
};

/**
 * `work`'s answer, or `internal` for an exception nobody expected (a caller's value whose getter
 * throws, a bug): the port promises calls that never throw, and a bug surfaces as a Left rather
 * than as a rejected promise.
 */
export const guardedCall = async <L, T>(
  work: () => Promise<E.Either<L, T>>,
): Promise<E.Either<L | SessionStoreError, T>> => {
  try {
    return await work();
  } catch (error) {
    return E.left(internalFailure(error));
  }
};

/** What an append wrote. */
export interface AppendResult {
  /** The number of the last line appended: the new position. */
  readonly position: number;
  /** Torn last lines the store set aside before appending (a dead writer's). */
  readonly setAside: ReadonlyArray<SetAsideLine>;
}

/** A session's state after line `position`, as the session encodes it. */
export interface StoredSnapshot {
  readonly position: number;
  readonly state: string;
}

/**
 * The snapshot a caller gives `writeSnapshot`, or why it is none (`io`, as every adapter
 * answers): kept, a position that is no whole number or a state that is no text would be
 * answered to every later reader of the session.
 */
export const parseStoredSnapshot = (snapshot: unknown): E.Either<SessionStoreError, StoredSnapshot> => {
  // Each field read once: a getter cannot pass the check with one value and be kept with another.
  const { position, state } = isRecord(snapshot) ? snapshot : {};
  return typeof position === 'number' && Number.isSafeInteger(position) && typeof state === 'string'
    ? E.right({ position, state })
    : E.left(failure('io', `the snapshot is ${kindOf(snapshot)}, not { position, state }`));
};

/**
 * Who follows a session's log: an object of the caller's own that it passes to the calls that
 * read, append or keep a snapshot (a live session passes one of its own, made when it opens). A
 * store that remembers between calls where a reader is in a log and which log it was (the files'
 * byte offset and file, the database row read), what tells it that a log was deleted and made
 * anew, remembers that per follower: two sessions opened on one store instance for the same id
 * each tell it, as two processes do. Calls without one share what the store instance remembers.
 * A store that remembers nothing between calls takes none.
 */
export type SessionFollower = object;

/** What storing a session's lines and snapshots takes. Calls never throw. */
export interface SessionStore {
  /** Where the sessions are, for messages (a folder, or a database address without its password). */
  readonly location: string;
  /** The ids of the stored sessions, sorted. */
  list(): Promise<E.Either<SessionStoreError, ReadonlyArray<string>>>;
  /** The lines after line `after` (0: from the first). */
  read(id: string, after: number, follower?: SessionFollower): Promise<E.Either<SessionStoreError, TailRead>>;
  /**
   * Appends `lines` (each one event, without a line break) after line `expected`, creating the
   * session when it has none; `conflict` when the log already holds more than `expected` lines.
   */
  append(
    id: string,
    expected: number,
    lines: ReadonlyArray<string>,
    follower?: SessionFollower,
  ): Promise<E.Either<SessionStoreError, AppendResult>>;
  /** Moves a dead writer's torn last line out of the log (a store without torn lines sets none aside). */
  repair(id: string, follower?: SessionFollower): Promise<E.Either<SessionStoreError, ReadonlyArray<SetAsideLine>>>;
  /**
   * The newest snapshot this store can vouch for (same log, same library version), Right(undefined)
   * when there is none; a Left says why the one there cannot be used (the log still rebuilds the
   * state), or is the failure of a store that cannot be used at all (a `StoreAccessCode`: its
   * server unreachable, the credentials refused...), which the session is then opened with
   * rather than waiting on the same store again to read the log.
   *
   * With `atMost`: the newest snapshot of at most `atMost` lines the store keeps, Right(undefined)
   * when it keeps none (a store may keep the snapshot the newest replaced, for the section of a
   * prompt sent again, which needs the state before the prompt's line). A read with `atMost`
   * leaves where a follower that reads the log already is as it was.
   */
  readSnapshot(
    id: string,
    follower?: SessionFollower,
    atMost?: number,
  ): Promise<E.Either<SnapshotFailure | SessionStoreError, StoredSnapshot | undefined>>;
  /**
   * Keeps a snapshot of the session after line `snapshot.position`, replacing an older one: the
   * newest wins, so one of fewer lines than the one kept (a writer that lags behind) replaces nothing.
   */
  writeSnapshot(
    id: string,
    snapshot: StoredSnapshot,
    follower?: SessionFollower,
  ): Promise<E.Either<SessionStoreError, void>>;
  /**
   * Deletes the session: its log, its snapshot and what the store keeps beside them. Right(true)
   * when there was one. A process still writing to it starts a new log under the same id.
   */
  delete(id: string): Promise<E.Either<SessionStoreError, boolean>>;
  /** How much of the log a process opening the session would replay (a store's own measure, such as bytes), if known. */
  backlog(id: string): Promise<number | undefined>;
  /**
   * Optional: runs `work` as the session's only writer (the files' lock): a writer that reads,
   * plans and appends inside it meets no `conflict` from writers that take it too, so a busy
   * session costs no plans made twice. A store without it is used optimistically: append, and
   * on `conflict` read and plan again.
   */
  exclusive?<L, T>(
    id: string,
    work: () => Promise<E.Either<L, T>>,
    follower?: SessionFollower,
  ): Promise<E.Either<L | SessionStoreError, T>>;
  /**
   * Optional: makes what was appended to the session durable (the files flush the log to disk),
   * for an append that answered a failure once its lines were written (a flush that failed): the
   * session calls it before it answers such an event as recorded. A store whose appends are
   * durable once they answer has none.
   */
  flush?(id: string): Promise<E.Either<SessionStoreError, void>>;
  /** Ends what the store holds open (a pool of connections); a store others passed in stays theirs. */
  close(): Promise<void>;
}
