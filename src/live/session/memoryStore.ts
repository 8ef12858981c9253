/**
 * A session store in the process's memory: sessions live as long as the store does. For tests,
 * for a host that keeps its own persistence, and as the simplest adapter the conformance suite
 * holds every other one to.
 */
import * as E from 'fp-ts/lib/Either.js';
import { parseSessionId } from './id.js';
import { followerMemory } from './follower.js';
import { invalidSnapshot, type SessionStore, type SessionStoreError, type StoredSnapshot } from './store.js';

/**
 * One session: its lines in order (line n at index n - 1), its snapshot, and what it is known
 * by (a session deleted and made anew under the same id is another).
 */
interface MemorySession {
  readonly lines: string[];
  snapshot?: StoredSnapshot;
  /** The snapshot `snapshot` replaced, for `readSnapshot` with `atMost`. */
  previous?: StoredSnapshot;
  readonly incarnation: object;
}

/** A session store that keeps every session in this process's memory. */
export const memorySessionStore = (): SessionStore => {
  const sessions = new Map<string, MemorySession>();
  /** Per session, the incarnation each follower last read: another is a log made anew. */
  const memory = followerMemory<object>();
  const seenBy = memory.of;

  const checked = (id: string): E.Either<SessionStoreError, string> => parseSessionId(id);

  return {
    location: 'memory',
    list: async () => E.right([...sessions.keys()].sort()),
    read: async (id, after, follower) => {
      const valid = checked(id);
      if (E.isLeft(valid)) return valid;
      const session = sessions.get(id);
      const all = session?.lines ?? [];
      const seen = seenBy(follower);
      const known = seen.get(id);
      // A reader past the end, or one that read another incarnation of this id, starts over.
      const restarted = after > all.length || (after > 0 && known !== undefined && known !== session?.incarnation);
      // A read from the start while the follower reads on (a resent prompt's) leaves what it follows.
      if (restarted || after > 0 || known === undefined) {
        if (session === undefined) seen.delete(id);
        else seen.set(id, session.incarnation);
      }
      const from = restarted ? 0 : after;
      return E.right({
        exists: session !== undefined,
        restarted,
        lines: all.flatMap((text, i) => (i >= from && text.trim() !== '' ? [{ line: i + 1, text }] : [])),
        position: all.length,
        torn: false,
      });
    },
    append: async (id, expected, texts, follower) => {
      const valid = checked(id);
      if (E.isLeft(valid)) return valid;
      const session = sessions.get(id) ?? { lines: [], incarnation: {} };
      const seen = seenBy(follower);
      const known = seen.get(id);
      if (expected > 0 && known !== undefined && known !== session.incarnation)
        return E.left({
          code: 'conflict',
          message: `the log of session ${id} was made anew since line ${expected} was read`,
        });
      if (session.lines.length !== expected)
        return E.left({
          code: 'conflict',
          message: `session ${id} holds ${session.lines.length} lines, not ${expected}: another writer appended first`,
        });
      if (texts.some((text) => /[\r\n]/u.test(text)))
        return E.left({ code: 'io', message: 'a line to append holds a line break: it would forge a line of the log' });
      session.lines.push(...texts);
      sessions.set(id, session);
      seen.set(id, session.incarnation);
      return E.right({ position: session.lines.length, setAside: [] });
    },
    repair: async (id) => E.map(() => [])(checked(id)),
    readSnapshot: async (id, follower, atMost) => {
      const valid = checked(id);
      if (E.isLeft(valid)) return E.left(invalidSnapshot(valid.left.message));
      const session = sessions.get(id);
      const limit = Math.min(session?.lines.length ?? 0, atMost ?? Infinity);
      const snapshot = [session?.snapshot, session?.previous]
        .filter((kept): kept is StoredSnapshot => kept !== undefined && kept.position <= limit)
        .sort((a, b) => b.position - a.position)[0];
      if (session === undefined || snapshot === undefined || (atMost === undefined && snapshot !== session.snapshot))
        return E.right(undefined);
      // What follows the snapshot is read from this incarnation on, unless the follower reads on already.
      const seen = seenBy(follower);
      if (!seen.has(id)) seen.set(id, session.incarnation);
      return E.right(snapshot);
    },
    writeSnapshot: async (id, snapshot, follower) => {
      const valid = checked(id);
      if (E.isLeft(valid)) return valid;
      const session = sessions.get(id);
      const known = seenBy(follower).get(id);
      // Only over the log the state was read from: one made anew since holds other lines.
      if (known !== undefined && known !== session?.incarnation) return E.right(undefined);
      if (session !== undefined && snapshot.position <= session.lines.length && snapshot.position > 0) {
        if (session.snapshot !== undefined) session.previous = session.snapshot;
        session.snapshot = { position: snapshot.position, state: snapshot.state };
      }
      return E.right(undefined);
    },
    delete: async (id) =>
      E.map(() => {
        memory.of(undefined).delete(id);
        return sessions.delete(id);
      })(checked(id)),
    backlog: async (id) => {
      const session = sessions.get(id);
      if (session === undefined) return undefined;
      return session.lines.slice(session.snapshot?.position ?? 0).reduce((bytes, text) => bytes + text.length + 1, 0);
    },
    close: async () => undefined,
  };
};
