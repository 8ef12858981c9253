import type { FactTag, SessionFact } from '../fact.js';
import { shardValues } from './shards.js';
import type { FactStore } from './state.js';
import { byTimeThenId } from './timeline.js';

const allFactsCache = new WeakMap<FactStore, ReadonlyArray<SessionFact>>();
const validFactsCache = new WeakMap<FactStore, ReadonlyArray<SessionFact>>();

const memoize = (
  cache: WeakMap<FactStore, ReadonlyArray<SessionFact>>,
  store: FactStore,
  compute: () => SessionFact[],
): ReadonlyArray<SessionFact> => {
  const cached = cache.get(store);
  if (cached !== undefined) return cached;
  const value = Object.freeze(compute());
  cache.set(store, value);
  return value;
};

/** Every record, closed history included, by `validFrom` then id. */
export const selectAllFacts = (store: FactStore): ReadonlyArray<SessionFact> =>
  memoize(allFactsCache, store, () => shardValues(store.records).sort(byTimeThenId));

/** The facts valid now, by `validFrom` then id. */
export const selectValidFacts = (store: FactStore): ReadonlyArray<SessionFact> =>
  memoize(validFactsCache, store, () => selectAllFacts(store).filter((fact) => fact.validTo === undefined));

/** The valid facts carrying any of `tags`. */
export const selectValidFactsByTags = (store: FactStore, tags: ReadonlyArray<FactTag>): ReadonlyArray<SessionFact> => {
  const wanted = new Set<string>(Array.isArray(tags) ? tags : []);
  return selectValidFacts(store).filter((fact) => fact.tags.some((tag) => wanted.has(tag)));
};

/** The number of valid facts. */
export const selectValidCount = (store: FactStore): number => store.validCount;

/** The facts whose interval holds `at`: validFrom <= at < validTo (or no validTo). */
export const selectFactsValidAt = (store: FactStore, at: number): ReadonlyArray<SessionFact> =>
  selectAllFacts(store).filter((fact) => fact.validFrom <= at && (fact.validTo === undefined || at < fact.validTo));
