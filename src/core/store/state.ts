import { deepFreeze } from '../../persistent/freeze.js';
import * as PMap from '../../persistent/persistentMap.js';
import type { SessionFact } from '../fact.js';
import { selectIndexedCount, selectIndexedFact } from '../search/indexReads.js';
import { emptySearchIndex, type SearchIndex } from '../search/searchIndex.js';

/**
 * Everything the store knows about one (subject, relation) pair: the assertions it received
 * (each fact as asserted, `validFrom` = assertion time; one per id and time) and the times it
 * was invalidated. The pair's records are derived from this log (see `timeline.ts`), so the
 * result depends on the set of assertions, not on the order they arrived in.
 */
export interface PairLog {
  readonly subject: string;
  readonly relation: string;
  /** Sorted by `validFrom`, then id. */
  readonly assertions: ReadonlyArray<SessionFact>;
  /** Invalidation times, ascending, unique. */
  readonly clears: ReadonlyArray<number>;
}

/** A pair log before and after a reducer's change (`undefined`: no log). */
export interface PairChange {
  readonly before: PairLog | undefined;
  readonly after: PairLog | undefined;
}

/**
 * The fact store: plain, JSON-serializable, deeply frozen data. Read it through the selectors.
 * The pair logs are the source of truth; the index holds the valid facts (by id) and what
 * ranking needs, kept up to date by the same reducers.
 */
export interface FactStore {
  /** `addFacts` compacts to this many valid facts when it is exceeded. */
  readonly maxValidFacts: number;
  /** Pair logs by pair key. */
  readonly pairs: PMap.PersistentMap<PairLog>;
  /**
   * The keys of the pair logs that may hold closed records (see `mayHoldHistory`): compaction
   * removes history from those, instead of walking every pair on every dispatch.
   */
  readonly historyPairs: PMap.PersistentMap<true>;
  /**
   * The invalidation times of the closed pairs whose logs went (compaction removes a pair none of
   * whose facts is valid), by pair key: a tombstone, so an assertion arriving later with a time
   * at or before it is closed by it, as the removed log would have closed it (see `tombstones.ts`).
   * Absent when there is none, as in every store before tombstones were kept.
   */
  readonly tombstones?: PMap.PersistentMap<number>;
  /** The search index over the valid facts and the recorded task prompts. */
  readonly index: SearchIndex;
  /**
   * The time of the last event of the history a replay built this store from (absent for a
   * store no replay handed out, or one written since): a history that goes on from the store
   * times a first line without `at` from it, as one replay of the whole history does, where
   * the latest time the store records can be another (times may go backwards).
   */
  readonly lastEventAt?: number;
}

/** Options of `emptyFactStore`. */
export interface FactStoreOptions {
  readonly maxValidFacts?: number;
}

/** The default bound on valid facts before `addFacts` compacts. */
export const DEFAULT_MAX_VALID_FACTS = 1_000;

/**
 * A usable bound: a positive integer (Infinity, no bound, as `Number.MAX_SAFE_INTEGER`, which a
 * saved state's JSON keeps), or the default for anything else.
 */
export const normalizeMaxValidFacts = (value: unknown): number =>
  value === Infinity
    ? Number.MAX_SAFE_INTEGER
    : typeof value === 'number' && Number.isFinite(value) && value >= 1
      ? Math.min(Math.floor(value), Number.MAX_SAFE_INTEGER)
      : DEFAULT_MAX_VALID_FACTS;

/** An empty store (default `maxValidFacts`: DEFAULT_MAX_VALID_FACTS). */
export const emptyFactStore = (options: FactStoreOptions = {}): FactStore =>
  deepFreeze({
    maxValidFacts: normalizeMaxValidFacts(options?.maxValidFacts),
    pairs: PMap.empty,
    historyPairs: PMap.empty,
    index: emptySearchIndex(),
  });

/** The store as a replay hands it out after an event of time `at` (frozen, as every store). */
export const withLastEventAt = (store: FactStore, at: number): FactStore =>
  store.lastEventAt === at ? store : deepFreeze({ ...store, lastEventAt: at });

/**
 * The store with another index: a write, so the store no longer stands where a replay left it
 * and drops `lastEventAt`.
 */
export const withIndex = (store: FactStore, index: SearchIndex): FactStore =>
  storeOf(store.maxValidFacts, store.pairs, store.historyPairs, index, store.tombstones);

/**
 * A store of these parts, its `tombstones` absent when there is none. Two object literals rather
 * than a spread: a spread builds the object off the engine's fast path, and a write makes one.
 * The bound as `emptyFactStore` reads it: one set by hand on a store (`{ ...store, maxValidFacts }`)
 * may be any number, and the store written holds one a saved state's JSON keeps.
 */
export const storeOf = (
  bound: number,
  pairs: FactStore['pairs'],
  historyPairs: FactStore['historyPairs'],
  index: SearchIndex,
  tombstones: PMap.PersistentMap<number> | undefined,
): FactStore => {
  const maxValidFacts = normalizeMaxValidFacts(bound);
  return tombstones === undefined || PMap.size(tombstones) === 0
    ? { maxValidFacts, pairs, historyPairs, index }
    : { maxValidFacts, pairs, historyPairs, index, tombstones };
};

const PAIR_SEPARATOR = '\u001f';

/** The key of a (subject, relation) pair. */
export const pairKey = (subject: string, relation: string): string => subject + PAIR_SEPARATOR + relation;

/** The subject and relation of a pair key (neither holds the separator: no stored pair does). */
export const splitPairKey = (key: string): readonly [string, string] => {
  const at = key.indexOf(PAIR_SEPARATOR);
  return [key.slice(0, at), key.slice(at + 1)];
};

/** The number of valid facts. */
export const validCount = (store: FactStore): number => selectIndexedCount(store.index);

/** The valid fact with this id, if any. */
export const selectValidFact = (store: FactStore, id: string): SessionFact | undefined =>
  selectIndexedFact(store.index, id);
