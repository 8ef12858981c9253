/**
 * What a review settles: the `issue` and `must_fix` items that earlier reviews of the same task
 * raised and this review does not repeat are fixed, so they are closed at this review's time.
 */
import * as PMap from '../base/persistentMap.js';
import type { SessionFact } from '../fact.js';
import type { FactsInvalidatedEvent } from './events.js';
import { type FactStore, pairKey } from './state.js';
import { latestAssertionTime } from './timeline.js';

/** Relations a later review of the same task settles: what it does not repeat is fixed. */
const REVIEW_OPEN_ITEMS = new Set(['issue', 'must_fix']);

/**
 * The invalidations a review of `taskId` at `at` implies, given the facts it asserts. A pair
 * belongs to the task when the task's reviewer made its latest assertion, and it is still open
 * (not invalidated since).
 */
export const settleReview = (
  store: FactStore,
  taskId: string,
  reviewFacts: ReadonlyArray<SessionFact>,
  at: number,
): FactsInvalidatedEvent[] => {
  const reasserted = new Set(reviewFacts.map((fact) => pairKey(fact.subject, fact.relation)));
  const settled: FactsInvalidatedEvent[] = [];
  // One walk over the pairs, without a list of them: a review comes every few dispatches.
  PMap.forEach(store.pairs, (log) => {
    if (!REVIEW_OPEN_ITEMS.has(log.relation) || reasserted.has(pairKey(log.subject, log.relation))) return;
    const latest = latestAssertionTime(log);
    const stillOpen = !log.clears.some((clear) => clear >= latest);
    if (
      stillOpen &&
      log.assertions.some(
        (fact) => fact.validFrom === latest && fact.sourceTaskId === taskId && fact.sourceRole === 'reviewer',
      )
    )
      settled.push({ type: 'facts/invalidated', subject: log.subject, relation: log.relation, at });
  });
  return settled;
};
