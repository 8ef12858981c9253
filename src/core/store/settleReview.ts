/**
 * What a review settles: the `issue` and `must_fix` items that earlier reviews of the same task
 * raised and this review does not repeat are fixed, so they are closed at this review's time.
 * Earlier and later are valid time: a review that arrives after a later one of its task has its
 * items settled by that one, as if they had come in order.
 */
import * as PMap from '../../persistent/persistentMap.js';
import type { SessionFact } from '../fact.js';
import type { FactsInvalidatedEvent } from './events.js';
import { type FactStore, type PairLog, pairKey } from './state.js';
import { latestAssertionTime } from './timeline.js';
import { isOpenReviewItem } from './write.js';

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

/**
 * The time of the task's next review after `at` that the store holds: the earliest time after
 * `at` at which the task's reviewer asserted a fact of one of the pairs `keys`. Every review
 * asserts its assessment of the task (`task:N reviewed_as`), so a review's own pairs show each
 * later review still stored, whatever it raised. Undefined for a review that came in time order:
 * each log is read from its end only as far as it holds assertions after `at`, none then.
 */
const nextReviewTime = (
  store: FactStore,
  taskId: string,
  keys: ReadonlySet<string>,
  at: number,
): number | undefined => {
  let next: number | undefined;
  for (const key of keys) {
    const assertions = PMap.get(store.pairs, key)?.assertions ?? [];
    for (let i = assertions.length - 1; i >= 0 && assertions[i]!.validFrom > at; i -= 1) {
      const fact = assertions[i]!;
      if (
        fact.sourceTaskId === taskId &&
        fact.sourceRole === 'reviewer' &&
        (next === undefined || fact.validFrom < next)
      )
        next = fact.validFrom;
    }
  }
  return next;
};

/**
 * The invalidations that a later review of `taskId`, already in the store, implies for the open
 * items a review at `at` raises when it arrives out of time order: the next review settles what
 * it does not repeat, whichever of the two arrived first. An item whose pair nobody asserted
 * after `at` was not repeated by it, so it is closed at that review's time; one asserted since
 * is left as the settling of those later assertions left it. Read on the store before the
 * review's facts are added, applied after them.
 */
export const settleByLaterReview = (
  store: FactStore,
  taskId: string,
  reviewFacts: ReadonlyArray<SessionFact>,
  at: number,
): FactsInvalidatedEvent[] => {
  const next = nextReviewTime(store, taskId, new Set(reviewFacts.map((f) => pairKey(f.subject, f.relation))), at);
  if (next === undefined) return [];
  const items = new Map<string, SessionFact>();
  for (const fact of reviewFacts)
    if (isOpenReviewItem(fact.relation)) items.set(pairKey(fact.subject, fact.relation), fact);
  const settled: FactsInvalidatedEvent[] = [];
  for (const key of [...items.keys()].sort()) {
    const log = PMap.get(store.pairs, key);
    if (log !== undefined && latestAssertionTime(log) > at) continue;
    const { subject, relation } = items.get(key)!;
    settled.push({ type: 'facts/invalidated', subject, relation, at: next });
  }
  return settled;
};
