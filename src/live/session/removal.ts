/**
 * Deleting a session of the files: its log, and the files kept beside it (its snapshots, the
 * torn lines set aside, the hook's records, their temporaries). A session whose log is gone (a
 * log removed by hand, a delete cut short) may still have such files: they are its own, and
 * removed as well, never another session's that happens to start with the same name.
 */
import { lstatSync, type Stats } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { fileErrorCode } from '../../node/fileFailure.js';
import { ioError, type LockSettings, withLogLock } from './logFile.js';
import type { SessionError } from './model.js';

/** The extension of a session log. */
export const LOG_EXTENSION = '.jsonl';

/** The entry at `path` itself (a link is not followed), or undefined when it cannot be read. */
export const lstatQuietly = (path: string): Stats | undefined => {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
};

/**
 * True when `name` is a file beside the log of session `id` (`{id}.jsonl.snapshot`, `.set-aside`,
 * `.hooks`, their temporaries). The files of sessions `{id}.jsonl` and `{id}.jsonl.x` start the
 * same way, but every one of them holds `.jsonl` again from the dot that ends that start (the log
 * of `{id}.jsonl` is `{id}.jsonl.jsonl`): they are another session's, never this one's.
 */
const isSideFileOf = (id: string, name: string): boolean => {
  const prefix = `${id}${LOG_EXTENSION}.`;
  return name.startsWith(prefix) && !name.slice(prefix.length - 1).includes(LOG_EXTENSION);
};

/** What deleting a session removed. */
export interface RemovedSession {
  /** True when its log was there: the session was. */
  readonly log: boolean;
  /** The names of the files beside the log that were removed, sorted. */
  readonly sideFiles: ReadonlyArray<string>;
}

/**
 * The regular files in `directory` kept beside the log of session `id`, sorted; none when the
 * folder is not there. Throws when it cannot be read: a folder this process may not read is not
 * an empty one.
 */
const sideFilesOf = async (directory: string, id: string): Promise<ReadonlyArray<string>> => {
  const names = await readdir(directory).catch((error: unknown) => {
    if (fileErrorCode(error) === 'ENOENT') return [] as string[];
    throw error;
  });
  return names
    .filter((name) => isSideFileOf(id, name) && lstatQuietly(join(directory, name))?.isFile() === true)
    .sort();
};

/**
 * Deletes session `id`, whose log is `file` in `directory`, under the log's lock: the log first
 * (once it is gone the session is, whatever happens to its side files), then the side files,
 * also when there was no log. What stands in a log's place and is not a file is left, and nothing
 * is deleted. `forget` runs once the log is removed (a store's memory of where readers are).
 */
export const removeSession = async (
  directory: string,
  id: string,
  file: string,
  lock: LockSettings,
  forget: () => void = () => undefined,
): Promise<E.Either<SessionError, RemovedSession>> => {
  try {
    // No log and nothing beside it: nothing to lock (and maybe no folder to lock in). A log that
    // cannot be looked at (a folder this process may not search, a file in the folder's place)
    // is said as such, never taken for a session that is not there.
    if (lstatSync(file, { throwIfNoEntry: false }) === undefined && (await sideFilesOf(directory, id)).length === 0)
      return E.right({ log: false, sideFiles: [] });
  } catch (error) {
    return E.left(ioError(`cannot delete session ${id} in ${directory}`, error));
  }
  // The removal's own answer travels inside a Right: a Left is the lock's, which the user meets
  // when a live session is writing the log, so it names the session and says it is all still there.
  const removed = await withLogLock(file, lock, async () => E.right(await removeLocked(directory, id, file, forget)));
  return E.isLeft(removed)
    ? E.left({
        code: removed.left.code,
        message: `session ${id} in ${directory} was not deleted: ${removed.left.message}`,
      })
    : removed.right;
};

/** `removeSession`'s work, holding the log's lock. */
const removeLocked = async (
  directory: string,
  id: string,
  file: string,
  forget: () => void,
): Promise<E.Either<SessionError, RemovedSession>> => {
  const entry = lstatQuietly(file);
  const log = entry?.isFile() === true;
  // What stands in a log's place is no session of ours to remove.
  if (entry !== undefined && !log)
    return E.left({
      code: 'io',
      message: `cannot delete session ${id} in ${directory}: its log ${file} is not a file; nothing was deleted`,
    });
  try {
    await rm(file, { force: true });
    forget();
    const sideFiles = await sideFilesOf(directory, id);
    for (const name of sideFiles) await rm(join(directory, name), { force: true });
    return E.right({ log, sideFiles });
  } catch (error) {
    return E.left(ioError(`cannot delete session ${id} in ${directory}`, error));
  }
};
