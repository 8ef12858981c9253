/**
 * The valid file facts of each (subject, relation) pair, as the index keeps them
 * (`SearchIndex.pairFacts`): a query describes the file facts of up to 512 context pairs and 64
 * co-changed ones, and reading them here costs one lookup a pair, where the pair's log costs a
 * lookup, a walk of its latest assertions and a lookup of each one's document, then the fact
 * itself for its flags, its kind and its task. Only file facts: what a pair lends (its context,
 * its co-change) goes to them alone, and a pair's other facts, should it hold any, get their
 * task's context wherever they are found (as their task's, or a recent task's, facts).
 *
 * A pair's list is flat: a task fact entry (`taskFactEntry`: document, file bit, prior flags),
 * then the number of the fact's task (stable while the fact is valid: a task's record is kept
 * while it holds a valid fact), for each valid file fact, by fact id descending: the order a
 * walk of the pair's log from its end gives (its valid facts are those asserted at its latest time).
 */
import { own } from '../../persistent/owner.js';
import * as PMap from '../../persistent/persistentMap.js';
import { getAt, type PersistentVector } from '../../persistent/persistentVector.js';
import type { SessionFact } from '../fact.js';
import { entryDoc } from './searchIndex.js';

/**
 * The pairs' lists with the fact `id` of document `entryDoc(entry)`, of task number `taskNum`,
 * put in its place in the list of `key` (changed in place when the current run owns it).
 */
export const withPairFact = (
  pairs: PMap.PersistentMap<ReadonlyArray<number>>,
  docs: PersistentVector<SessionFact>,
  key: string,
  id: string,
  entry: number,
  taskNum: number,
): PMap.PersistentMap<ReadonlyArray<number>> => {
  const list = PMap.get(pairs, key);
  // A pair's first valid fact: a new list the run does not register, as a term's first posting
  // (see `putFlat` in postings.ts). A pair holds one valid fact most of the time, so its list
  // goes empty and starts again each time a newer fact replaces it.
  if (list === undefined) return PMap.set(pairs, key, [entry, taskNum]);
  let at = 0;
  while (at < list.length && (getAt(docs, entryDoc(list[at]!))?.id ?? '') > id) at += 2;
  const next = own(list) as number[];
  next.splice(at, 0, entry, taskNum);
  return PMap.set(pairs, key, next);
};

/** The pairs' lists without the fact of document `doc` in the list of `key`. */
export const withoutPairFact = (
  pairs: PMap.PersistentMap<ReadonlyArray<number>>,
  key: string,
  doc: number,
): PMap.PersistentMap<ReadonlyArray<number>> => {
  const list = PMap.get(pairs, key);
  if (list === undefined) return pairs;
  let at = 0;
  while (at < list.length && entryDoc(list[at]!) !== doc) at += 2;
  if (at === list.length) return pairs;
  if (list.length === 2) return PMap.remove(pairs, key);
  const next = own(list) as number[];
  next.splice(at, 2);
  return PMap.set(pairs, key, next);
};
