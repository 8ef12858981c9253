/**
 * A session store in the process's memory: sessions live as long as the store does. For tests,
 * for a host that keeps its own persistence, and as the simplest adapter the conformance suite
 * holds every other one to.
 */
import * as E from 'fp-ts/lib/Either.js';
import { parseSessionId } from './id.js';
import type { SessionStore, SessionStoreError, StoredSnapshot } from './store.js';

/** One session: its lines in order (line n at index n - 1), and its snapshot. */
interface MemorySession {
  readonly lines: string[];
  snapshot?: StoredSnapshot;
}

/** A session store that keeps every session in this process's memory. */
export const memorySessionStore = (): SessionStore => {
  const sessions = new Map<string, MemorySession>();

  const checked = (id: string): E.Either<SessionStoreError, string> => {
    const parsed = parseSessionId(id);
    return E.isLeft(parsed) ? E.left({ code: 'invalid_session_id', message: parsed.left }) : E.right(parsed.right);
  };

  return {
    location: 'memory',
    list: async () => E.right([...sessions.keys()].sort()),
    read: async (id, after) => {
      const valid = checked(id);
      if (E.isLeft(valid)) return valid;
      const session = sessions.get(id);
      const all = session?.lines ?? [];
      const restarted = after > all.length;
      const from = restarted ? 0 : after;
      return E.right({
        exists: session !== undefined,
        restarted,
        lines: all.flatMap((text, i) => (i >= from && text.trim() !== '' ? [{ line: i + 1, text }] : [])),
        position: all.length,
        torn: false,
      });
    },
    append: async (id, expected, texts) => {
      const valid = checked(id);
      if (E.isLeft(valid)) return valid;
      const session = sessions.get(id) ?? { lines: [] };
      if (session.lines.length !== expected)
        return E.left({
          code: 'conflict',
          message: `session ${id} holds ${session.lines.length} lines, not ${expected}: another writer appended first`,
        });
      if (texts.some((text) => /[\r\n]/u.test(text)))
        return E.left({ code: 'io', message: 'a line to append holds a line break: it would forge a line of the log' });
      session.lines.push(...texts);
      sessions.set(id, session);
      return E.right({ position: session.lines.length, setAside: [] });
    },
    repair: async (id) => E.map(() => [])(checked(id)),
    readSnapshot: async (id) => {
      const valid = checked(id);
      if (E.isLeft(valid)) return E.left(valid.left.message);
      const snapshot = sessions.get(id)?.snapshot;
      return E.right(
        snapshot !== undefined && snapshot.position <= (sessions.get(id)?.lines.length ?? 0) ? snapshot : undefined,
      );
    },
    writeSnapshot: async (id, snapshot) => {
      const valid = checked(id);
      if (E.isLeft(valid)) return valid;
      const session = sessions.get(id);
      if (session !== undefined && snapshot.position <= session.lines.length && snapshot.position > 0)
        session.snapshot = { position: snapshot.position, state: snapshot.state };
      return E.right(undefined);
    },
    delete: async (id) => E.map(() => sessions.delete(id))(checked(id)),
    backlog: async (id) => {
      const session = sessions.get(id);
      if (session === undefined) return undefined;
      return session.lines.slice(session.snapshot?.position ?? 0).reduce((bytes, text) => bytes + text.length + 1, 0);
    },
    close: async () => undefined,
  };
};
