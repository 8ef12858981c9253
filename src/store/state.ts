import type { SessionFact } from '../fact.js';
import { fnv1a } from '../base/hash.js';
import { deepFreeze } from '../base/immer.js';
import { emptySearchIndex, type SearchIndex } from './searchIndex.js';
import type { Shards } from './shards.js';
import { EMPTY_TRIE } from './trie.js';

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

/** The fact store: plain, JSON-serializable, deeply frozen data. Read it through the selectors. */
export interface FactStore {
  /** `addFacts` compacts to this many valid facts when it is exceeded. */
  readonly maxValidFacts: number;
  /** The number of valid records (kept by the reducers so the compaction check costs nothing). */
  readonly validCount: number;
  /** Pair logs, sharded by the hash of the pair key. */
  readonly pairs: Shards<PairLog>;
  /** Every record (valid and closed facts), sharded by fact id, keyed by `recordKey`. */
  readonly records: Shards<SessionFact>;
  /** The search index over the valid facts and the recorded task prompts. */
  readonly index: SearchIndex;
}

/** Options of `emptyFactStore`. */
export interface FactStoreOptions {
  readonly maxValidFacts?: number;
}

/** The default bound on valid facts before `addFacts` compacts. */
export const DEFAULT_MAX_VALID_FACTS = 500;

/** A usable bound: a positive integer, or the default. */
export const normalizeMaxValidFacts = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 1 ? Math.floor(value) : DEFAULT_MAX_VALID_FACTS;

/** An empty store (default `maxValidFacts` 500). */
export const emptyFactStore = (options: FactStoreOptions = {}): FactStore =>
  deepFreeze({
    maxValidFacts: normalizeMaxValidFacts(options?.maxValidFacts),
    validCount: 0,
    pairs: EMPTY_TRIE,
    records: EMPTY_TRIE,
    index: emptySearchIndex(),
  });

const PAIR_SEPARATOR = '\u001f';

/** The key of a (subject, relation) pair. */
export const pairKey = (subject: string, relation: string): string => subject + PAIR_SEPARATOR + relation;

/** The shard hash of a pair key. */
export const pairHash = (key: string): number => fnv1a(key);

/** The key of one record: a fact id has one record per interval, and intervals of one id never share a start. */
export const recordKey = (fact: Pick<SessionFact, 'id' | 'validFrom'>): string => `${fact.id}@${fact.validFrom}`;
