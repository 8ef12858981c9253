/**
 * A wide keyed collection split into fixed nested buckets by the leading hex characters of a
 * hash. immer copies every container it touches whole, so an update touches three buckets of
 * at most 16 entries and one small leaf instead of copying one record of every entry: the cost
 * of a write does not grow with the collection.
 */

/** Nested buckets: three levels of 16, keyed by hex digits, then the entries of a leaf. */
export type Shards<T> = Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, T>>>>>>>>;

type MutableShards<T> = Record<string, Record<string, Record<string, Record<string, T>>>>;

/** Buckets are keyed by a letter per hex digit: integer-like names ('0'..'9') put an object in a slower layout. */
const LETTER: Readonly<Record<string, string>> = Object.fromEntries(
  [...'0123456789abcdef'].map((digit, i) => [digit, 'abcdefghijklmnop'[i]!]),
);
const letter = (digit: string | undefined): string => LETTER[digit ?? '0'] ?? 'a';

const path = (hash: string): readonly [string, string, string] => [letter(hash[0]), letter(hash[1]), letter(hash[2])];

/** The entry at `key` in the bucket chosen by `hash`. */
export const shardGet = <T>(shards: Shards<T>, hash: string, key: string): T | undefined => {
  const [a, b, c] = path(hash);
  return shards[a]?.[b]?.[c]?.[key];
};

/** Every entry, in no particular order. */
export const shardValues = <T>(shards: Shards<T>): T[] => {
  const out: T[] = [];
  for (const level1 of Object.values(shards))
    for (const level2 of Object.values(level1))
      for (const leaf of Object.values(level2)) for (const value of Object.values(leaf)) out.push(value);
  return out;
};

/** Sets an entry inside a draft (or any mutable value). */
export const shardPut = <T>(shards: Shards<T>, hash: string, key: string, value: T): void => {
  const mutable = shards as MutableShards<T>;
  const [a, b, c] = path(hash);
  const level1 = (mutable[a] ??= {});
  const level2 = (level1[b] ??= {});
  const leaf = (level2[c] ??= {});
  leaf[key] = value;
};

/** Deletes an entry inside a draft, pruning buckets that become empty so equal contents mean equal shapes. */
export const shardDelete = <T>(shards: Shards<T>, hash: string, key: string): void => {
  const mutable = shards as MutableShards<T>;
  const [a, b, c] = path(hash);
  const level1 = mutable[a];
  const level2 = level1?.[b];
  const leaf = level2?.[c];
  if (leaf === undefined || !(key in leaf)) return;
  delete leaf[key];
  if (Object.keys(leaf).length > 0) return;
  delete level2![c];
  if (Object.keys(level2!).length > 0) return;
  delete level1![b];
  if (Object.keys(level1!).length > 0) return;
  delete mutable[a];
};

/** Builds shards from entries in one pass (outside any producer). */
export const shardsFrom = <T>(entries: Iterable<readonly [hash: string, key: string, value: T]>): Shards<T> => {
  const out: MutableShards<T> = {};
  for (const [hash, key, value] of entries) shardPut(out, hash, key, value);
  return out;
};
