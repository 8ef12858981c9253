/**
 * Expected failures as values. Every product reports what went wrong as a `Failure`: a tag
 * code branches on and one line for people. `internal` is the one code no input can earn: a
 * shell's outermost boundary turns an exception nobody expected (a bug) into it, so a bug
 * surfaces as a `Left` instead of an answer that looks like "nothing relevant".
 */
import type * as E from 'fp-ts/lib/Either.js';
import { describeError } from './describe.js';

/** An expected failure: a code to branch on and a one-line message. */
export interface Failure<C extends string = string> {
  readonly code: C;
  readonly message: string;
}

/** The code of an unexpected exception caught at a shell's boundary. */
export const INTERNAL = 'internal';

/** A failure of code `code`. */
export const failure = <C extends string>(code: C, message: string): Failure<C> => ({ code, message });

/** An internal failure whose exception is told by `description` (a description cleaned of what it may not show). */
export const internalFailureSaying = (description: string): Failure<typeof INTERNAL> =>
  failure(INTERNAL, `unexpected failure (a bug; please report it): ${description}`);

/** What a shell's boundary returns for an exception it did not expect. Never throws. */
export const internalFailure = (error: unknown): Failure<typeof INTERNAL> =>
  internalFailureSaying(describeError(error));

/**
 * True when `value` is an `Either`: what a caller's function (a store, a change, a check) must
 * answer. Anything else is the caller's mistake, told as such rather than read as an answer.
 */
export const isEither = (value: unknown): value is E.Either<unknown, unknown> =>
  typeof value === 'object' &&
  value !== null &&
  ((value as E.Either<unknown, unknown>)._tag === 'Left' || (value as E.Either<unknown, unknown>)._tag === 'Right');

/**
 * True for a failure as a caller's function (a store, a change) must answer one: an object with a
 * code and a message, both texts. A `Left` of null or of a bare text would otherwise reach a caller
 * as a failure without a code. Never throws: a value whose fields cannot be read is none.
 */
export const isFailure = (value: unknown): value is Failure => {
  try {
    return (
      typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value) &&
      typeof (value as Failure).code === 'string' &&
      typeof (value as Failure).message === 'string'
    );
  } catch {
    return false;
  }
};
