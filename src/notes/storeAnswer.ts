/**
 * What a notes store call answers: its result or a tagged failure, at once or later. Its own
 * module, so the store port and its lease capability both name it without importing each other.
 */
import type * as E from 'fp-ts/lib/Either.js';
import { type Failure, failure } from '../base/failure.js';

/** Why a store call did nothing: another writer saved first (`conflict`), or the store could not be reached or read. */
export type NotesStoreFailureCode = 'conflict' | 'unavailable';

/** A failed store call. */
export type NotesStoreFailure = Failure<NotesStoreFailureCode>;

/** A store's answer: at once, or later. */
export type StoreAnswer<T> = E.Either<NotesStoreFailure, T> | PromiseLike<E.Either<NotesStoreFailure, T>>;

/** A store failure of code `code`. */
export const storeFailure = (code: NotesStoreFailureCode, message: string): NotesStoreFailure => failure(code, message);
