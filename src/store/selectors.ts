import * as PMap from '../base/persistentMap.js';
import type { FactTag, SessionFact } from '../fact.js';
import { selectIndexedFacts } from '../retrieve/index/searchIndex.js';
import { type FactStore, validCount } from './state.js';
import { byTimeThenId, deriveRecords } from './timeline.js';

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
  memoize(allFactsCache, store, () =>
    PMap.values(store.pairs)
      .flatMap((log) => deriveRecords(log).map((fact) => (fact.validTo === undefined ? fact : Object.freeze(fact))))
      .sort(byTimeThenId),
  );

/** The facts valid now, by `validFrom` then id. */
export const selectValidFacts = (store: FactStore): ReadonlyArray<SessionFact> =>
  memoize(validFactsCache, store, () => selectIndexedFacts(store.index).sort(byTimeThenId));

/** The valid facts carrying any of `tags`. */
export const selectValidFactsByTags = (store: FactStore, tags: ReadonlyArray<FactTag>): ReadonlyArray<SessionFact> => {
  const wanted = new Set<string>(Array.isArray(tags) ? tags : []);
  return selectValidFacts(store).filter((fact) => fact.tags.some((tag) => wanted.has(tag)));
};

/** The number of valid facts. */
export const selectValidCount = (store: FactStore): number => validCount(store);

/** The facts whose interval holds `at`: validFrom <= at < validTo (or no validTo). */
export const selectFactsValidAt = (store: FactStore, at: number): ReadonlyArray<SessionFact> =>
  selectAllFacts(store).filter((fact) => fact.validFrom <= at && (fact.validTo === undefined || at < fact.validTo));
