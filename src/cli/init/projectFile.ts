/**
 * Reading a file of the project `init` sets up, whose every path a cloned repository chooses:
 * git stores symbolic links, so a `package.json` or a settings file may lead to `/dev/stdin` (a
 * read that waits for good, and that no signal ends), to `/dev/zero` (one that never ends) or to
 * a named pipe. A file is opened without following a last link and without blocking, and checked
 * to be a regular file on what was opened, before anything is read.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, readSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { isOutsideFailure } from '../boundary.js';

/** Opening never follows a last link (Windows has no such flag, nor links a clone makes). */
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;
/** Opening a named pipe with no writer, or a terminal, returns at once instead of waiting. */
const NON_BLOCKING = constants.O_NONBLOCK ?? 0;

/**
 * What `read` makes of the regular file at `absolute`, given it open; undefined when there is
 * nothing there, `not-a-file` for a folder, a pipe or a device. Throws what the system does (a
 * link as the last part of the path: ELOOP).
 */
const readRegularFile = <T>(absolute: string, read: (fd: number, stats: Stats) => T): T | 'not-a-file' | undefined => {
  let fd: number;
  try {
    fd = openSync(absolute, constants.O_RDONLY | NON_BLOCKING | NO_FOLLOW);
  } catch (error) {
    if (isOutsideFailure(error) && error.code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const stats = fstatSync(fd);
    return stats.isFile() ? read(fd, stats) : 'not-a-file';
  } finally {
    closeSync(fd);
  }
};

/** At most `limit` bytes of an open file; `too-large` when it holds more, which its size may not say (`/proc` says 0). */
const readUpTo = (fd: number, limit: number): Buffer | 'too-large' => {
  const buffer = Buffer.alloc(limit + 1);
  let length = 0;
  while (length < buffer.length) {
    const got = readSync(fd, buffer, length, buffer.length - length, null);
    if (got === 0) break;
    length += got;
  }
  return length > limit ? 'too-large' : buffer.subarray(0, length);
};

/** A package's manifest is a few kilobytes: one past this is no installation's, and is not read. */
const MANIFEST_LIMIT = 1024 * 1024;

/**
 * The `package.json` of `folder`, parsed; undefined when there is none to read: no file, a link,
 * no regular file (a device, a pipe), one over 1 MiB, one that cannot be read or is not JSON.
 */
export const readManifest = (folder: string): unknown => {
  try {
    const bytes = readRegularFile(join(folder, 'package.json'), (fd, stats) =>
      stats.size > MANIFEST_LIMIT ? 'too-large' : readUpTo(fd, MANIFEST_LIMIT),
    );
    return bytes instanceof Buffer ? (JSON.parse(bytes.toString('utf8')) as unknown) : undefined;
  } catch (error) {
    if (!(error instanceof SyntaxError || isOutsideFailure(error))) throw error;
    return undefined;
  }
};

/** UTF-8 that refuses what is not, and keeps a byte order mark as the text's first character. */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A file's bytes as UTF-8 text, `not-utf-8` when they are not. */
const decodeStrictly = (bytes: Buffer): string | 'not-utf-8' => {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch (error) {
    // A byte that is not UTF-8 would come back as U+FFFD: the file would change where nobody asked.
    if (error instanceof TypeError) return 'not-utf-8';
    throw error;
  }
};

/**
 * A settings file's text and permission bits, undefined when there is none, `not-utf-8` for
 * bytes that are not UTF-8, or `not-a-file` for a pipe, a folder or a device, which is refused
 * instead of waited on for good. Throws what the system does.
 */
export const readSettingsFile = (
  absolute: string,
): { text: string; mode: number } | 'not-a-file' | 'not-utf-8' | undefined =>
  readRegularFile(absolute, (fd, stats) => {
    const text = decodeStrictly(readFileSync(fd));
    return text === 'not-utf-8' ? text : { text, mode: stats.mode & 0o777 };
  });
