/**
 * A session store as a live session calls it: the store may be an adapter of the caller's own,
 * so each answer is checked to be what the port promises before the session reads it. An answer
 * that is no `Either`, or a failure that is no `{ code, message }`, is a bug in the store,
 * answered as `internal` as the session's boundary answers a store that throws, never handed on
 * as the session's own answer: a `Left` of `null` or of a bare text would reach the caller as a
 * failure without a code.
 */
import * as E from 'fp-ts/lib/Either.js';
import { kindOf } from '../../base/describe.js';
import { internalFailureSaying, isEither } from '../../base/failure.js';
import { isRecord } from '../../base/record.js';
import { type SessionFollower, type SessionStore, type SessionStoreError } from './store.js';

/** True for a failure as the port's calls answer them: a code and a message, both texts. */
const isStoreFailure = (left: unknown): boolean =>
  isRecord(left) && typeof left['code'] === 'string' && typeof left['message'] === 'string';

/**
 * The answer of the store's call `call`, or `internal` when it is not one the port allows. An
 * exception is left to the session's boundary, which answers it as `internal` already.
 */
const checkedAnswer = async <L, T>(
  call: string,
  work: () => Promise<E.Either<L, T>>,
): Promise<E.Either<L | SessionStoreError, T>> => {
  const answer: unknown = await work();
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
            checkedAnswer('exclusive', () => exclusive.call(store, id, work, follower) as Promise<E.Either<L, T>>),
        }),
    ...(flush === undefined ? {} : { flush: (id: string) => checkedAnswer('flush', () => flush.call(store, id)) }),
  };
};
