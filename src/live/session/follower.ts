/**
 * A session store as one follower of its logs sees it: every call that reads, appends or keeps a
 * snapshot passes the follower, so what the store remembers of where a reader is in a log (and
 * which log it was) is this follower's alone. A live session reads and writes through one of its
 * own: another session on the same store instance, which moves its own position, never moves
 * this one's, and each tells a log deleted and made anew since it read it.
 */
import type * as E from 'fp-ts/lib/Either.js';
import type { SessionFollower, SessionStore } from './store.js';

/** `store` as the follower `follower` calls it; the calls that follow no log are the store's own. */
export const followedBy = (store: SessionStore, follower: SessionFollower = {}): SessionStore => {
  const exclusive = store.exclusive?.bind(store);
  return {
    location: store.location,
    list: () => store.list(),
    read: (id, after) => store.read(id, after, follower),
    append: (id, expected, lines) => store.append(id, expected, lines, follower),
    repair: (id) => store.repair(id, follower),
    readSnapshot: (id, _follower, atMost) => store.readSnapshot(id, follower, atMost),
    writeSnapshot: (id, snapshot) => store.writeSnapshot(id, snapshot, follower),
    delete: (id) => store.delete(id),
    backlog: (id) => store.backlog(id),
    close: () => store.close(),
    // The optional calls stay absent when the store has none: a session tells by their absence.
    ...(exclusive === undefined
      ? {}
      : { exclusive: <L, T>(id: string, work: () => Promise<E.Either<L, T>>) => exclusive(id, work, follower) }),
    ...(store.flush === undefined ? {} : { flush: (id: string) => store.flush!(id) }),
  };
};

/**
 * What a store remembers of its sessions' logs (a cursor, a row's key), per session id: for the
 * calls without a follower, and apart for each follower, so that no follower moves another's.
 * A follower dropped takes its part with it.
 */
export interface FollowerMemory<T> {
  /** The memory of `follower`'s calls, or of the calls without one. */
  readonly of: (follower: SessionFollower | undefined) => Map<string, T>;
  /** Forgets everything (a store closed). */
  readonly clear: () => void;
}

/** An empty `FollowerMemory`. */
export const followerMemory = <T>(): FollowerMemory<T> => {
  const shared = new Map<string, T>();
  let followed = new WeakMap<SessionFollower, Map<string, T>>();
  return {
    of: (follower) => {
      if (follower === undefined) return shared;
      const known = followed.get(follower);
      if (known !== undefined) return known;
      const made = new Map<string, T>();
      followed.set(follower, made);
      return made;
    },
    clear: () => {
      shared.clear();
      followed = new WeakMap();
    },
  };
};
