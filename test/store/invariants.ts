/**
 * Structural invariants of a store, checked after every reducer in the property tests: the
 * valid facts are exactly those derived from the pair logs, the search index holds exactly
 * what a rebuild from scratch holds, the maps are well formed, and the whole value is deeply
 * frozen plain data.
 */
import { expect } from 'vitest';
import * as PMap from '../../src/base/persistentMap.js';
import { type FactStore, selectAllFacts, selectValidCount } from '../../src/index.js';
import type { SearchIndex, TermPostings } from '../../src/retrieve/index/searchIndex.js';
import { buildStore, selectPairLogs, selectRecordedPrompts } from '../../src/store/write.js';

export const isDeepFrozen = (value: unknown): boolean => {
  if (typeof value !== 'object' || value === null) return true;
  if (!Object.isFrozen(value)) return false;
  return Object.values(value).every(isDeepFrozen);
};

const sortedEntries = <T, U>(map: PMap.PersistentMap<T>, view: (value: T) => U): Array<[string, U]> => {
  const out: Array<[string, U]> = [];
  PMap.forEach(map, (value, key) => out.push([key, view(value)]));
  return out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
};

const flattenPostings = (postings: TermPostings) => ({ n: PMap.size(postings), p: sortedEntries(postings, (w) => w) });

/** The index's content, independent of how its maps happen to be split. */
export const flattenIndex = (index: SearchIndex) => ({
  facts: sortedEntries(index.facts, (fact) => fact),
  terms: sortedEntries(index.terms, flattenPostings),
  taskTerms: sortedEntries(index.taskTerms, flattenPostings),
  contextCount: index.contextCount,
  tasks: sortedEntries(index.tasks, (doc) => ({
    ...doc,
    facts: PMap.keys(doc.facts).sort(),
    touched: PMap.keys(doc.touched).sort(),
  })),
  conventions: sortedEntries(index.conventions, (v) => v),
});

export const expectConsistent = (store: FactStore): void => {
  const rebuilt = buildStore(store.maxValidFacts, selectPairLogs(store), selectRecordedPrompts(store));
  // Maps split as they grow and never merge, so compare contents, not shapes.
  expect(sortedEntries(store.pairs, (log) => log)).toEqual(sortedEntries(rebuilt.pairs, (log) => log));
  const { index } = store;
  const maps: ReadonlyArray<PMap.PersistentMap<unknown>> = [
    store.pairs,
    index.facts,
    index.terms,
    index.taskTerms,
    index.tasks,
    index.conventions,
  ];
  for (const map of maps) expect(PMap.isWellFormed(map)).toBe(true);
  expect(selectValidCount(store)).toBe(selectAllFacts(store).filter((fact) => fact.validTo === undefined).length);
  const flat = flattenIndex(store.index);
  expect(flat).toEqual(flattenIndex(rebuilt.index));
  for (const [, postings] of flat.terms) expect(postings.n).toBe(postings.p.length);
  expect(isDeepFrozen(store)).toBe(true);
};
