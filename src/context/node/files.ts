/**
 * Durable file operations for the context shell: atomic writes (a temporary file in the same
 * directory, fsync, rename, fsync of the directory), a cross-process lock from
 * proper-lockfile, moving a broken file aside to a timestamped backup, bounded reads, and the
 * check that keeps every path the shell touches inside the repository.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describeFileFailure, fileErrorCode } from '../../node/fileFailure.js';
import type { ContextError } from '../model.js';
import { nodeModules } from './modules.js';

const errorCode = fileErrorCode;

/** A file system failure as one line. */
export const describeFailure = describeFileFailure;

/** An I/O error about `what`. */
export const ioError = (what: string, error: unknown): ContextError => ({
  code: 'io',
  message: `${what}: ${describeFailure(error)}`,
});

/** A size in bytes for people: `5 MiB`, `640 KiB`, `12 bytes`. */
export const formatBytes = (bytes: number): string =>
  bytes >= 1024 * 1024
    ? `${Number((bytes / (1024 * 1024)).toFixed(1))} MiB`
    : bytes >= 1024
      ? `${Number((bytes / 1024).toFixed(1))} KiB`
      : `${bytes} bytes`;

/**
 * The text of `file`, at most `maxBytes` of it, or undefined when there is no such file. A
 * longer file (or a device such as `/dev/zero`) is refused after reading `maxBytes + 1` bytes,
 * so no read costs more than its bound.
 */
export const readTextIfExists = async (
  file: string,
  maxBytes: number,
  /** Return the first `maxBytes` of a longer file instead of refusing it. */
  headOnly = false,
): Promise<E.Either<ContextError, string | undefined>> => {
  const { fs } = await nodeModules();
  let handle: Awaited<ReturnType<typeof fs.open>>;
  try {
    // Non-blocking, so that opening a FIFO returns at once instead of waiting for a writer.
    handle = await fs.open(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (error) {
    return errorCode(error) === 'ENOENT' ? E.right(undefined) : E.left(ioError(`cannot read ${file}`, error));
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile())
      return E.left({
        code: 'unsafe_path',
        message: `is ${describeFileType(stat)}, not a regular file: refusing to read it`,
      });
    const buffer = Buffer.alloc(Math.min(maxBytes + 1, 64 * 1024));
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, maxBytes + 1 - total), null);
      if (bytesRead === 0) break;
      chunks.push(Buffer.from(buffer.subarray(0, bytesRead)));
      total += bytesRead;
      if (total > maxBytes && headOnly) return E.right(Buffer.concat(chunks, total).toString('utf8', 0, maxBytes));
      if (total > maxBytes)
        return E.left({ code: 'too_large', message: `is larger than ${formatBytes(maxBytes)}, the most it may hold` });
    }
    return E.right(Buffer.concat(chunks, total).toString('utf8'));
  } catch (error) {
    return E.left(ioError(`cannot read ${file}`, error));
  } finally {
    await handle.close().catch(() => undefined);
  }
};

/** What a file system entry that is not a regular file is, for a message. */
const describeFileType = (stat: import('node:fs').Stats): string =>
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
export const fileSize = async (file: string): Promise<number> => {
  const { fs } = await nodeModules();
  return fs.stat(file).then(
    (stat) => stat.size,
    () => 0,
  );
};

const isInsideDirectory = (directory: string, file: string, separator: string): boolean =>
  file === directory || file.startsWith(directory.endsWith(separator) ? directory : `${directory}${separator}`);

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
  const { fs, path } = await nodeModules();
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
    const real = await fs.realpath(part).catch(() => undefined);
    const refuse = (where: string): E.Either<ContextError, void> =>
      E.left({
        code: 'unsafe_path',
        message: `${shown} is a symbolic link to ${where}: refusing to read or write through it (remove the link, or put a real file or folder inside the repository in its place)`,
      });
    if (real === undefined) return refuse('a missing target');
    if (!isInsideDirectory(realRoot, real, path.sep)) return refuse(`${real}, outside the repository`);
    if (isInsideDirectory(gitDirectory, real, path.sep)) return refuse("the repository's .git directory");
  }
  return E.right(undefined);
};

let written = 0;

/**
 * Writes `file` whole or not at all: the text goes to a temporary file in the same directory,
 * is flushed to disk, and replaces `file` by a rename, which is atomic; a crash at any point
 * leaves the old file or the new one, never a mix. `stillSafe` is asked just before the rename
 * (a write whose lock was lost must not land).
 */
export const writeFileAtomic = async (
  file: string,
  text: string,
  stillSafe: () => E.Either<ContextError, true> = () => E.right(true),
): Promise<E.Either<ContextError, void>> => {
  const { fs, path } = await nodeModules();
  written += 1;
  const temporary = `${file}.${process.pid}.${Date.now().toString(36)}${written}.tmp`;
  try {
    const handle = await fs.open(temporary, 'wx', 0o644);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    const safe = stillSafe();
    if (E.isLeft(safe)) {
      await fs.rm(temporary, { force: true });
      return safe;
    }
    await fs.rename(temporary, file);
    await syncDirectory(path.dirname(file));
    return E.right(undefined);
  } catch (error) {
    await fs.rm(temporary, { force: true }).catch(() => undefined);
    return E.left(ioError(`cannot write ${file}`, error));
  }
};

/** Flushes a directory entry (the rename) to disk; platforms that cannot open a directory skip it. */
const syncDirectory = async (directory: string): Promise<void> => {
  const { fs } = await nodeModules();
  try {
    const handle = await fs.open(directory, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Windows cannot fsync a directory; the rename itself is still atomic there.
  }
};

/** Writes `file` only when it does not exist yet (a user's own version is kept). */
export const writeFileIfMissing = async (file: string, text: string): Promise<E.Either<ContextError, void>> => {
  const { fs } = await nodeModules();
  try {
    await fs.writeFile(file, text, { encoding: 'utf8', flag: 'wx' });
    return E.right(undefined);
  } catch (error) {
    return errorCode(error) === 'EEXIST' ? E.right(undefined) : E.left(ioError(`cannot write ${file}`, error));
  }
};

/**
 * Creates `directory` and its parents; returns an undo that removes the folders this call
 * created, as long as they are still empty (a refused write leaves no trace).
 */
export const makeDirectory = async (directory: string): Promise<E.Either<ContextError, () => Promise<void>>> => {
  const { fs, path } = await nodeModules();
  try {
    const first = await fs.mkdir(directory, { recursive: true });
    return E.right(async () => {
      if (first === undefined) return;
      for (let dir = directory; ; dir = path.dirname(dir)) {
        if (
          !(await fs.rmdir(dir).then(
            () => true,
            () => false,
          )) ||
          dir === first ||
          dir === path.dirname(dir)
        )
          return;
      }
    });
  } catch (error) {
    return E.left(ioError(`cannot create ${directory}`, error));
  }
};

const exists = async (file: string): Promise<boolean> => {
  const { fs } = await nodeModules();
  return fs.access(file).then(
    () => true,
    () => false,
  );
};

/** Moves a broken `file` aside to `FILE.<time>.corrupt` (never over an earlier backup) and returns the backup's path. */
export const moveAside = async (file: string, at: number): Promise<E.Either<ContextError, string>> => {
  const { fs } = await nodeModules();
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
 * and rewrites the whole file. Measured here (`npm run bench -- --only=context`, a shared
 * 2-core machine under a load of 9 to 15): a write takes about 0.35 to 0.5 s plus 0.1 to
 * 0.23 s per MiB, at most 1.5 s at 4.5 MiB, so at the 5 MiB cap the 30 s wait lets some
 * twenty writers ahead finish.
 */
export const LOCK_WAIT_PER_MIB_MS = 3_000;

/** The lock wait for a file of `bytes`: the base, and more in proportion to the work each holder does. */
export const lockWaitFor = (bytes: number): number =>
  LOCK_WAIT_BASE_MS + Math.ceil(bytes / (1024 * 1024)) * LOCK_WAIT_PER_MIB_MS;

/** A lock dated further ahead than this was not made by a live writer on this machine (each refreshes it to now). */
const LOCK_FUTURE_TOLERANCE_MS = 2_000;

/** The pause before the next try for the lock: short and jittered at first (a small write holds it for milliseconds), then 40 to 80 ms. */
const lockPause = (attempt: number): number => Math.min(40, 5 * 1.2 ** attempt) * (1 + Math.random());

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Why the lock of `file` can never be taken by waiting, or undefined: a regular file (or a
 * link) where the lock folder belongs, or a lock folder dated in the future, which no writer on
 * this machine made (each writer keeps its lock's time at now) and which would not turn stale
 * for as long as it is ahead.
 */
const unusableLock = async (file: string, shown: string, now: number): Promise<ContextError | undefined> => {
  const { fs } = await nodeModules();
  const stat = await fs.lstat(`${file}.lock`).catch(() => undefined);
  if (stat === undefined) return undefined;
  if (!stat.isDirectory())
    return {
      code: 'io',
      message: `${shown}.lock is ${stat.isSymbolicLink() ? 'a symbolic link' : 'a file'}, not a lock (a writer's lock is a folder it makes and removes): remove it and try again`,
    };
  if (stat.mtimeMs > now + LOCK_FUTURE_TOLERANCE_MS)
    return {
      code: 'io',
      message: `${shown}.lock is dated ${new Date(stat.mtimeMs).toISOString()}, ${Math.round((stat.mtimeMs - now) / 1000)} s in the future: no writer on this machine holds it (a leftover from a clock that was ahead); remove the folder and try again`,
    };
  return undefined;
};

const TEMPORARY = /\.\d+\.[0-9a-z]+\.tmp$/u;

/**
 * Removes the temporary files that writers killed mid-write left next to `names` in
 * `directory`: those older than a stale lock (a live writer renames its file within
 * milliseconds, and holds the lock meanwhile). Called under the lock; best effort.
 */
export const removeStaleTemporaries = async (
  directory: string,
  names: ReadonlyArray<string>,
  now: number,
): Promise<void> => {
  const { fs, path } = await nodeModules();
  const entries = await fs.readdir(directory).catch((): string[] => []);
  for (const entry of entries) {
    if (!TEMPORARY.test(entry) || !names.some((name) => entry.startsWith(`${name}.`))) continue;
    const file = path.join(directory, entry);
    const stat = await fs.lstat(file).catch(() => undefined);
    if (stat?.isFile() === true && now - stat.mtimeMs > LOCK_STALE_MS)
      await fs.rm(file, { force: true }).catch(() => undefined);
  }
};

/**
 * Runs `work` holding the lock of `file` (a `FILE.lock` directory, proper-lockfile), so writers
 * in any process take turns. `work` gets a check that fails once the lock was compromised
 * (another process judged it stale and took it over).
 */
export const withFileLock = async <T>(
  file: string,
  waitMs: number,
  work: (stillLocked: () => E.Either<ContextError, true>) => Promise<E.Either<ContextError, T>>,
  /** How messages name `file` (default: as given). */
  shown: string = file,
): Promise<E.Either<ContextError, T>> => {
  const { fs, lockfile, path } = await nodeModules();
  let compromised: unknown;
  let release: (() => Promise<void>) | undefined;
  const deadline = Date.now() + waitMs;
  // Tries until the deadline itself, not a count of retries: the wait is what the docs say it is.
  for (let attempt = 0; release === undefined; attempt += 1) {
    try {
      // proper-lockfile retries every failure, a folder it may not write to too: fail at once instead.
      await fs.access(path.dirname(file), fs.constants.W_OK);
      release = await lockfile.lock(file, {
        realpath: false,
        stale: LOCK_STALE_MS,
        retries: 0,
        onCompromised: (error) => {
          compromised = error;
        },
      });
    } catch (error) {
      const unusable = attempt === 0 ? await unusableLock(file, shown, Date.now()) : undefined;
      if (unusable !== undefined) return E.left(unusable);
      if (errorCode(error) !== 'ELOCKED') return E.left(ioError(`cannot lock ${shown}`, error));
      const left = deadline - Date.now();
      if (left <= 0)
        return E.left({
          code: 'io',
          message: `cannot lock ${shown}: another writer held it for the whole wait (${Math.round(waitMs / 1000)} s)`,
        });
      await sleep(Math.min(left, lockPause(attempt)));
    }
  }
  try {
    return await work(() =>
      compromised === undefined ? E.right(true) : E.left(ioError(`lost the lock of ${file}`, compromised)),
    );
  } finally {
    await release().catch(() => undefined);
  }
};
