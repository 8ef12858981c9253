/**
 * What reaches the command line's outermost boundaries (the router, the bare hook, a process's
 * last-resort handlers) and the one line each gets: a failed write to standard output is the
 * outside world's and says so; anything else is a bug, reported as an internal error. Never a
 * stack trace, never an empty answer: everything below the boundaries lets an exception it did
 * not expect through to them.
 */
import { describeError } from '../base/describe.js';
import { collapseWhitespace } from '../base/text.js';

/** Node's refusals of a file too large to read as one string (over 2 GiB, or 512 Mi characters): the input's size. */
const TOO_LARGE_CODES: ReadonlySet<unknown> = new Set(['ERR_FS_FILE_TOO_LARGE', 'ERR_STRING_TOO_LONG']);

/**
 * True for a failure the outside world caused: a failed system call (a file, a pipe, a
 * directory) or a file too large to read whole, as opposed to an exception of the code itself,
 * which is a bug and must surface.
 */
export const isOutsideFailure = (error: unknown): error is NodeJS.ErrnoException =>
  error instanceof Error &&
  (typeof (error as NodeJS.ErrnoException).syscall === 'string' ||
    TOO_LARGE_CODES.has((error as NodeJS.ErrnoException).code));

/** Standard output could not be written (a full disk, a closed descriptor); its message is one line. */
export class OutputFailure extends Error {}

/** The line an exception that reached a boundary is reported with. */
export const uncaughtLine = (error: unknown): string =>
  error instanceof OutputFailure
    ? `fact-tracker: ${error.message}\n`
    : `fact-tracker: internal error: ${collapseWhitespace(describeError(error))}\n`;
