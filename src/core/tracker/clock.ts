/**
 * The clock a shell stamps events with when its caller gives none. Only the shells call it
 * (`createFactTracker`, `openSession`): the core never reads the clock.
 */

/**
 * The default clock: `Date.now`, made strictly increasing. Two calls within one millisecond are
 * then two instants, so a later result supersedes an earlier one (and a review settles the one
 * before it) as it would a moment later, rather than both being asserted at one time.
 */
export const strictlyIncreasingNow = (): (() => number) => {
  let last = -Infinity;
  return () => {
    const now = Date.now();
    last = now > last ? now : last + 1;
    return last;
  };
};
