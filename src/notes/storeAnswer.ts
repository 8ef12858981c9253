/**
 * What a notes store call answers: its result or a tagged failure, at once or later. Its own
 * module, so the store port and its lease capability both name it without importing each other.
 */
import type * as E from 'fp-ts/lib/Either.js';
import { refuseArgument } from '../base/describe.js';
import { type Failure, failure } from '../base/failure.js';

/**
 * Why a store call did nothing: another writer saved first (`conflict`), a save made under a
 * lease its holder no longer holds (`fenced`: another tracker took it over), the store could
 * not be reached or read (`unavailable`), or the call holds what no store, or not this one, can
 * keep (`invalid_input`: a write that is none, a value that is no JSON, text PostgreSQL refuses),
 * which the same call made again cannot change.
 */
export type NotesStoreFailureCode = 'conflict' | 'fenced' | 'unavailable' | 'invalid_input';

/** A failed store call. */
export type NotesStoreFailure = Failure<NotesStoreFailureCode>;

/** A store's answer: at once, or later. */
export type StoreAnswer<T> = E.Either<NotesStoreFailure, T> | PromiseLike<E.Either<NotesStoreFailure, T>>;

/** A store failure of code `code`. A code or message that is no string is refused with a TypeError. */
export const storeFailure = (code: NotesStoreFailureCode, message: string): NotesStoreFailure => {
  if (typeof code !== 'string')
    refuseArgument('the code', code, 'a string (conflict, fenced, unavailable or invalid_input)');
  if (typeof message !== 'string') refuseArgument('the message', message, 'a string');
  return failure(code, message);
};
