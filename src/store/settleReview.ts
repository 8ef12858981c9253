/**
 * What a review settles: the `issue` and `must_fix` items that earlier reviews of the same task
 * raised and this review does not repeat are fixed, so they are closed at this review's time.
 */
import * as PMap from '../base/persistentMap.js';
import type { SessionFact } from '../fact.js';
import type { FactsInvalidatedEvent } from './events.js';
import { type FactStore, type PairLog, pairKey } from './state.js';
import { latestAssertionTime } from './timeline.js';

/** Relations a later review of the same task settles: what it does not repeat is fixed. */
const REVIEW_OPEN_ITEMS = new Set(['issue', 'must_fix']);

/** True when the task's reviewer made one of the pair's latest assertions (they close its assertion list, sorted by time). */
const isRaisedBy = (log: PairLog, taskId: string): boolean => {
  const latest = latestAssertionTime(log);
  for (let i = log.assertions.length - 1; i >= 0 && log.assertions[i]!.validFrom === latest; i -= 1) {
    const fact = log.assertions[i]!;
    if (fact.sourceTaskId === taskId && fact.sourceRole === 'reviewer') return true;
  }
  return false;
};

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
  // One walk over the pairs, without a list of them; the tests that build nothing come first.
  PMap.forEach(store.pairs, (log) => {
    if (!REVIEW_OPEN_ITEMS.has(log.relation) || !isRaisedBy(log, taskId)) return;
    const latest = latestAssertionTime(log);
    if (log.clears.some((clear) => clear >= latest) || reasserted.has(pairKey(log.subject, log.relation))) return;
    settled.push({ type: 'facts/invalidated', subject: log.subject, relation: log.relation, at });
  });
  return settled;
};
