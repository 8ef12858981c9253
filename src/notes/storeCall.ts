/**
 * Calling the notes store port on behalf of the machine: a `load` or `save` effect in, the input
 * that answers it out (at once when the store answered at once). The store is an adapter of
 * someone else's code: one that throws, rejects or answers with something that is not an
 * `Either` has failed as `unavailable`, never taken the runner down.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describeError, isPromiseLike } from '../base/describe.js';
import { isEither } from '../base/failure.js';
import type {
  NotesLeaseAnswered,
  NotesLeaseEffect,
  NotesListUnmergedEffect,
  NotesLoadEffect,
  NotesLoaded,
  NotesSaved,
  NotesSaveEffect,
  NotesUnmergedListed,
} from './inputs.js';
import type { LeaseAnswer, QueuedItem } from './leases.js';

/** An input answering a store call. */
export type StoreInput = NotesLoaded | NotesSaved | NotesLeaseAnswered | NotesUnmergedListed;

/** A store effect: what the runner carries out against the store. */
export type StoreEffect = NotesLoadEffect | NotesSaveEffect | NotesLeaseEffect | NotesListUnmergedEffect;
import {
  type NotesRecords,
  type NotesStore,
  type NotesStoreFailure,
  type NotesWritten,
  type StoreAnswer,
  type StoredRecord,
  storeFailure,
} from './store.js';

const unavailable = (error: unknown): E.Either<NotesStoreFailure, never> =>
  E.left(storeFailure('unavailable', `the notes store failed: ${describeError(error)}`));

const isVersioned = (value: unknown): boolean =>
  typeof value === 'object' &&
  value !== null &&
  Number.isInteger((value as StoredRecord).version) &&
  (value as StoredRecord).version >= 0;

const isRecords = (value: unknown): value is NotesRecords =>
  typeof value === 'object' &&
  value !== null &&
  isVersioned((value as NotesRecords).session) &&
  isVersioned((value as NotesRecords).profile);

const isWritten = (value: unknown): value is NotesWritten =>
  typeof value === 'object' &&
  value !== null &&
  Array.isArray((value as NotesWritten).sessions) &&
  (value as NotesWritten).sessions.every((entry) => typeof entry?.session === 'string' && isVersioned(entry)) &&
  ((value as NotesWritten).profile === undefined || Number.isInteger((value as NotesWritten).profile));

/** The answer as an `Either` of the shape asked for, or an `unavailable` failure saying what came instead. */
const checked = <T>(answer: unknown, isShape: (value: unknown) => value is T): E.Either<NotesStoreFailure, T> => {
  if (!isEither(answer)) return unavailable(new Error('the notes store answered with something that is not an Either'));
  if (E.isLeft(answer)) {
    const { code, message } = (answer.left ?? {}) as Partial<NotesStoreFailure>;
    return code === 'conflict' || code === 'fenced' || code === 'unavailable' || code === 'invalid_input'
      ? E.left(storeFailure(code, typeof message === 'string' ? message : code))
      : unavailable(new Error(`the notes store failed without a known code (${String(code)})`));
  }
  return isShape(answer.right)
    ? E.right(answer.right)
    : unavailable(new Error('the notes store answered with records of the wrong shape'));
};

/** The answer as `checked` reads it, where reading it runs the store's code (a getter, a Proxy trap) that may throw. */
const readAnswer = <T>(answer: unknown, isShape: (value: unknown) => value is T): E.Either<NotesStoreFailure, T> => {
  try {
    return checked(answer, isShape);
  } catch (error) {
    return unavailable(error);
  }
};

/**
 * The input answering a store call: what throws in the call, in its answer's `then`, or in
 * reading the answer, at once or once a promise settles, is an `unavailable` store, so every
 * call is answered, and once.
 */
const answered = <T, I>(
  call: () => StoreAnswer<T>,
  isShape: (value: unknown) => value is T,
  input: (outcome: E.Either<NotesStoreFailure, T>) => I,
): I | PromiseLike<I> => {
  let answer: unknown;
  try {
    answer = call();
    if (isPromiseLike(answer))
      return Promise.resolve(answer).then(
        (value) => input(readAnswer(value, isShape)),
        (error: unknown) => input(unavailable(error)),
      );
  } catch (error) {
    return input(unavailable(error));
  }
  return input(readAnswer(answer, isShape));
};

const isSeq = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0;

const isQueued = (value: unknown): value is QueuedItem =>
  typeof value === 'object' &&
  value !== null &&
  isSeq((value as QueuedItem).seq) &&
  ((value as QueuedItem).kind === 'message' || (value as QueuedItem).kind === 'stage') &&
  typeof (value as QueuedItem).origin === 'string';

const isLeaseAnswer = (value: unknown): value is LeaseAnswer =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as LeaseAnswer).held === 'boolean' &&
  Array.isArray((value as LeaseAnswer).added) &&
  (value as LeaseAnswer).added.every(isSeq) &&
  Array.isArray((value as LeaseAnswer).queue) &&
  (value as LeaseAnswer).queue.every(isQueued) &&
  ((value as LeaseAnswer).head === undefined || isSeq((value as LeaseAnswer).head)) &&
  ((value as LeaseAnswer).fence === undefined || Number.isSafeInteger((value as LeaseAnswer).fence));

/** Runs a `lease` effect against `store`'s leases: the `notes/leaseAnswered` input answering it. */
const callLeases = (
  store: NotesStore,
  effect: NotesLeaseEffect,
): NotesLeaseAnswered | PromiseLike<NotesLeaseAnswered> => {
  const { user, session, request } = effect;
  return answered(
    () =>
      store.leases === undefined
        ? E.left(storeFailure('unavailable', 'the notes store has no leases'))
        : store.leases.lease(user, session, request),
    isLeaseAnswer,
    (outcome): NotesLeaseAnswered => ({ type: 'notes/leaseAnswered', user, session, outcome }),
  );
};

const isSessionList = (value: unknown): value is ReadonlyArray<string> =>
  Array.isArray(value) && value.every((session) => typeof session === 'string');

/**
 * Runs a `listUnmerged` effect against `store`: the `notes/unmergedListed` input answering it.
 * A store that cannot list a user's sessions answers none: the end of stage merges what the
 * tracker holds, as it did before stores could.
 */
const callUnmerged = (
  store: NotesStore,
  effect: NotesListUnmergedEffect,
): NotesUnmergedListed | PromiseLike<NotesUnmergedListed> => {
  const { user, call } = effect;
  return answered(
    () => (store.unmergedSessions === undefined ? E.right([]) : store.unmergedSessions(user)),
    isSessionList,
    (outcome): NotesUnmergedListed => ({ type: 'notes/unmergedListed', user, call, outcome }),
  );
};

/** Runs a `load`, `save`, `lease` or `listUnmerged` effect against `store`: the input answering it. */
export const callStore = (store: NotesStore, effect: StoreEffect): StoreInput | PromiseLike<StoreInput> => {
  const { user } = effect;
  if (effect.type === 'lease') return callLeases(store, effect);
  if (effect.type === 'listUnmerged') return callUnmerged(store, effect);
  return effect.type === 'load'
    ? answered(
        () => store.load(user, effect.session),
        isRecords,
        (outcome): NotesLoaded => ({ type: 'notes/loaded', user, session: effect.session, outcome }),
      )
    : answered(
        () => store.save(user, effect.write),
        isWritten,
        (outcome): NotesSaved => ({ type: 'notes/saved', user, outcome }),
      );
};

/** True when a store's answer is still to come. */
export const isPending = <T>(answer: T | PromiseLike<T>): answer is PromiseLike<T> => isPromiseLike(answer);
