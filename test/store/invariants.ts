/**
 * Structural invariants of a store, checked after every reducer in the property tests: the
 * records are exactly those derived from the pair logs, the valid count is right, the search
 * index holds exactly what a rebuild from scratch holds, and the whole value is deeply frozen
 * plain data.
 */
import { expect } from 'vitest';
import { type FactStore, selectAllFacts } from '../../src/index.js';
import type { SearchIndex, TermPostings } from '../../src/store/searchIndex.js';
import { type HexBranch, type HexTrie, trieForEach, trieSize } from '../../src/store/trie.js';
import { buildStore, selectPairLogs, selectRecordedPrompts } from '../../src/store/write.js';

export const isDeepFrozen = (value: unknown): boolean => {
  if (typeof value !== 'object' || value === null) return true;
  if (!Object.isFrozen(value)) return false;
  return Object.values(value).every(isDeepFrozen);
};

const sortedEntries = <T, U>(trie: HexTrie<T>, map: (value: T) => U): Array<[string, U]> => {
  const out: Array<[string, U]> = [];
  trieForEach(trie, (value, key) => out.push([key, map(value)]));
  return out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
};

/** True when a trie holds an empty node below its root (removal must prune), or a branch whose count is wrong. */
const hasEmptyNode = (trie: HexTrie<unknown>, isRoot = true): boolean => {
  if (Array.isArray(trie)) return !isRoot && trie.length === 0;
  const branch = trie as HexBranch<unknown>;
  if (branch.c.every((child) => child === null)) return true;
  if (branch.n !== branch.c.reduce((sum, child) => sum + trieSize(child ?? undefined), 0)) return true;
  return branch.c.some((child) => child !== null && hasEmptyNode(child, false));
};

const flattenPostings = (postings: TermPostings) => ({ n: trieSize(postings), p: sortedEntries(postings, (w) => w) });

/** The index's content, independent of how its tries happen to be split. */
export const flattenIndex = (index: SearchIndex) => ({
  terms: sortedEntries(index.terms, flattenPostings),
  taskTerms: sortedEntries(index.taskTerms, flattenPostings),
  contextCount: index.contextCount,
  tasks: sortedEntries(index.tasks, (doc) => ({
    ...doc,
    facts: [...doc.facts].sort(),
    touched: [...doc.touched].sort(),
  })),
  conventions: sortedEntries(index.conventions, (v) => v),
});

export const expectConsistent = (store: FactStore): void => {
  const rebuilt = buildStore(store.maxValidFacts, selectPairLogs(store), selectRecordedPrompts(store));
  // Tries split as they grow and never merge, so compare contents, not shapes.
  expect(sortedEntries(store.records, (fact) => fact)).toEqual(sortedEntries(rebuilt.records, (fact) => fact));
  expect(sortedEntries(store.pairs, (log) => log)).toEqual(sortedEntries(rebuilt.pairs, (log) => log));
  expect(hasEmptyNode(store.records) || hasEmptyNode(store.pairs)).toBe(false);
  for (const trie of [store.index.terms, store.index.taskTerms, store.index.tasks, store.index.conventions])
    expect(hasEmptyNode(trie)).toBe(false);
  expect(store.validCount).toBe(rebuilt.validCount);
  expect(store.validCount).toBe(selectAllFacts(store).filter((fact) => fact.validTo === undefined).length);
  const flat = flattenIndex(store.index);
  expect(flat).toEqual(flattenIndex(rebuilt.index));
  for (const [, postings] of flat.terms) expect(postings.n).toBe(postings.p.length);
  expect(isDeepFrozen(store)).toBe(true);
};
