/**
 * A session store as a live session calls it: the store may be an adapter of the caller's own,
 * so each answer is checked to be what the port promises before the session reads it. A call
 * that throws, an answer that is no `Either`, or a failure that is no `{ code, message }`, is a
 * bug in the store, answered as `internal` naming the call, never handed on as the session's own
 * answer: a `Left` of `null` or of a bare text would reach the caller as a failure without a code.
 * As a `Left`, a snapshot read so answered is read past as any unusable cache is.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describeError, kindOf } from '../../base/describe.js';
import { internalFailureSaying, isEither } from '../../base/failure.js';
import { isRecord } from '../../base/record.js';
import { type SessionFollower, type SessionStore, type SessionStoreError } from './store.js';

/** True for a failure as the port's calls answer them: a code and a message, both texts. */
const isStoreFailure = (left: unknown): boolean =>
  isRecord(left) && typeof left['code'] === 'string' && typeof left['message'] === 'string';

/**
 * The answer of the store's call `call`, or `internal` when it is not one the port allows or the
 * call threw. Only `exclusive` lets an exception through, to the session's boundary: the work it
 * runs is the session's own, whose bug is no store's.
 */
const checkedAnswer = async <L, T>(
  call: string,
  work: () => Promise<E.Either<L, T>>,
  catches = true,
): Promise<E.Either<L | SessionStoreError, T>> => {
  let answer: unknown;
  try {
    answer = await work();
  } catch (error) {
    if (!catches) throw error;
    return E.left(internalFailureSaying(`the store's ${call} threw: ${describeError(error)}`));
  }
  if (!isEither(answer))
    return E.left(internalFailureSaying(`the store's ${call} answered ${kindOf(answer)}, not an Either`));
  if (E.isLeft(answer) && !isStoreFailure(answer.left))
    return E.left(
      internalFailureSaying(`the store's ${call} failed with ${kindOf(answer.left)}, not a { code, message }`),
    );
  return answer as E.Either<L, T>;
};

/** `store` with each answer checked (`checkedAnswer`); the optional calls stay absent when it has none. */
export const checkedStore = (store: SessionStore): SessionStore => {
  const { exclusive, flush } = store;
  return {
    location: store.location,
    list: () => checkedAnswer('list', () => store.list()),
    read: (id, after, follower) => checkedAnswer('read', () => store.read(id, after, follower)),
    append: (id, expected, lines, follower) =>
      checkedAnswer('append', () => store.append(id, expected, lines, follower)),
    repair: (id, follower) => checkedAnswer('repair', () => store.repair(id, follower)),
    readSnapshot: (id, follower, atMost) =>
      checkedAnswer('readSnapshot', () => store.readSnapshot(id, follower, atMost)),
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
              false,
            ),
        }),
    ...(flush === undefined ? {} : { flush: (id: string) => checkedAnswer('flush', () => flush.call(store, id)) }),
  };
};
