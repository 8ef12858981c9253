/**
 * A keyed collection that grows as a trie on the hex digits of each key's hash: a leaf holds
 * its entries flat until it has more than LEAF_LIMIT of them, then splits into a branch of up
 * to 16 children by the next digit. Small collections stay one small array (cheap in memory,
 * which matters for the many short posting lists of an index), and an update copies one path
 * of small nodes, so its cost does not grow with the collection.
 *
 * A leaf is an array of alternating keys and values, not an object keyed by them: keys come
 * from untrusted text (`constructor` is a term, `12` a task id) and are never property names,
 * and an object layout would give every leaf a shape of its own, which costs memory and makes
 * reading it slow. A branch knows how many entries it holds, so a trie's size costs nothing.
 *
 * Updates are persistent (the input is never changed) and batched: within one `Batch`, nodes
 * the batch created are changed in place, so a reducer that writes many entries copies each
 * node at most once. Reads and writes work on plain values, never on immer drafts: a proxy
 * per node visited would cost more than the copying it saves.
 */

/** A leaf: key, value, key, value, ... */
export type HexLeaf<T> = ReadonlyArray<string | T>;
/** A branch: its entry count (`n`) and its children by the next hex digit (`c`: 16 slots, null where none). */
export interface HexBranch<T> {
  readonly n: number;
  readonly c: ReadonlyArray<HexTrie<T> | null>;
}
/** A trie node. Plain data. */
export type HexTrie<T> = HexLeaf<T> | HexBranch<T>;

/** `T` with its own fields writable (for values a batch is still building). */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type MutableBranch<T> = { n: number; c: Array<HexTrie<T> | null> };

const isLeaf = <T>(trie: HexTrie<T>): trie is HexLeaf<T> => Array.isArray(trie);

/** An empty trie (a frozen empty leaf). */
export const EMPTY_TRIE: HexTrie<never> = Object.freeze([]);

/**
 * Entries a leaf holds before it splits: a lookup compares at most this many keys, and a
 * write copies at most twice as many slots.
 */
const LEAF_LIMIT = 16;

/**
 * Where a key goes: lowercase hex digits (a fact id is one already), or a 32-bit number read
 * as its 8 hex digits (a hash computed for the purpose, with no string to build).
 */
export type TrieHash = string | number;

/** The hex digit of `hash` at `depth` (0 past its end): the slot of a child. */
const digitAt = (hash: TrieHash, depth: number): number => {
  if (typeof hash === 'number') return depth < 8 ? (hash >>> (28 - 4 * depth)) & 15 : 0;
  const code = hash.charCodeAt(depth);
  return code >= 48 && code <= 57 ? code - 48 : code >= 97 && code <= 102 ? code - 87 : 0;
};
/** Hash digits available for splitting (the shortest hash used is 8 hex digits). */
const MAX_DEPTH = 8;

/** The position of `key` in a leaf, or -1. */
const slotOf = <T>(leaf: HexLeaf<T>, key: string): number => {
  for (let i = 0; i < leaf.length; i += 2) if (leaf[i] === key) return i;
  return -1;
};

/** The leaf where `hash` leads, if any. */
const leafAt = <T>(trie: HexTrie<T> | undefined, hash: TrieHash): HexLeaf<T> | undefined => {
  let node: HexTrie<T> | null | undefined = trie;
  for (let depth = 0; node !== undefined && node !== null && !isLeaf(node); depth += 1)
    node = node.c[digitAt(hash, depth)];
  return node ?? undefined;
};

/**
 * The objects created by one batch of updates, which the batch may still change in place.
 * A batch ends sealed: every object it created is frozen when the reducer returns. A transient
 * batch (see `beginTransientBatch`) stays open across reducer calls instead.
 */
export interface Batch {
  /** What the batch created; undefined for a transient batch, which owns whatever is not frozen. */
  readonly created: { readonly set: Set<object>; readonly list: object[] } | undefined;
}

/** Starts a batch of persistent updates. */
export const beginBatch = (): Batch => ({ created: { set: new Set(), list: [] } });

/**
 * Starts a transient batch: it owns every object it creates until the caller seals the value
 * holding them with `sealTree`, so a run of reducer calls whose intermediate values nobody
 * keeps copies each node once instead of once per call. It needs no record of what it
 * created: everything a sealed state holds is frozen, so whatever is not was built by it.
 * Only a caller that is the sole holder of every value it passes may use one (the replay of
 * a history does); what it seals is exactly what the persistent reducers would have returned.
 */
export const beginTransientBatch = (): Batch => ({ created: undefined });

/** True for a batch that stays open across reducer calls. */
export const isTransient = (batch: Batch): boolean => batch.created === undefined;

/** A new object owned by the batch. */
export const fresh = <T extends object>(batch: Batch, value: T): T => {
  if (batch.created !== undefined) {
    batch.created.set.add(value);
    batch.created.list.push(value);
  }
  return value;
};

/** True when the batch may change `value` in place. */
const owns = (batch: Batch, value: object): boolean =>
  batch.created === undefined ? !Object.isFrozen(value) : batch.created.set.has(value);

/** `value` itself when this batch created it, else a shallow copy the batch now owns. */
export const own = <T extends object>(batch: Batch, value: T): Mutable<T> =>
  owns(batch, value)
    ? (value as Mutable<T>)
    : fresh(batch, (Array.isArray(value) ? value.slice() : { ...value }) as Mutable<T>);

/**
 * Freezes what the batch created (nothing for a transient batch). Everything else a batch's
 * result holds was frozen before (it comes from a frozen state, or is a shared frozen
 * constant), so this freezes the result deeply without walking it. The batch owns nothing
 * afterwards: further writes through it copy, as they would through a new batch.
 */
export const sealBatch = (batch: Batch): void => {
  if (batch.created === undefined) return;
  for (const value of batch.created.list) Object.freeze(value);
  batch.created.list.length = 0;
  batch.created.set.clear();
};

/**
 * Deeply freezes `value`, skipping frozen objects: everything a frozen object holds is frozen
 * already, so this walks only what a transient batch built since the last seal.
 */
export const sealTree = (value: unknown): void => {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const key in value) sealTree((value as Readonly<Record<string, unknown>>)[key]);
};

/** The number of entries. */
export const trieSize = <T>(trie: HexTrie<T> | undefined): number =>
  trie === undefined ? 0 : isLeaf(trie) ? trie.length / 2 : trie.n;

/** True when the trie holds no entry. */
export const trieIsEmpty = <T>(trie: HexTrie<T> | undefined): boolean => trieSize(trie) === 0;

/** The entry at `key` (whose hash is `hash`). */
export const trieGet = <T>(trie: HexTrie<T> | undefined, hash: TrieHash, key: string): T | undefined => {
  const leaf = leafAt(trie, hash);
  if (leaf === undefined) return undefined;
  const slot = slotOf(leaf, key);
  return slot < 0 ? undefined : (leaf[slot + 1] as T);
};

/** The first value in the leaf where `hash` leads that passes `test`: a lookup by a key's prefix, when entries sharing it share a hash. */
export const trieFind = <T>(
  trie: HexTrie<T> | undefined,
  hash: TrieHash,
  test: (value: T) => boolean,
): T | undefined => {
  const leaf = leafAt(trie, hash);
  if (leaf !== undefined) for (let i = 1; i < leaf.length; i += 2) if (test(leaf[i] as T)) return leaf[i] as T;
  return undefined;
};

/** Calls `visit` for every entry. */
export const trieForEach = <T>(trie: HexTrie<T> | undefined, visit: (value: T, key: string) => void): void => {
  if (trie === undefined) return;
  if (isLeaf(trie)) for (let i = 0; i < trie.length; i += 2) visit(trie[i + 1] as T, trie[i] as string);
  else for (const child of trie.c) if (child !== null) trieForEach(child, visit);
};

/** Calls `visit` for every value (cheaper than `trieForEach` when the keys are not needed). */
export const trieForEachValue = <T>(trie: HexTrie<T> | undefined, visit: (value: T) => void): void => {
  if (trie === undefined) return;
  if (isLeaf(trie)) for (let i = 1; i < trie.length; i += 2) visit(trie[i] as T);
  else for (const child of trie.c) if (child !== null) trieForEachValue(child, visit);
};

/** A full leaf as a branch of leaves, one per next digit of its keys' hashes. */
const split = <T>(batch: Batch, leaf: HexLeaf<T>, depth: number, hashOf: (key: string) => TrieHash): HexBranch<T> => {
  const groups: Array<Array<string | T> | undefined> = [];
  for (let i = 0; i < leaf.length; i += 2) {
    const key = leaf[i] as string;
    (groups[digitAt(hashOf(key), depth)] ??= []).push(key, leaf[i + 1]!);
  }
  const children = fresh(batch, new Array<HexTrie<T> | null>(16).fill(null));
  // Copied to their exact size: an array grown by pushes keeps spare slots for good.
  groups.forEach((group, digit) => {
    if (group !== undefined) children[digit] = fresh(batch, group.slice());
  });
  return fresh(batch, { n: leaf.length / 2, c: children });
};

/**
 * The branch with child `digit` replaced by `child`, which changed the entry count by
 * `grown`: in place when the batch owns the branch.
 */
const withChild = <T>(
  batch: Batch,
  branch: HexBranch<T>,
  digit: number,
  child: HexTrie<T>,
  grown: number,
): HexBranch<T> => {
  const node = own(batch, branch) as MutableBranch<T>;
  node.c = own(batch, node.c) as Array<HexTrie<T> | null>;
  node.c[digit] = trieIsEmpty(child) ? null : child;
  node.n += grown;
  return node;
};

/**
 * The trie with `key` set to `value`; `hashOf` recomputes the hash of keys moved by a split.
 * Returns the same trie when the entry already holds `value`. New leaves are built at their
 * exact size (a concat, not a push or a spread: those keep spare slots).
 */
export const trieSet = <T>(
  batch: Batch,
  trie: HexTrie<T>,
  hash: TrieHash,
  key: string,
  value: T,
  hashOf: (key: string) => TrieHash,
  depth = 0,
): HexTrie<T> => {
  if (!isLeaf(trie)) {
    const digit = digitAt(hash, depth);
    const child = trie.c[digit] ?? EMPTY_TRIE;
    const before = trieSize(child);
    const updated = trieSet(batch, child, hash, key, value, hashOf, depth + 1);
    const grown = trieSize(updated) - before;
    // A child this batch owns may have changed in place: its branch is the batch's too.
    if (updated === child && grown === 0) return trie;
    return withChild(batch, trie, digit, updated, grown);
  }
  const slot = slotOf(trie, key);
  if (slot >= 0) {
    if (trie[slot + 1] === value) return trie;
    const leaf = own(batch, trie) as Array<string | T>;
    leaf[slot + 1] = value;
    return leaf;
  }
  // A transient batch grows its own leaves in place; a sealed one copies at the exact size.
  const leaf =
    isTransient(batch) && owns(batch, trie) ? (trie as Array<string | T>) : fresh(batch, trie.concat([key, value]));
  if (leaf === trie) leaf.push(key, value);
  return depth < MAX_DEPTH && leaf.length > 2 * LEAF_LIMIT ? split(batch, leaf, depth, hashOf) : leaf;
};

/** The trie without `key` (emptied children pruned), or the same trie when it had no such key. */
export const trieRemove = <T>(batch: Batch, trie: HexTrie<T>, hash: TrieHash, key: string, depth = 0): HexTrie<T> => {
  if (!isLeaf(trie)) {
    const digit = digitAt(hash, depth);
    const child = trie.c[digit] ?? null;
    if (child === null) return trie;
    const before = trieSize(child);
    const updated = trieRemove(batch, child, hash, key, depth + 1);
    const grown = trieSize(updated) - before;
    if (grown === 0) return trie;
    return trie.n + grown === 0 ? EMPTY_TRIE : withChild(batch, trie, digit, updated, grown);
  }
  const slot = slotOf(trie, key);
  if (slot < 0) return trie;
  if (trie.length === 2) return EMPTY_TRIE;
  // As in trieSet: a transient batch shrinks its own leaves in place.
  if (isTransient(batch) && owns(batch, trie)) {
    (trie as Array<string | T>).splice(slot, 2);
    return trie;
  }
  return fresh(batch, trie.slice(0, slot).concat(trie.slice(slot + 2)));
};
