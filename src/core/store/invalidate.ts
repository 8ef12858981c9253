import { wellFormed } from '../../base/text.js';
import { plainTime } from '../../base/time.js';
import { holdsSeparator } from '../fact.js';
import type { FactStore } from './state.js';
import { checkedFactStore } from './storeShape.js';
import { deriveRecords, latestAssertionTime, withClear } from './timeline.js';
import { selectPairLog, writePairChanges } from './write.js';

/**
 * Closes the valid facts of (subject, relation) at `at`, unless the pair was asserted after
 * `at`: a late invalidation cannot close a newer assertion. Closed facts stay in history until
 * compaction. Returns the same store when there is nothing to close, as for a subject or
 * relation holding U+001F: no stored pair does, and its key would name another pair.
 */
export const invalidate = (store: FactStore, subject: string, relation: string, at: number): FactStore => {
  checkedFactStore(store);
  if (typeof subject !== 'string' || typeof relation !== 'string' || typeof at !== 'number' || !Number.isFinite(at))
    return store;
  if (holdsSeparator(subject) || holdsSeparator(relation)) return store;
  // The pair as its facts hold it: their text is well-formed (see `parseNewFact`).
  const before = selectPairLog(store, wellFormed(subject), wellFormed(relation));
  if (before === undefined || latestAssertionTime(before) > at) return store;
  if (!deriveRecords(before).some((fact) => fact.validTo === undefined)) return store;
  return writePairChanges(store, [{ before, after: withClear(before, plainTime(at)) }]);
};
