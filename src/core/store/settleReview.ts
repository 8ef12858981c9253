/**
 * What a review settles: the `issue` and `must_fix` items that earlier reviews of the same task
 * raised and this review does not repeat are fixed, so they are closed at this review's time.
 */
import * as PMap from '../../persistent/persistentMap.js';
import type { SessionFact } from '../fact.js';
import type { FactsInvalidatedEvent } from './events.js';
import { type FactStore, type PairLog, pairKey } from './state.js';
import { latestAssertionTime } from './timeline.js';

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
 * The invalidations a review of `taskId` at `at` implies, given the pairs it asserts (its facts,
 * and those it proposed past the cap of a result, which it repeats all the same). A pair
 * belongs to the task when the task's reviewer made its latest assertion, and it is still open
 * (not invalidated since). Only the open review items (`issue`, `must_fix`) the task's reviewer
 * asserted and their logs still hold are read, as the index lists them, in pair-key order.
 */
export const settleReview = (
  store: FactStore,
  taskId: string,
  repeated: ReadonlyArray<Pick<SessionFact, 'subject' | 'relation'>>,
  at: number,
): FactsInvalidatedEvent[] => {
  const raised = PMap.get(store.index.tasks, taskId)?.raised;
  if (raised === undefined || PMap.size(raised) === 0) return [];
  const reasserted = new Set(repeated.map((fact) => pairKey(fact.subject, fact.relation)));
  const settled: FactsInvalidatedEvent[] = [];
  for (const key of PMap.keys(raised).sort()) {
    const log = PMap.get(store.pairs, key);
    if (log === undefined || !isRaisedBy(log, taskId)) continue;
    const latest = latestAssertionTime(log);
    if (log.clears.some((clear) => clear >= latest) || reasserted.has(key)) continue;
    settled.push({ type: 'facts/invalidated', subject: log.subject, relation: log.relation, at });
  }
  return settled;
};
