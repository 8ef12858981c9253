/** How a long read of a session's log shares the process: a few lines, then a turn of the event loop. */

/**
 * Lines a catch-up applies between two turns of the event loop. A session read from its first
 * line (thousands of dispatches, seconds on a loaded machine) is read under a lock when a writer
 * or a hook catches up; the turns let the lock be kept fresh, so no other writer takes it over
 * as abandoned and the reader does not count it as lost, and the process serves its other sessions.
 */
export const CATCH_UP_LINES = 64;

/** One turn of the event loop: its timers and finished I/O run. */
export const turnOfTheLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
