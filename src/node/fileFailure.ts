/**
 * File system failures in words. The shells that touch files (the shared context, the session
 * log) report a failed call as one line; this is the one table they share. Pure: it reads the
 * `code` an error carries, and nothing else.
 */
import { type Failure, failure } from '../base/failure.js';
import { collapseWhitespace } from '../base/text.js';

const REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  EISDIR: 'it is a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOTDIR: 'a part of the path is not a directory',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is exceeded',
  EFBIG: 'the file would pass the largest size this process may write (a file size limit, as ulimit -f sets)',
  EROFS: 'the file system is read-only',
  ELOOP: 'it is a symbolic link, which is not followed',
  ELOCKED: 'another process held the lock for too long',
  ENOTREG: 'it is not a regular file (a FIFO, a socket or a device), which is not opened',
  ENXIO: 'it is not a regular file (a FIFO, a socket or a device), which is not opened',
  EHARDLINK: 'it is a hard link (a file with another name, maybe outside its folder), which is not written',
};

/** The `code` of a failed call (`ENOENT`, ...), or '' when it has none. */
export const fileErrorCode = (error: unknown): string =>
  typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : '';

/** A file system failure as one line. */
export const describeFileFailure = (error: unknown): string =>
  REASONS[fileErrorCode(error)] ?? collapseWhitespace(error instanceof Error ? error.message : String(error));

/** A failed file system call about `what` (`cannot write FILE`), as the one-line `io` failure every shell reports. */
export const ioFailure = (what: string, error: unknown): Failure<'io'> =>
  failure('io', `${what}: ${describeFileFailure(error)}`);
