/**
 * Reading a record the store answered with, pure: the value new to the machine, or the version
 * it holds unreadable, and the reports of what was left out of it or why it cannot be used.
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import type { Failure } from '../base/failure.js';
import { isRecord } from '../base/record.js';
import type { NotesEffect, StoreCallFailure } from './inputs.js';
import type { ReadRecord } from './persist.js';
import type { JsonValue, StoredRecord } from './store.js';

/** Why a record the store returned cannot be used. */
type RecordFailure = Failure<'invalid_notes'>;

/** The most entries left out of a record that a report names; the rest are counted. */
const NAMED_WARNINGS = 5;

/** The report of the entries left out of a record read, if any (code `invalid_notes`, as an unreadable record). */
export const leftOut = (user: string, warnings: ReadonlyArray<string>): NotesEffect[] => {
  if (warnings.length === 0) return [];
  const rest = warnings.length - NAMED_WARNINGS;
  const message = `${warnings.slice(0, NAMED_WARNINGS).join('; ')}${rest > 0 ? `; and ${rest} more` : ''}`;
  return [{ type: 'storeFailed', user, failure: { code: 'invalid_notes', message } }];
};

/** The effect reporting a store failure of `user`. */
export const reported = (user: string, failed: StoreCallFailure): NotesEffect => ({
  type: 'storeFailed',
  user,
  failure: failed,
});

/** True when a stored session record says it was merged (it holds a `mergedAt`), read loosely as `awaitsMerge` reads it. */
export const isMergedRecord = (record: StoredRecord): boolean =>
  record.version > 0 && isRecord(record.value) && record.value['mergedAt'] !== undefined;

/**
 * A record as a load found it: its value where it is new to the machine and readable (the entries
 * left out reported), or the version it holds unreadable (reported once per version).
 */
export interface RecordRead<T> {
  readonly value: T | undefined;
  readonly unreadable: number | undefined;
  readonly problems: ReadonlyArray<NotesEffect>;
  /** The entries of other trackers' categories it holds, when it was read or is absent (`undefined`: as before). */
  readonly foreign: ReadonlyArray<JsonValue> | undefined;
}

/** Reads `record` unless the store holds none, the machine knows its version, or it was found unreadable at that version. */
export const readRecord = <T>(
  user: string,
  record: StoredRecord,
  known: number | undefined,
  unreadableAt: number | undefined,
  read: (value: unknown, categories: ReadonlyArray<string>) => E.Either<RecordFailure, ReadRecord<T>>,
  categories: ReadonlyArray<string>,
): RecordRead<T> => {
  if (record.version === 0 || record.value === undefined)
    return { value: undefined, unreadable: undefined, problems: [], foreign: [] };
  if (record.version === known) return { value: undefined, unreadable: undefined, problems: [], foreign: undefined };
  if (record.version === unreadableAt)
    return { value: undefined, unreadable: unreadableAt, problems: [], foreign: undefined };
  return pipe(
    read(record.value, categories),
    E.match(
      (problem): RecordRead<T> => ({
        value: undefined,
        unreadable: record.version,
        problems: [reported(user, problem)],
        foreign: undefined,
      }),
      ({ record: value, warnings, foreign }): RecordRead<T> => ({
        value,
        unreadable: undefined,
        problems: leftOut(user, warnings),
        foreign,
      }),
    ),
  );
};
