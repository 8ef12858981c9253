/**
 * Durable file operations for the context shell: atomic writes (a temporary file in the same
 * directory, fsync, rename, fsync of the directory), a cross-process lock from
 * proper-lockfile, and moving a broken file aside to a timestamped backup.
 */
import * as E from 'fp-ts/lib/Either.js';
import { collapseWhitespace } from '../../base/text.js';
import type { ContextError } from '../model.js';
import { nodeModules } from './modules.js';

const REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  EISDIR: 'it is a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOTDIR: 'a part of the path is not a directory',
  ENOSPC: 'no space left on the device',
  EROFS: 'the file system is read-only',
  ELOCKED: 'another process held the lock for too long',
};

const errorCode = (error: unknown): string =>
  typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : '';

/** A file system failure as one line. */
export const describeFailure = (error: unknown): string =>
  REASONS[errorCode(error)] ?? collapseWhitespace(error instanceof Error ? error.message : String(error));

/** An I/O error about `what`. */
export const ioError = (what: string, error: unknown): ContextError => ({
  code: 'io',
  message: `${what}: ${describeFailure(error)}`,
});

/** The text of `file`, or undefined when there is no such file. */
export const readTextIfExists = async (file: string): Promise<E.Either<ContextError, string | undefined>> => {
  const { fs } = await nodeModules();
  try {
    return E.right(await fs.readFile(file, 'utf8'));
  } catch (error) {
    return errorCode(error) === 'ENOENT' ? E.right(undefined) : E.left(ioError(`cannot read ${file}`, error));
  }
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

/** Creates `directory` and its parents. */
export const makeDirectory = async (directory: string): Promise<E.Either<ContextError, void>> => {
  const { fs } = await nodeModules();
  try {
    await fs.mkdir(directory, { recursive: true });
    return E.right(undefined);
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

/**
 * How a writer waits for the lock: short, jittered retries (a write holds it for milliseconds),
 * for about fifteen seconds in all, longer than a crashed holder's lock takes to turn stale.
 */
const LOCK_RETRIES = { retries: 250, factor: 1.2, minTimeout: 5, maxTimeout: 60, randomize: true };

/**
 * Runs `work` holding the lock of `file` (a `FILE.lock` directory, proper-lockfile), so writers
 * in any process take turns. `work` gets a check that fails once the lock was compromised
 * (another process judged it stale and took it over).
 */
export const withFileLock = async <T>(
  file: string,
  work: (stillLocked: () => E.Either<ContextError, true>) => Promise<E.Either<ContextError, T>>,
): Promise<E.Either<ContextError, T>> => {
  const { lockfile } = await nodeModules();
  let compromised: unknown;
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(file, {
      realpath: false,
      stale: 10_000,
      retries: LOCK_RETRIES,
      onCompromised: (error) => {
        compromised = error;
      },
    });
  } catch (error) {
    return E.left(ioError(`cannot lock ${file}`, error));
  }
  try {
    return await work(() =>
      compromised === undefined ? E.right(true) : E.left(ioError(`lost the lock of ${file}`, compromised)),
    );
  } finally {
    await release().catch(() => undefined);
  }
};
