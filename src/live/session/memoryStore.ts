/**
 * A session store in the process's memory: sessions live as long as the store does. For tests,
 * for a host that keeps its own persistence, and as the simplest adapter the conformance suite
 * holds every other one to.
 */
import * as E from 'fp-ts/lib/Either.js';
import { parseSessionId } from './id.js';
import { followerMemory } from './follower.js';
import {
  guardedCall as guarded,
  invalidSnapshot,
  parseLinesToAppend,
  parseStoredSnapshot,
  type SessionStore,
  type SessionStoreError,
  type StoredSnapshot,
} from './store.js';

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

/**
 * The snapshots a session keeps once `written` is written over `current` and `previous`, as
 * the other stores keep them: the newest wins (a writer that lags behind another, its state of
 * fewer lines, replaces nothing), and the one replaced stays as the previous when it covers
 * fewer lines (a rewrite of the same line keeps the previous there was).
 */
const keptSnapshots = (
  current: StoredSnapshot | undefined,
  previous: StoredSnapshot | undefined,
  written: StoredSnapshot,
): { readonly snapshot: StoredSnapshot; readonly previous: StoredSnapshot | undefined } => {
  if (current === undefined) return { snapshot: written, previous };
  if (current.position > written.position) return { snapshot: current, previous };
  return { snapshot: written, previous: current.position < written.position ? current : previous };
};

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
    read: (id, after, follower) =>
      guarded(async () => {
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
      }),
    append: (id, expected, texts, follower) =>
      guarded(async () => {
        const valid = checked(id);
        if (E.isLeft(valid)) return valid;
        // Refused before anything is kept: a line that is no text would break every later read.
        const lines = parseLinesToAppend(texts);
        if (E.isLeft(lines)) return lines;
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
        session.lines.push(...lines.right);
        sessions.set(id, session);
        seen.set(id, session.incarnation);
        return E.right({ position: session.lines.length, setAside: [] });
      }),
    repair: (id) => guarded(async () => E.map(() => [])(checked(id))),
    readSnapshot: (id, follower, atMost) =>
      guarded(async () => {
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
      }),
    writeSnapshot: (id, snapshot, follower) =>
      guarded(async () => {
        const valid = checked(id);
        if (E.isLeft(valid)) return valid;
        const written = parseStoredSnapshot(snapshot);
        if (E.isLeft(written)) return written;
        const session = sessions.get(id);
        const known = seenBy(follower).get(id);
        // Only over the log the state was read from: one made anew since holds other lines.
        if (known !== undefined && known !== session?.incarnation) return E.right(undefined);
        const { position } = written.right;
        if (session !== undefined && position <= session.lines.length && position > 0) {
          const kept = keptSnapshots(session.snapshot, session.previous, written.right);
          session.snapshot = kept.snapshot;
          if (kept.previous !== undefined) session.previous = kept.previous;
        }
        return E.right(undefined);
      }),
    delete: (id) =>
      guarded(async () =>
        E.map(() => {
          memory.of(undefined).delete(id);
          return sessions.delete(id);
        })(checked(id)),
      ),
    backlog: async (id) => {
      const session = sessions.get(id);
      if (session === undefined) return undefined;
      return session.lines.slice(session.snapshot?.position ?? 0).reduce((bytes, text) => bytes + text.length + 1, 0);
    },
    close: async () => undefined,
  };
};
