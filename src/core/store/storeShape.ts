/**
 * The shape of a fact store, checked where a store enters from the caller's code: a value that
 * is not one (a saved-state document not read through `decodeState`, a tracker state, a store
 * of another layout) is refused with a message that says so, instead of failing deep inside a
 * reducer on a field it lacks. The check reads a store's top fields only, so it costs nothing
 * beside a reducer; the store's contents are the reducers' to keep right (`decodeState`
 * validates a saved one in full).
 */
import { kindOf } from '../../base/describe.js';
import { isRecord } from '../../base/record.js';
import { deepFreeze } from '../../persistent/freeze.js';
import { isMutating } from '../../persistent/owner.js';
import type { FactStore } from './state.js';

/** A persistent map: a leaf array, a branch `{ n, c }`, or the native map of a write run. */
const isMapShaped = (value: unknown): boolean =>
  Array.isArray(value) ||
  value instanceof Map ||
  (isRecord(value) && typeof value['n'] === 'number' && Array.isArray(value['c']));

/** A persistent vector: `{ shift, root }`. */
const isVectorShaped = (value: unknown): boolean =>
  isRecord(value) && typeof value['shift'] === 'number' && (value['root'] === null || Array.isArray(value['root']));

const INDEX_MAPS = ['ids', 'terms', 'conventionTerms', 'names', 'tasks', 'taskTerms', 'files', 'pairFacts'] as const;
const INDEX_VECTORS = ['docs', 'taskIds'] as const;
const INDEX_COUNTS = ['nextDoc', 'nextTask', 'contextCount'] as const;

/** The first field of an index that is not of its kind, if any. */
const malformedIndexField = (index: Readonly<Record<string, unknown>>): string | undefined =>
  INDEX_MAPS.find((key) => !isMapShaped(index[key])) ??
  INDEX_VECTORS.find((key) => !isVectorShaped(index[key])) ??
  INDEX_COUNTS.find((key) => typeof index[key] !== 'number') ??
  (Array.isArray(index['recent']) ? undefined : 'recent') ??
  (Array.isArray(index['prompted']) ? undefined : 'prompted') ??
  (Array.isArray(index['conventions']) || isRecord(index['conventions']) ? undefined : 'conventions');

/** What a value that is not an object is, in words. */

/** Why `value` is not a fact store, in plain words, or undefined when it has a store's shape. */
export const factStoreProblem = (value: unknown): string | undefined => {
  if (!isRecord(value)) return `the store is ${kindOf(value)}, not a fact store`;
  if (typeof value['format'] === 'string')
    return `the store is a saved-state document ("format": ${JSON.stringify(value['format'])}), not a fact store: read it with decodeState first`;
  if ('store' in value && 'settings' in value) return 'the store is a tracker state, not a fact store: pass its store';
  if (typeof value['maxValidFacts'] !== 'number') return 'the store has no maxValidFacts: it is not a fact store';
  if (!isMapShaped(value['pairs']) || !isMapShaped(value['historyPairs']))
    return 'the store has no pair logs of its kind: it is not a fact store';
  if (value['tombstones'] !== undefined && !isMapShaped(value['tombstones']))
    return 'the store has tombstones not of their kind: it is not a fact store';
  const index = value['index'];
  if (!isRecord(index)) return 'the store has no search index: it is not a fact store';
  const field = malformedIndexField(index);
  return field === undefined ? undefined : `the store's index has no ${field} of its kind: it is not a fact store`;
};

/**
 * `store` itself when it has a fact store's shape. Otherwise throws a TypeError saying what it
 * is: passing something else where the types ask for a store is a programmer's mistake.
 */
export const checkedFactStore = (store: FactStore): FactStore => {
  const problem = factStoreProblem(store);
  if (problem !== undefined) throw new TypeError(problem);
  return store;
};

/**
 * What a reducer given `store` returns, `result`: deeply frozen in place when it is `store` itself
 * (nothing to do), as every result is, a store from `JSON.parse` or `structuredClone` too. A write
 * freezes the parts of the input its result shares; handed back whole, the input is all shared.
 * One check for a store a reducer returned, frozen already; inside a write run, the run's own
 * stores stay writable and the run freezes its result.
 */
export const handedBack = (store: FactStore, result: FactStore): FactStore =>
  result === store && !isMutating() ? deepFreeze(result) : result;
