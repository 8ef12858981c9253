/**
 * A session store as a live session calls it: the store may be an adapter of the caller's own,
 * so each answer is checked to be what the port promises before the session reads it. A call
 * that throws, an answer that is no `Either`, a failure that is no `{ code, message }`, or a
 * `Right` the session reads that is not of its call's shape (a tail read, an append's result, the
 * lines set aside, a snapshot), is a bug in the store, answered as `internal` naming the call,
 * never handed on as the session's own answer: a `Left` of `null` or of a bare text would reach
 * the caller as a failure without a code, and a `Right` of `null` fail somewhere deep inside. As
 * a `Left`, a snapshot read so answered is read past as any unusable cache is.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describeError, kindOf } from '../../base/describe.js';
import { internalFailureSaying, isEither, isFailure } from '../../base/failure.js';
import { isRecord } from '../../base/record.js';
import { type SessionFollower, type SessionStore, type SessionStoreError } from './store.js';

/** A line number or a position in a log: a whole number, 0 or more. */
const isLineNumber = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) >= 0;

/** True for a list of `isItem`s; it stops at the first that is not one (a hole reads as undefined). */
const isListOf = (value: unknown, isItem: (item: unknown) => boolean): boolean => {
  if (!Array.isArray(value)) return false;
  for (const item of value as ReadonlyArray<unknown>) if (!isItem(item)) return false;
  return true;
};

const isStoredLine = (line: unknown): boolean =>
  isRecord(line) && isLineNumber(line['line']) && typeof line['text'] === 'string';

const isSetAsideLine = (line: unknown): boolean =>
  isRecord(line) && isLineNumber(line['line']) && typeof line['bytes'] === 'number' && typeof line['file'] === 'string';

/** What a call's `Right` must be, where the session reads it: a name for messages and a check. */
interface Shape {
  readonly name: string;
  readonly is: (right: unknown) => boolean;
}

const TAIL_READ: Shape = {
  name: 'a tail read',
  is: (right) =>
    isRecord(right) &&
    typeof right['exists'] === 'boolean' &&
    typeof right['restarted'] === 'boolean' &&
    typeof right['torn'] === 'boolean' &&
    isLineNumber(right['position']) &&
    isListOf(right['lines'], isStoredLine),
};

const APPEND_RESULT: Shape = {
  name: "an append's result",
  is: (right) => isRecord(right) && isLineNumber(right['position']) && isListOf(right['setAside'], isSetAsideLine),
};

const SET_ASIDE: Shape = { name: 'the lines set aside', is: (right) => isListOf(right, isSetAsideLine) };

const SNAPSHOT: Shape = {
  name: 'a snapshot or undefined',
  is: (right) =>
    right === undefined || (isRecord(right) && isLineNumber(right['position']) && typeof right['state'] === 'string'),
};

/** True when `check` holds; a getter or Proxy trap of the store's answer that throws while it runs makes it false. */
const holds = (check: () => boolean): boolean => {
  try {
    return check();
  } catch {
    return false;
  }
};

/**
 * The answer of the store's call `call`, or `internal` when it is not one the port allows (a
 * `Right` not of `shape`, when given) or the call threw. Only `exclusive` lets an exception
 * through, to the session's boundary: the work it runs is the session's own, whose bug is no
 * store's.
 */
const checkedAnswer = async <L, T>(
  call: string,
  work: () => Promise<E.Either<L, T>>,
  shape?: Shape,
  catches = true,
): Promise<E.Either<L | SessionStoreError, T>> => {
  let answer: unknown;
  try {
    answer = await work();
  } catch (error) {
    if (!catches) throw error;
    return E.left(internalFailureSaying(`the store's ${call} threw: ${describeError(error)}`));
  }
  if (!holds(() => isEither(answer)))
    return E.left(internalFailureSaying(`the store's ${call} answered ${kindOf(answer)}, not an Either`));
  const either = answer as E.Either<unknown, unknown>;
  if (E.isLeft(either) && !isFailure(either.left))
    return E.left(
      internalFailureSaying(`the store's ${call} failed with ${kindOf(either.left)}, not a { code, message }`),
    );
  if (E.isRight(either) && shape !== undefined && !holds(() => shape.is(either.right)))
    return E.left(
      internalFailureSaying(`the store's ${call} answered a Right of ${kindOf(either.right)}, not ${shape.name}`),
    );
  return answer as E.Either<L, T>;
};

/** `store` with each answer checked (`checkedAnswer`); the optional calls stay absent when it has none. */
export const checkedStore = (store: SessionStore): SessionStore => {
  const { exclusive, flush } = store;
  return {
    location: store.location,
    list: () => checkedAnswer('list', () => store.list()),
    read: (id, after, follower) => checkedAnswer('read', () => store.read(id, after, follower), TAIL_READ),
    append: (id, expected, lines, follower) =>
      checkedAnswer('append', () => store.append(id, expected, lines, follower), APPEND_RESULT),
    repair: (id, follower) => checkedAnswer('repair', () => store.repair(id, follower), SET_ASIDE),
    readSnapshot: (id, follower, atMost) =>
      checkedAnswer('readSnapshot', () => store.readSnapshot(id, follower, atMost), SNAPSHOT),
    writeSnapshot: (id, snapshot, follower) =>
      checkedAnswer('writeSnapshot', () => store.writeSnapshot(id, snapshot, follower)),
    delete: (id) => checkedAnswer('delete', () => store.delete(id)),
    backlog: (id) => store.backlog(id),
    close: () => store.close(),
    ...(exclusive === undefined
      ? {}
      : {
          exclusive: <L, T>(id: string, work: () => Promise<E.Either<L, T>>, follower?: SessionFollower) =>
            checkedAnswer(
              'exclusive',
              () => exclusive.call(store, id, work, follower) as Promise<E.Either<L, T>>,
              undefined,
              false,
            ),
        }),
    ...(flush === undefined ? {} : { flush: (id: string) => checkedAnswer('flush', () => flush.call(store, id)) }),
  };
};
