import { wellFormed } from '../../base/text.js';
import { isWithinYears, plainTime } from '../../base/time.js';
import { holdsSeparator, pathText } from '../fact.js';
import { type FactStore, pairKey } from './state.js';
import { checkedFactStore, handedBack } from './storeShape.js';
import { deriveRecords, latestAssertionTime, withClear } from './timeline.js';
import { selectTombstone } from './tombstones.js';
import { selectPairLog, writePairChanges } from './write.js';

/**
 * The (subject, relation) pair an invalidation of `subject` and `relation` closes, as the store
 * keys it: their text well-formed (lone surrogates read as U+FFFD, as in every fact). A subject
 * no pair holds is read as extraction reads a path (`pathText`: whitespace collapsed, in the one
 * spelling of its file, clipped to its last 200 characters), so the path an agent reported, in
 * whichever spelling, closes the fact made of it. A subject only a tombstone holds is taken as
 * given, as it was while its pair had a log.
 */
export const invalidatedPair = (store: FactStore, subject: string, relation: string): readonly [string, string] => {
  const [given, pairRelation] = [wellFormed(subject), wellFormed(relation)];
  // A pair compaction removed while closed is still one the store holds (its tombstone).
  if (
    selectPairLog(store, given, pairRelation) !== undefined ||
    selectTombstone(store, pairKey(given, pairRelation)) !== undefined
  )
    return [given, pairRelation];
  return [pathText(given), pairRelation];
};

/**
 * Closes the valid facts of (subject, relation) at `at`, unless the pair was asserted after
 * `at`: a late invalidation cannot close a newer assertion. Closed facts stay in history until
 * compaction. Returns the same store when there is nothing to close, as for a subject or
 * relation holding U+001F: no stored pair does, and its key would name another pair. Total, as
 * every reducer: a subject or relation that is no string, or a time outside the years 0000 to 9999,
 * returns the same store too (so does such an event in `applyEvent` and `replay`).
 */
export const invalidate = (store: FactStore, subject: string, relation: string, at: number): FactStore =>
  handedBack(store, closePair(checkedFactStore(store), subject, relation, at));

/** `invalidate` of a store already checked. */
const closePair = (store: FactStore, subject: string, relation: string, at: number): FactStore => {
  if (typeof subject !== 'string' || typeof relation !== 'string' || typeof at !== 'number' || !isWithinYears(at))
    return store;
  if (holdsSeparator(subject) || holdsSeparator(relation)) return store;
  const before = selectPairLog(store, ...invalidatedPair(store, subject, relation));
  if (before === undefined || latestAssertionTime(before) > at) return store;
  if (!deriveRecords(before).some((fact) => fact.validTo === undefined)) return store;
  return writePairChanges(store, [{ before, after: withClear(before, plainTime(at)) }]);
};
