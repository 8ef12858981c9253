/**
 * The store's wide keyed collections (records by fact id, pair logs by the hash of the pair):
 * hex tries (see trie.ts), so a write copies a few nodes of at most 16 entries whatever the
 * size of the collection.
 */
import {
  type Batch,
  type TrieHash,
  beginBatch,
  EMPTY_TRIE,
  type HexTrie,
  sealBatch,
  trieForEachValue,
  trieGet,
  trieRemove,
  trieSet,
} from './trie.js';

/** A collection keyed by string, placed by a hex hash of the key. */
export type Shards<T> = HexTrie<T>;

/** The entry at `key` (whose hash is `hash`). */
export const shardGet = <T>(shards: Shards<T>, hash: TrieHash, key: string): T | undefined =>
  trieGet(shards, hash, key);

/** Every entry, in no particular order. */
export const shardValues = <T>(shards: Shards<T>): T[] => {
  const out: T[] = [];
  trieForEachValue(shards, (value) => out.push(value));
  return out;
};

/**
 * The shards with `key` set to `value`, or removed when `value` is undefined; `hashOf` gives
 * the hash of any key (used when a node splits). The same shards when nothing changes.
 */
export const shardWrite = <T>(
  batch: Batch,
  shards: Shards<T>,
  hash: TrieHash,
  key: string,
  value: T | undefined,
  hashOf: (key: string) => TrieHash,
): Shards<T> =>
  value === undefined ? trieRemove(batch, shards, hash, key) : trieSet(batch, shards, hash, key, value, hashOf);

/** Frozen shards holding `entries` (built in one batch). */
export const shardsFrom = <T>(
  entries: Iterable<readonly [hash: TrieHash, key: string, value: T]>,
  hashOf: (key: string) => TrieHash,
): Shards<T> => {
  const batch = beginBatch();
  let shards: Shards<T> = EMPTY_TRIE;
  for (const [hash, key, value] of entries) shards = trieSet(batch, shards, hash, key, value, hashOf);
  sealBatch(batch);
  return shards;
};
