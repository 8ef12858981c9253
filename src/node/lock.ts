/**
 * The cross-process lock every writer of a file takes (the session logs, the shared context):
 * a `FILE.lock` folder made by proper-lockfile, whose holder keeps its time at now; a lock not
 * refreshed for `staleMs` belongs to a crashed holder and is taken over. A waiter looks at the
 * lock before trying to take it (a failed attempt creates a directory entry, and many waiters
 * doing that at once slow the holder's own release down), and the attempt itself is
 * proper-lockfile's synchronous one: its retries would go through libuv's thread pool, which on
 * a loaded machine costs more than the write the lock guards.
 *
 * What cannot be a live lock is named at once instead of waited on: a file or a link where the
 * lock folder belongs, and a lock folder dated more than a moment in the future, which no
 * writer on this machine makes and which would not turn stale for as long as it is ahead. A
 * lock folder with entries in it (committed by mistake, copied along with a checkout) is no
 * live writer's either, since a writer's is empty: it is set aside, and said.
 */
import * as fs from 'node:fs';
import { lstatSync, readdirSync, renameSync, type Stats } from 'node:fs';
import * as E from 'fp-ts/lib/Either.js';
import lockfile from 'proper-lockfile';
import { type Failure, failure } from '../base/failure.js';
import { fileErrorCode, ioFailure } from './fileFailure.js';

/** How long a writer waits for the lock, and when a lock counts as abandoned. */
export interface LockSettings {
  /** A lock not refreshed for this long is taken over (proper-lockfile's `stale`; it takes at least 2,000 ms). */
  readonly staleMs: number;
  /** How long to try for the lock before giving up: the deadline, not a count of attempts. */
  readonly waitMs: number;
  /** How messages name the locked file (default: its path as given). */
  readonly shown?: string;
}

/** Asked just before a write lands: fails once the lock was lost (another process judged it abandoned). */
export type StillLocked = () => E.Either<Failure<'io'>, true>;

/** A lock dated further ahead than this was not made by a live writer on this machine (each keeps its lock's time at now). */
const FUTURE_TOLERANCE_MS = 2_000;

/** The folder proper-lockfile makes for `file`. */
export const lockPathOf = (file: string): string => `${file}.lock`;

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The pause before the next look at the lock: a writer holds it for a millisecond or two, so short and jittered. */
const pauseFor = (attempt: number): number => Math.min(1 + attempt, 10) * (0.5 + Math.random());

/** The entry where the lock folder belongs, without following a link; undefined when there is none (or it cannot be seen). */
const lockEntry = (file: string): Stats | undefined => {
  try {
    return lstatSync(lockPathOf(file), { throwIfNoEntry: false });
  } catch {
    // Unreadable: the attempt below says why in its own words.
    return undefined;
  }
};

/** Why the lock entry `entry` can never be taken by waiting, or undefined when it may be a live holder's. */
const unusableLock = (entry: Stats, shown: string, now: number): Failure<'io'> | undefined => {
  if (!entry.isDirectory())
    return failure(
      'io',
      `${shown}.lock is ${entry.isSymbolicLink() ? 'a symbolic link' : 'a file'}, not a lock (a writer's lock is a folder it makes and removes): remove it and try again`,
    );
  if (entry.mtimeMs > now + FUTURE_TOLERANCE_MS)
    return failure(
      'io',
      `${shown}.lock is dated ${new Date(entry.mtimeMs).toISOString()}, ${Math.round((entry.mtimeMs - now) / 1000)} s in the future: no writer on this machine holds it (a leftover from a clock that was ahead); remove the folder and try again`,
    );
  return undefined;
};

/**
 * Sets aside the lock folder of `file` when it has entries in it, which no writer's has (a
 * writer's lock is an empty folder): what to say of it, or undefined when it is empty.
 */
const setAsideFilledLock = (file: string, shown: string, now: number): E.Either<Failure<'io'>, string | undefined> => {
  const folder = lockPathOf(file);
  try {
    if (readdirSync(folder).length === 0) return E.right(undefined);
    const stamp = new Date(now).toISOString().replace(/[:.]/gu, '-');
    renameSync(folder, `${folder}.${stamp}.stale`);
    return E.right(
      `${shown}.lock held files, so no writer made it (a lock folder committed or copied by mistake?): set aside to ${shown}.lock.${stamp}.stale; remove it (git rm -r --cached ${shown}.lock if it was committed)`,
    );
  } catch (error) {
    // Released (or set aside by another waiter) in the meantime: there is nothing left to set aside.
    if (fileErrorCode(error) === 'ENOENT') return E.right(undefined);
    return E.left(ioFailure(`cannot set aside ${shown}.lock, a folder with files in it that no writer made`, error));
  }
};

/** The lock taken, and what was said on the way (a lock folder set aside). */
interface Acquired {
  readonly release: () => void;
  readonly notices: ReadonlyArray<string>;
}

/** Takes the lock of `file`, or says why not (held for the whole wait, or a lock that cannot be a live one). */
const acquire = async (
  file: string,
  settings: LockSettings,
  onCompromised: (error: Error) => void,
  isTakenOverNow: () => boolean,
): Promise<E.Either<Failure<'io'>, Acquired>> => {
  const shown = settings.shown ?? file;
  const deadline = Date.now() + settings.waitMs;
  const notices: string[] = [];
  for (let attempt = 0; ; attempt += 1) {
    const now = Date.now();
    let held = lockEntry(file);
    const unusable = held === undefined ? undefined : unusableLock(held, shown, now);
    if (unusable !== undefined) return E.left(unusable);
    // Looked into once, and again whenever it would be taken over: a live lock is not read on every wait.
    if (held !== undefined && (attempt === 0 || held.mtimeMs < now - settings.staleMs)) {
      const setAside = setAsideFilledLock(file, shown, now);
      if (E.isLeft(setAside)) return setAside;
      if (setAside.right !== undefined) {
        notices.push(setAside.right);
        held = undefined;
      }
    }
    if (held === undefined || held.mtimeMs < now - settings.staleMs)
      try {
        return E.right({
          release: lockfile.lockSync(file, {
            realpath: false,
            stale: settings.staleMs,
            onCompromised,
            fs: lockFileSystem(isTakenOverNow),
          }),
          notices,
        });
      } catch (error) {
        if (fileErrorCode(error) !== 'ELOCKED') return E.left(ioFailure(`cannot lock ${shown}`, error));
      }
    const left = deadline - Date.now();
    if (left <= 0)
      return E.left(
        failure(
          'io',
          `cannot lock ${shown}: another writer held it for the whole wait (${Math.round(settings.waitMs / 1000)} s); try again once it is done`,
        ),
      );
    await pause(Math.min(left, pauseFor(attempt)));
  }
};

/**
 * Why the lock is no longer held: proper-lockfile found it taken over (in its own terms: a lock
 * folder gone, `ECOMPROMISED`), or this process was held up (stopped, starved) long enough that
 * its lock may have gone stale and been taken over before proper-lockfile could look.
 */
const lostLock = (shown: string, staleMs: number, error: unknown): Failure<'io'> =>
  error === undefined || ['ENOENT', 'ECOMPROMISED'].includes(fileErrorCode(error))
    ? failure(
        'io',
        `lost the lock of ${shown}: this process was held up (stopped or starved) long enough for it to go stale after ${Math.round(staleMs / 1000)} s, and another writer may have taken it over; nothing more was written`,
      )
    : ioFailure(`lost the lock of ${shown}`, error);

/** What tells one lock folder from another made in its place: its inode and its birth time (0 where the file system keeps none). */
interface LockFolder {
  readonly ino: bigint;
  readonly born: bigint;
  readonly mtimeMs: number;
}

/** The lock folder of `file` as it is now, or undefined when there is none (or it cannot be seen). */
const lockFolderOf = (file: string): LockFolder | undefined => {
  try {
    const entry = lstatSync(lockPathOf(file), { bigint: true, throwIfNoEntry: false });
    return entry === undefined || !entry.isDirectory()
      ? undefined
      : { ino: entry.ino, born: entry.birthtimeNs, mtimeMs: Number(entry.mtimeNs / 1_000_000n) };
  } catch {
    return undefined;
  }
};

/**
 * True when the lock folder `now` is the one this process `made`: another writer takes a lock
 * over only once it is stale, by removing its folder and making another, which has another birth
 * time (the inode may be the same one again). False when either is missing, or where the file
 * system keeps no birth time (a folder cannot be told from its successor there).
 */
const isSameFolder = (made: LockFolder | undefined, now: LockFolder | undefined): now is LockFolder =>
  made !== undefined && now !== undefined && made.born !== 0n && now.born === made.born && now.ino === made.ino;

/** True when the lock folder `now` is the one this process `made` and was refreshed less than `freshMs` ago. */
const isStillOurs = (made: LockFolder | undefined, now: LockFolder | undefined, at: number, freshMs: number): boolean =>
  isSameFolder(made, now) && at - now.mtimeMs < freshMs;

/** True when another writer's lock folder stands where this process `made` its own (a takeover); where birth times cannot tell, false. */
const isTakenOver = (made: LockFolder | undefined, now: LockFolder | undefined): boolean =>
  made !== undefined && made.born !== 0n && now !== undefined && !isSameFolder(made, now);

/**
 * The file system proper-lockfile works a lock through, with two changes:
 * - Its removal of the lock folder leaves alone a folder `isOthers` says another writer made:
 *   proper-lockfile removes whatever folder stands there, at release and as the process exits,
 *   and a lock taken over from a holder that was held up would go while its new holder still
 *   writes, letting a third writer in.
 * - It reads and sets the times of the lock folder itself, never of what a link put in its place
 *   points to: a refresh that followed the link would date a file or folder of anyone's to now,
 *   and a link's own time is never the lock's, so the lock counts as lost.
 */
const lockFileSystem = (isOthers: () => boolean): typeof fs => ({
  ...fs,
  rmdirSync: (folder: fs.PathLike): void => {
    if (!isOthers()) fs.rmdirSync(folder);
  },
  stat: fs.lstat,
  statSync: fs.lstatSync,
  utimes: fs.lutimes,
  utimesSync: fs.lutimesSync,
});

/**
 * Runs `work` holding the lock of `file`, so writers in every process take turns. `work` gets a
 * check that fails once the lock was lost, to be asked just before writing, and what was said
 * on the way to the lock (a lock folder set aside). Failures of `work` come back as they are.
 */
export const withFileLock = async <F, T>(
  file: string,
  settings: LockSettings,
  work: (stillLocked: StillLocked, notices: ReadonlyArray<string>) => Promise<E.Either<F, T>>,
): Promise<E.Either<F | Failure<'io'>, T>> => {
  let compromised: unknown;
  let made: LockFolder | undefined;
  const acquired = await acquire(
    file,
    settings,
    (error) => {
      compromised = error;
    },
    () => isTakenOver(made, lockFolderOf(file)),
  );
  if (E.isLeft(acquired)) return acquired;
  // proper-lockfile refreshes the lock every staleMs / 2 from this event loop, and learns it was
  // taken over only asynchronously: a process stopped past staleMs and resumed could write before
  // it learns. So the longest time the loop did not turn is kept; past what keeps the lock fresh
  // (staleMs minus a refresh interval, and some room), the lock folder is looked at before a
  // write: still the one this process made (a takeover removes it and makes another) and not
  // about to turn stale, the lock is held, as after a busy stretch on a loaded machine; else it
  // counts as lost.
  // How often the loop notes that it turns: a twentieth of the stale time (500 ms for the context's 10 s).
  const turnMs = settings.staleMs / 20;
  made = lockFolderOf(file);
  let lastTurn = Date.now();
  let longestHold = 0;
  const noteTurn = (): void => {
    const now = Date.now();
    longestHold = Math.max(longestHold, now - lastTurn);
    lastTurn = now;
  };
  const turns = setInterval(noteTurn, turnMs);
  turns.unref();
  const stillLocked: StillLocked = () => {
    noteTurn();
    if (compromised === undefined && longestHold >= settings.staleMs / 2 - 2 * turnMs) {
      if (!isStillOurs(made, lockFolderOf(file), Date.now(), settings.staleMs - 2 * turnMs))
        return E.left(lostLock(settings.shown ?? file, settings.staleMs, undefined));
      // Looked at: no other writer took it over before now.
      longestHold = 0;
    }
    if (compromised === undefined) return E.right(true);
    return E.left(lostLock(settings.shown ?? file, settings.staleMs, compromised));
  };
  try {
    return await work(stillLocked, acquired.right.notices);
  } finally {
    clearInterval(turns);
    try {
      acquired.right.release();
    } catch {
      // A lock already lost or removed has nothing left to release.
    }
  }
};
