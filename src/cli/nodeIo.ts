/** `CliIo` on Node: the only module of the project that touches `process` and the file system. */
import { fstatSync, readFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, sep } from 'node:path';
import { isatty } from 'node:tty';
import {
  constants as fsConstants,
  lstat,
  open,
  readFile,
  readlink,
  realpath,
  rename,
  rm,
  stat,
} from 'node:fs/promises';
import * as E from 'fp-ts/lib/Either.js';
import { number } from '../base/count.js';
import { collapseWhitespace } from '../base/text.js';
import { decodeBytes } from '../core/history/encoding.js';
import type { Failure } from '../base/failure.js';
import { removeStaleTemporaries, TEMPORARY_SHAPE, temporaryName } from '../node/atomicWrite.js';
import { drained } from '../node/drain.js';
import { NO_WORKING_DIRECTORY } from '../live/session/project.js';
import { withFileLock } from '../node/lock.js';
import { isReadOnly } from '../node/readOnly.js';
import { isOutsideFailure, OutputFailure, uncaughtLine } from './boundary.js';
import { type ByteStream, type CliIo, type OpenOptions, ReadFailure } from './io.js';
import { isColourWanted } from './style.js';

const REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  EISDIR: 'it is a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOTDIR: 'a part of the path is not a directory',
  ELOOP: 'its symbolic links lead round in a loop',
  ENOSPC: 'no space left on the device',
  EROFS: 'the file system is read-only',
  ENAMETOOLONG: 'the name is too long',
};

/** Why a link is not read where only a regular file is (`OpenOptions.regularFile`). */
const SYMBOLIC_LINK = 'it is a symbolic link, which is not followed';

const describeFailure = (error: unknown): string => {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
  return REASONS[code] ?? collapseWhitespace(error instanceof Error ? error.message : String(error));
};

/** How a file is named in messages. */
const nameOf = (file: string): string => (file === '-' ? 'standard input' : file);

/**
 * Standard input, refused when it is a directory: `replay - < dir` would otherwise read as an
 * empty history (Node ends the stream without an error).
 */
const openStdin = (): E.Either<string, ByteStream> => {
  const stats = fstatSync(0);
  if (stats.isDirectory()) return E.left(`cannot read standard input: ${REASONS['EISDIR']!}`);
  return E.right({
    chunks: process.stdin as AsyncIterable<Uint8Array>,
    ...(stats.isFile() ? { size: stats.size } : {}),
  });
};

/** The chunks, a failed read half-way turned into a `ReadFailure` whose message is one line naming the file. */
async function* describingFailures(chunks: AsyncIterable<Uint8Array>, file: string): AsyncGenerator<Uint8Array> {
  try {
    yield* chunks;
  } catch (error) {
    if (!isOutsideFailure(error)) throw error;
    throw new ReadFailure(`cannot read ${nameOf(file)}: ${describeFailure(error)}`, { cause: error });
  }
}

/** Chunks of 256 KiB: one await per chunk, not per line, and few of them. */
const CHUNK_BYTES = 256 * 1024;

const openStream = async (file: string, options: OpenOptions = {}): Promise<E.Either<string, ByteStream>> => {
  const regularFile = options.regularFile === true;
  try {
    if (file === '-')
      return E.map((stream: ByteStream) => ({ ...stream, chunks: describingFailures(stream.chunks, file) }))(
        openStdin(),
      );
    // A regular file only: no link followed, and a pipe opened without waiting for a writer, to be refused.
    const handle = await open(
      file,
      regularFile ? fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK : 'r',
    );
    const stats = await handle.stat();
    if (stats.isDirectory() || (regularFile && !stats.isFile())) {
      await handle.close();
      return E.left(`cannot read ${file}: ${stats.isDirectory() ? REASONS['EISDIR']! : 'it is not a regular file'}`);
    }
    const stream = handle.createReadStream({ highWaterMark: CHUNK_BYTES }) as AsyncIterable<Uint8Array>;
    return E.right({ chunks: describingFailures(stream, file), ...(stats.isFile() ? { size: stats.size } : {}) });
  } catch (error) {
    if (!isOutsideFailure(error)) throw error;
    return E.left(
      `cannot read ${nameOf(file)}: ${regularFile && error.code === 'ELOOP' ? SYMBOLIC_LINK : describeFailure(error)}`,
    );
  }
};

/** Thrown (and caught below) when an input is longer than its bound. */
class TooLarge extends Error {}

const readStdin = async (maxBytes: number): Promise<string> => {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of process.stdin) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    total += bytes.length;
    if (total > maxBytes) throw new TooLarge();
    chunks.push(bytes);
  }
  return decodeBytes(Buffer.concat(chunks));
};

/** At most `maxBytes` of `file`, read in chunks, so a huge file or an endless device costs only its bound. */
const readBounded = async (file: string, maxBytes: number): Promise<string> => {
  const handle = await open(file, 'r');
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buffer = Buffer.alloc(Math.min(64 * 1024, maxBytes + 1 - total));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) throw new TooLarge();
      chunks.push(buffer.subarray(0, bytesRead));
    }
    return decodeBytes(Buffer.concat(chunks, total));
  } finally {
    await handle.close();
  }
};

const readText = async (file: string, maxBytes?: number): Promise<E.Either<string, string>> => {
  const what = nameOf(file);
  try {
    if (file === '-') {
      const stdin = openStdin();
      return E.isLeft(stdin) ? stdin : E.right(await readStdin(maxBytes ?? Number.POSITIVE_INFINITY));
    }
    return E.right(maxBytes === undefined ? decodeBytes(await readFile(file)) : await readBounded(file, maxBytes));
  } catch (error) {
    if (!(error instanceof TooLarge || isOutsideFailure(error))) throw error;
    return E.left(
      error instanceof TooLarge
        ? `cannot read ${what}: it is larger than the ${number(maxBytes ?? Number.POSITIVE_INFINITY)} bytes it may have`
        : `cannot read ${what}: ${describeFailure(error)}`,
    );
  }
};

/** The process's working directory; undefined when it was deleted (Node throws then). */
const currentDirectory = (): string | undefined => {
  try {
    return process.cwd();
  } catch (error) {
    if (!isOutsideFailure(error)) throw error;
    return undefined;
  }
};

/**
 * Writes through a temporary file beside FILE, then renames it over FILE. The temporary name
 * is unpredictable and created exclusively (`wx`: it must not exist, and a symlink planted at
 * it is not followed), so nobody who can write the directory can make the write land elsewhere.
 */
const writeText = async (file: string, text: string, mode = 0o644): Promise<E.Either<string, void>> => {
  const temporary = temporaryName(file);
  let created = false;
  try {
    const handle = await open(temporary, 'wx', mode);
    created = true;
    try {
      // Exactly the mode asked for: the umask only narrows what a new file gets.
      if (mode !== 0o644) await handle.chmod(mode);
      await handle.writeFile(text, 'utf8');
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
    return E.right(undefined);
  } catch (error) {
    if (!isOutsideFailure(error)) throw error;
    // Only tidying: the failure to report is the write's.
    if (created)
      await rm(temporary, { force: true }).catch((tidying: unknown) => {
        if (!isOutsideFailure(tidying)) throw tidying;
      });
    return E.left(`cannot write ${file}: ${describeFailure(error)}`);
  }
};

/** How long `updateText` waits for another process's update of the file, and when its lock counts as abandoned. */
const UPDATE_LOCK = { staleMs: 10_000, waitMs: 60_000 } as const;

/** The temporary file of an update by an earlier release, `FILE.RANDOM.tmp` (16 hexadecimal digits), past `FILE.`. */
const EARLIER_TEMPORARY = /^[0-9a-f]{16}\.tmp$/u;

/** The text of FILE, undefined when it does not exist. */
const readExisting = async (file: string): Promise<E.Either<string, string | undefined>> => {
  try {
    return E.right(decodeBytes(await readFile(file)));
  } catch (error) {
    if (!isOutsideFailure(error)) throw error;
    return error.code === 'ENOENT' ? E.right(undefined) : E.left(`cannot read ${file}: ${describeFailure(error)}`);
  }
};

/** What a file that is not a regular one is, for a message. */
const kindOf = (stats: Awaited<ReturnType<typeof stat>>): string =>
  stats.isDirectory()
    ? 'a directory'
    : stats.isCharacterDevice() || stats.isBlockDevice()
      ? 'a device'
      : stats.isFIFO()
        ? 'a pipe'
        : stats.isSocket()
          ? 'a socket'
          : 'not a regular file';

/**
 * FILE, made new: its folder must be there (else the lock beside FILE, the first thing made,
 * fails with no word of why). A FILE that ends in a separator (`x/`) names a folder, and no file
 * was found there: it is that folder that does not exist, not a file to make.
 */
const newFileTarget = async (file: string): Promise<E.Either<string, { path: string }>> => {
  const namesFolder = file.endsWith('/') || file.endsWith(sep);
  const folder = namesFolder ? file : dirname(file);
  const there =
    !namesFolder &&
    (await stat(folder).then(
      (stats) => stats.isDirectory(),
      (error: unknown) => {
        if (!isOutsideFailure(error)) throw error;
        return false;
      },
    ));
  return there ? E.right({ path: file }) : E.left(`cannot save into ${file}: there is no folder ${folder}`);
};

/** How many links a name may lead through, as Linux counts them before it says ELOOP. */
const MAX_LINKS = 40;

/** A missing folder, or a name in a path that is no folder: nowhere to make a file. */
const isNoFolder = (error: NodeJS.ErrnoException): boolean => error.code === 'ENOENT' || error.code === 'ENOTDIR';

/**
 * The name a link to nothing at FILE leads to at the end of its chain of links (undefined when
 * FILE is no link): a relative target is read from the real folder of the link that holds it, as
 * the system reads it, and left as written (`..` after a linked folder is the system's to resolve).
 * Also the target as the last link writes it, for messages.
 */
const linkEnd = async (file: string): Promise<{ end: string; linksTo: string } | undefined> => {
  let path = file;
  let linksTo: string | undefined;
  for (let links = 0; links <= MAX_LINKS; links += 1) {
    const stats = await lstat(path).catch((error: unknown) => {
      if (!isOutsideFailure(error) || !isNoFolder(error)) throw error;
      return undefined;
    });
    if (stats?.isSymbolicLink() !== true) return linksTo === undefined ? undefined : { end: path, linksTo };
    linksTo = await readlink(path);
    path = isAbsolute(linksTo) ? linksTo : `${await realpath(dirname(path))}${sep}${linksTo}`;
  }
  throw Object.assign(new Error('too many symbolic links'), { code: 'ELOOP', syscall: 'lstat' });
};

/**
 * FILE made new, or, when FILE is a link to nothing, the file it links to (the link stays): the
 * folder it is made in must be there (else the lock beside it, the first thing made, fails with no
 * word of why, and a link would be replaced by a file).
 */
const missingTarget = async (file: string): Promise<E.Either<string, { path: string }>> => {
  const link = await linkEnd(file);
  if (link === undefined) return newFileTarget(file);
  const { end, linksTo } = link;
  const name = basename(end);
  if (name === '' || name === '.' || name === '..' || end.endsWith(sep) || end.endsWith('/'))
    return E.left(`cannot save into ${file}: it links to ${linksTo}, which names no file`);
  const real = await realpath(dirname(end)).then(
    async (path) => ((await stat(path)).isDirectory() ? path : undefined),
    (error: unknown) => {
      if (!isOutsideFailure(error) || !isNoFolder(error)) throw error;
      return undefined;
    },
  );
  return real === undefined
    ? E.left(`cannot save into ${file}: it links to ${linksTo}, whose folder does not exist`)
    : E.right({ path: join(real, name) });
};

/**
 * Where an update of FILE lands and the mode it keeps: FILE itself when nothing is there yet, the
 * file a link to nothing links to (made new: the link stays), else the regular file FILE is or
 * links to, with its permission bits.
 * Anything else (a folder, a device such as /dev/null, a pipe, a read-only file, a file behind a
 * folder this user may not enter) is refused, before any lock is taken beside it: replacing it
 * would lose it, or wait on it forever.
 */
const updateTarget = async (file: string): Promise<E.Either<string, { path: string; mode?: number }>> => {
  try {
    const stats = await stat(file);
    if (!stats.isFile()) return E.left(`cannot save into ${file}: it is ${kindOf(stats)}`);
    if (isReadOnly(file, stats.mode)) return E.left(`cannot save into ${file}: it is read-only`);
    return E.right({ path: await realpath(file), mode: stats.mode & 0o7777 });
  } catch (error) {
    if (!isOutsideFailure(error)) throw error;
    if (error.code === 'ENOENT')
      return missingTarget(file).catch((failure: unknown) => {
        if (!isOutsideFailure(failure)) throw failure;
        return E.left(`cannot save into ${file}: ${describeFailure(failure)}`);
      });
    // Looking a file up needs no permission on it, only on the folders that lead to it.
    if (error.code === 'EACCES' || error.code === 'EPERM')
      return E.left(`cannot save into ${file}: permission denied (a folder on its path may not be entered)`);
    return E.left(`cannot save into ${file}: ${describeFailure(error)}`);
  }
};

/**
 * Reads FILE, writes what `update` makes of it: all under the file's lock, so updates in several
 * processes take turns. Through a link, the file it links to is updated (the link stays), and a
 * file keeps its permission bits.
 */
const updateText = async (
  file: string,
  update: (current: string | undefined) => E.Either<string, string>,
): Promise<E.Either<string, void>> => {
  const before = await updateTarget(file);
  if (E.isLeft(before)) return before;
  const { path } = before.right;
  const updated = await withFileLock(path, UPDATE_LOCK, async (stillLocked) => {
    // Again under the lock: what is there now is what is replaced.
    const target = await updateTarget(path);
    if (E.isLeft(target)) return target;
    // What updates killed mid-write left beside the file, in its real folder (`path` is resolved):
    // a live update holds the lock, and renames its own within its stale time.
    removeStaleTemporaries(dirname(path), [basename(path)], Date.now(), UPDATE_LOCK.staleMs, [
      TEMPORARY_SHAPE,
      EARLIER_TEMPORARY,
    ]);
    const current = await readExisting(path);
    if (E.isLeft(current)) return current;
    const next = update(current.right);
    if (E.isLeft(next)) return next;
    const locked = stillLocked();
    return E.isLeft(locked) ? E.left(locked.left.message) : writeText(path, next.right, target.right.mode);
  });
  return E.mapLeft((reason: string | Failure<'io'>) => (typeof reason === 'string' ? reason : reason.message))(updated);
};

const version = (): E.Either<string, string> => {
  try {
    const manifest: unknown = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    const value =
      typeof manifest === 'object' && manifest !== null && 'version' in manifest ? manifest.version : undefined;
    return typeof value === 'string' ? E.right(value) : E.left('package.json has no version');
  } catch (error) {
    if (!(error instanceof SyntaxError || isOutsideFailure(error))) throw error;
    return E.left(`cannot read package.json: ${describeFailure(error)}`);
  }
};

/**
 * Standard output's reader, as the process sees it: `gone` once it closed the pipe early
 * (`fact-tracker replay f | head`); `outlived` when the command asked to run to its end even so,
 * because it writes a file too (`replay --save`); `status`, what a process that ends then exits
 * with. One process has one standard output.
 */
const stdoutReader = { gone: false, outlived: false, status: 0 };

/**
 * A failed write to standard output, as the boundaries report it, or undefined when there is
 * nothing to report. A reader that closes the pipe early is not an error: the process ends
 * quietly then, or, when the command asked to outlive its reader, runs on with its output dropped.
 */
const outputFailure = (error: unknown): OutputFailure | undefined => {
  if (!isOutsideFailure(error)) throw error;
  if (error.code === 'EPIPE') {
    if (!stdoutReader.outlived) process.exit(process.exitCode ?? stdoutReader.status);
    stdoutReader.gone = true;
    return undefined;
  }
  return new OutputFailure(`cannot write standard output: ${describeFailure(error)}`, { cause: error });
};

/** A failed write to a pipe arrives later, as an event (to a file, the write itself throws). */
const onStdoutError = (error: unknown): void => {
  // Once the reader is gone, what the closed stream still says of the writes it drops is no news.
  if (stdoutReader.gone) return;
  const failure = outputFailure(error);
  if (failure !== undefined) throw failure;
};

/**
 * Standard error's reader, as the process sees it: `gone` once a write to it failed (its pipe
 * closed by the process that started us). One process has one standard error.
 */
const stderrReader = { gone: false };

/**
 * A failed write to standard error, which arrives as an event: there is nothing left to tell
 * it on, so what the process had to say there is dropped and its work goes on (an MCP server
 * whose client closed that pipe still serves the client, instead of ending on its first
 * warning).
 */
const onStderrError = (error: unknown): void => {
  if (!isOutsideFailure(error)) throw error;
  stderrReader.gone = true;
};

/**
 * The last resort of a process, for an exception no boundary saw (thrown in a stream's
 * callback, a rejection nobody awaited): its one line and exit `status`, instead of Node's
 * stack trace.
 */
export const exitOnUncaughtError = (status: number): void => {
  const exit = (error: unknown): void => {
    process.stderr.write(uncaughtLine(error));
    process.exit(status);
  };
  process.on('uncaughtException', exit);
  process.on('unhandledRejection', exit);
  // A library's warning (the PostgreSQL driver's about sslmode, over a dozen lines) in one line,
  // as every message of the command is, instead of Node's own print of it.
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    process.stderr.write(`fact-tracker: warning: ${collapseWhitespace(`${warning.name}: ${warning.message}`)}\n`);
  });
};

/** True when the file descriptor `fd` is a folder (false when it cannot be looked at). */
const isFolderAt = (fd: number): boolean => {
  try {
    return fstatSync(fd).isDirectory();
  } catch {
    return false;
  }
};

/** Writes text or bytes to standard output, unless its reader is gone. */
const writeStdout = (data: string | Uint8Array): void => {
  if (stdoutReader.gone) return;
  try {
    process.stdout.write(data);
  } catch (error) {
    const failure = outputFailure(error);
    if (failure !== undefined) throw failure;
  }
};

/**
 * `operation` on FILE, refused at once when FILE is relative and the working directory it is
 * relative to was deleted: the system would say there is no such file (or fail to make the
 * lock beside it), when the file may well be there.
 */
const fromWorkingDirectory =
  <A extends ReadonlyArray<unknown>, T>(
    cwd: string | undefined,
    verb: string,
    operation: (file: string, ...rest: A) => Promise<E.Either<string, T>>,
  ) =>
  (file: string, ...rest: A): Promise<E.Either<string, T>> =>
    cwd === undefined && file !== '-' && !isAbsolute(file)
      ? Promise.resolve(E.left(`cannot ${verb} ${file}: ${NO_WORKING_DIRECTORY}`))
      : operation(file, ...rest);

/** The real streams and files of this process. */
export const createNodeIo = (): CliIo => {
  const cwd = currentDirectory();
  // Once per process, however many times the streams are asked for.
  if (!process.stdout.listeners('error').includes(onStdoutError)) process.stdout.on('error', onStdoutError);
  if (!process.stderr.listeners('error').includes(onStderrError)) process.stderr.on('error', onStderrError);
  return {
    readText: fromWorkingDirectory(cwd, 'read', readText),
    openStream: fromWorkingDirectory(cwd, 'read', openStream),
    writeText: fromWorkingDirectory(cwd, 'write', writeText),
    updateText: fromWorkingDirectory(cwd, 'save into', updateText),
    stdout: writeStdout,
    stdoutBytes: writeStdout,
    outliveReader: () => {
      stdoutReader.outlived = true;
    },
    statusIfCut: (status) => {
      stdoutReader.status = status;
    },
    stderr: (text) => {
      if (!stderrReader.gone) process.stderr.write(text);
    },
    drain: async () => {
      // A pipe whose reader is gone never drains: waiting on it would end the process, its work undone.
      await Promise.all([stdoutReader.gone ? undefined : drained(process.stdout), drained(process.stderr)]);
    },
    colour: isColourWanted(process.stdout.isTTY === true, process.env),
    stderrIsTty: process.stderr.isTTY === true,
    stdoutIsTty: process.stdout.isTTY === true,
    stdinIsTty: isatty(0),
    stdinIsFolder: isFolderAt(0),
    version,
    ...(cwd === undefined ? {} : { cwd }),
    env: process.env,
    stdio: { input: process.stdin, output: process.stdout },
  };
};
