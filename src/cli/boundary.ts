/**
 * What reaches the command line's outermost boundaries (the router, the bare hook, a process's
 * last-resort handlers) and the one line each gets: a failed write to standard output is the
 * outside world's and says so; anything else is a bug, reported as an internal error. Never a
 * stack trace, never an empty answer: everything below the boundaries lets an exception it did
 * not expect through to them.
 */
import { describeError } from '../base/describe.js';
import { collapseWhitespace } from '../base/text.js';

/**
 * True for a failed system call (a file, a pipe, a directory: what the outside world can make
 * fail), as opposed to an exception of the code itself, which is a bug and must surface.
 */
export const isSystemError = (error: unknown): error is NodeJS.ErrnoException =>
  error instanceof Error && typeof (error as NodeJS.ErrnoException).syscall === 'string';

/** Standard output could not be written (a full disk, a closed descriptor); its message is one line. */
export class OutputFailure extends Error {}

/** The line an exception that reached a boundary is reported with. */
export const uncaughtLine = (error: unknown): string =>
  error instanceof OutputFailure
    ? `fact-tracker: ${error.message}\n`
    : `fact-tracker: internal error: ${collapseWhitespace(describeError(error))}\n`;
