/**
 * The tracker's cache of (user, session) slots it keeps in memory while they are idle, least
 * recently used first: the shell's one piece of policy about memory. Past its size, the least
 * recently used are let go of; the machine drops each once nothing is in flight for it, and the
 * store keeps it, so a later message loads it again.
 */

/** The (user, session) slots used lately, in the order of their last use. */
export interface SlotCache {
  /** `user` in `session` was just used: it is the most recent. */
  use(user: string, session: string): void;
  /** `user` in `session` was let go of. */
  forget(user: string, session: string): void;
  /** Takes out of the cache, and returns, the least recently used slots past its size. */
  overflow(): ReadonlyArray<readonly [string, string]>;
}

/** A cache of `size` slots (0: none is kept once idle). */
export const createSlotCache = (size: number): SlotCache => {
  // A Map keeps insertion order: deleting and setting again makes a slot the most recent.
  const slots = new Map<string, readonly [string, string]>();
  const keyOf = (user: string, session: string): string => JSON.stringify([user, session]);
  return {
    use: (user, session) => {
      const key = keyOf(user, session);
      slots.delete(key);
      slots.set(key, [user, session]);
    },
    forget: (user, session) => {
      slots.delete(keyOf(user, session));
    },
    overflow: () => {
      const over: Array<readonly [string, string]> = [];
      for (const [key, slot] of slots) {
        if (slots.size <= size) break;
        slots.delete(key);
        over.push(slot);
      }
      return over;
    },
  };
};
