/**
 * A persistent map from strings to values, for the wide collections of a state (pairs, facts
 * by id, postings, tasks): an update copies one path of small nodes, so its cost does not grow
 * with the map. It is plain data (arrays and objects, JSON-serializable, deeply frozen), and
 * opaque: callers use the functions below, never the layout.
 *
 * The layout is a trie on the 8 hex digits of a 32-bit hash of each key (trie.ts). A leaf holds
 * its entries flat, as an array of alternating keys and values in key order, until it has more
 * than LEAF_LIMIT of them, then splits into a branch of up to 16 children by the next digit; a
 * branch left with LEAF_LIMIT or fewer is a leaf again. The layout depends only on the entries,
 * not on the writes that made them, so two maps of the same entries are deep-equal: a decoded
 * state equals the live one it was saved from. Keys come from
 * untrusted text (`constructor` is a term, `12` a task id), so they are never property names;
 * and arrays keep one engine layout for every leaf, which costs less memory than an object each.
 *
 * In-place writes, the Immutable.js owner pattern (owner.ts): inside a run (`asOneRun`), the
 * nodes the current run created (the ones not frozen yet) are changed in place, so a run of
 * many writes copies each node at most once; when the outermost run ends, what it created is
 * frozen. Outside a run, every write is a run of its own, so the map is always persistent to
 * callers. A transient owner (a replay's) holds the maps it starts as native maps instead
 * (nativeMap.ts): every function here reads both, and `deepFreeze` turns them into tries.
 */
import { fnv1a } from '../base/hash.js';
import { NativeMap, sealedTrie } from './nativeMap.js';
import { copyOf, sliceable } from './sliceable.js';
import { asOneRun, fresh, isMutating, nativeOwner, type Owner, owns, own } from './owner.js';
import { type Branch, type Leaf, type Node, trieOf } from './trie.js';

// The layout's constants and digit, as trie.ts builds it too: this module's own bindings, not
// imports, so that the engine folds them in the lookups of the library, which is loaded
// unbundled (the tests check that both give the same tries).
/** Entries a leaf holds before it splits: a lookup compares at most this many keys. */
const LEAF_LIMIT = 16;
/** Hex digits in a hash: below this depth leaves no longer split (they hold colliding keys). */
const MAX_DEPTH = 8;
const isLeaf = (node: Node): node is Leaf => Array.isArray(node);
const digitAt = (hash: number, depth: number): number => (depth < MAX_DEPTH ? (hash >>> (28 - 4 * depth)) & 15 : 0);
const nodeSize = (current: Node | null): number =>
  current === null ? 0 : isLeaf(current) ? current.length / 2 : current.n;

declare const opaque: unique symbol;
/** A persistent map from strings to `V`. Plain data; read and write it only through this module. */
export type PersistentMap<V> = { readonly [opaque]: V };

/** The map's trie: its own, or (for a native map) a new one of its entries. */
const node = <V>(map: PersistentMap<V>): Node =>
  map instanceof Map ? sealedTrie(map as unknown as NativeMap) : (map as unknown as Node);
const nativeOf = <V>(map: PersistentMap<V>): Map<string, V> | undefined =>
  map instanceof Map ? (map as Map<string, V>) : undefined;
const wrap = <V>(root: Node): PersistentMap<V> => root as unknown as PersistentMap<V>;

/** The empty map. */
export const empty: PersistentMap<never> = wrap(Object.freeze([]) as unknown as Node);

/** The number of entries. */
export const size = <V>(map: PersistentMap<V>): number => {
  const native = nativeOf(map);
  if (native !== undefined) return native.size;
  const root = node(map);
  return isLeaf(root) ? root.length / 2 : root.n;
};

const leafAt = (root: Node, hash: number): Leaf | undefined => {
  let current: Node | null = root;
  for (let depth = 0; current !== null && !isLeaf(current); depth += 1)
    current = current.c[digitAt(hash, depth)] ?? null;
  return current ?? undefined;
};

const slotOf = (leaf: Leaf, key: string): number => {
  for (let i = 0; i < leaf.length; i += 2) if (leaf[i] === key) return i;
  return -1;
};

/** The value at `key`, if any. */
export const get = <V>(map: PersistentMap<V>, key: string): V | undefined => {
  if (map instanceof Map) return map.get(key) as V | undefined;
  const leaf = leafAt(map as unknown as Node, fnv1a(key));
  if (leaf === undefined) return undefined;
  const slot = slotOf(leaf, key);
  return slot < 0 ? undefined : (leaf[slot + 1] as V);
};

/** True when `key` has a value. */
export const has = <V>(map: PersistentMap<V>, key: string): boolean => get(map, key) !== undefined;

/** Calls `visit` with every value and its key, in no particular order. */
export const forEach = <V>(map: PersistentMap<V>, visit: (value: V, key: string) => void): void => {
  const native = nativeOf(map);
  if (native !== undefined) {
    native.forEach(visit);
    return;
  }
  const walk = (current: Node): void => {
    if (isLeaf(current)) for (let i = 0; i < current.length; i += 2) visit(current[i + 1] as V, current[i] as string);
    else for (const child of current.c) if (child !== null) walk(child);
  };
  walk(node(map));
};

/**
 * The map with each value replaced by `fn(value, key)`: the same keys in the same layout, as
 * new nodes nothing owns (for a value to be written out, or frozen by whoever reads it in).
 */
export const mapValues = <V, W>(map: PersistentMap<V>, fn: (value: V, key: string) => W): PersistentMap<W> => {
  const copy = (current: Node): Node => {
    if (!isLeaf(current)) {
      // By index, not `map`: a frozen branch's children are mapped off the engine's fast path (see sliceable.ts).
      const children = copyOf(current.c);
      for (let i = 0; i < children.length; i += 1) if (children[i] !== null) children[i] = copy(children[i]!);
      return { n: current.n, c: children };
    }
    const leaf = copyOf(current);
    for (let i = 1; i < leaf.length; i += 2) leaf[i] = fn(leaf[i] as V, leaf[i - 1] as string);
    return leaf;
  };
  return wrap(copy(node(map)));
};

/**
 * For a map just parsed from JSON, which nothing else holds yet: replaces each value, in place,
 * by `fn(value, key)`, keeping the layout (no copy of a map read in once, such as a snapshot's).
 */
export const reviveValues = <V, W>(map: PersistentMap<V>, fn: (value: V, key: string) => W): PersistentMap<W> => {
  const revive = (current: Node): void => {
    if (isLeaf(current))
      for (let i = 1; i < current.length; i += 2) current[i] = fn(current[i] as V, current[i - 1] as string);
    else for (const child of current.c) if (child !== null) revive(child);
  };
  revive(node(map));
  return map as unknown as PersistentMap<W>;
};

const iterateInto = <T>(items: Iterable<T>, out: T[]): number => {
  let at = 0;
  for (const item of items) out[at++] = item;
  return at;
};

const collectInto = (current: Node, out: unknown[], at: number, offset: 0 | 1): number => {
  if (isLeaf(current)) {
    for (let i = offset; i < current.length; i += 2) out[at++] = current[i];
    return at;
  }
  for (const child of current.c) if (child !== null) at = collectInto(child, out, at, offset);
  return at;
};

/**
 * Writes every value into `out` from its start, in no particular order, and returns how many:
 * for a hot loop over the values of many small maps, into a scratch array it reuses, with no
 * call of the loop's own code per entry (as `forEach` makes).
 */
export const valuesInto = <V>(map: PersistentMap<V>, out: V[]): number => {
  const native = nativeOf(map);
  return native === undefined ? collectInto(node(map), out, 0, 1) : iterateInto(native.values(), out);
};

/** Writes every key into `out` from its start, in no particular order, and returns how many (see `valuesInto`). */
export const keysInto = <V>(map: PersistentMap<V>, out: string[]): number => {
  const native = nativeOf(map);
  return native === undefined ? collectInto(node(map), out, 0, 0) : iterateInto(native.keys(), out);
};

/** Every value, in no particular order. */
export const values = <V>(map: PersistentMap<V>): V[] => {
  const out: V[] = [];
  valuesInto(map, out);
  return out;
};

/** Every key, in no particular order. */
export const keys = <V>(map: PersistentMap<V>): string[] => {
  const out: string[] = [];
  forEach(map, (_value, key) => out.push(key));
  return out;
};

/** A leaf that has grown past its limit as a branch of leaves, one per next digit of its keys' hashes. */
const split = (leaf: Leaf, depth: number): Branch => {
  const groups: Array<Leaf | undefined> = [];
  for (let i = 0; i < leaf.length; i += 2) {
    const key = leaf[i] as string;
    (groups[digitAt(fnv1a(key), depth)] ??= []).push(key, leaf[i + 1]);
  }
  const children = fresh(new Array<Node | null>(16).fill(null));
  // Copied to their exact size: an array grown by pushes keeps spare slots for good.
  groups.forEach((group, digit) => {
    if (group !== undefined) children[digit] = fresh(group.slice());
  });
  return fresh({ n: leaf.length / 2, c: children });
};

/** The branch with child `digit` replaced, its count changed by `grown`: in place when the run owns it. */
const withChild = (branch: Branch, digit: number, child: Node, grown: number): Branch => {
  const updated = own(branch) as Branch;
  updated.c = own(updated.c);
  updated.c[digit] = isLeaf(child) && child.length === 0 ? null : child;
  updated.n += grown;
  return updated;
};

const setIn = (current: Node, hash: number, key: string, value: unknown, depth: number): Node => {
  if (!isLeaf(current)) {
    const digit = digitAt(hash, depth);
    const child = current.c[digit] ?? (empty as unknown as Leaf);
    const before = nodeSize(child);
    const updated = setIn(child, hash, key, value, depth + 1);
    // A child changed in place belongs to the run, and so does every branch above it.
    if (updated === child && nodeSize(updated) === before) return current;
    return withChild(current, digit, updated, nodeSize(updated) - before);
  }
  const slot = slotOf(current, key);
  if (slot >= 0) {
    if (current[slot + 1] === value) return current;
    const leaf = own(current);
    leaf[slot + 1] = value;
    return leaf;
  }
  // An owned leaf grows in place; otherwise the copy is built at its exact size (a concat, not a spread).
  let leaf: Leaf;
  if (owns(current)) {
    leaf = current;
    leaf.push(key, value);
  } else leaf = fresh(sliceable(current).concat([key, value]));
  // Keys stay in order, so maps set with the same entries are deep-equal whatever the order of the writes.
  let at = leaf.length - 2;
  for (; at > 0 && (leaf[at - 2] as string) > key; at -= 2) {
    leaf[at] = leaf[at - 2];
    leaf[at + 1] = leaf[at - 1];
  }
  leaf[at] = key;
  leaf[at + 1] = value;
  return depth < MAX_DEPTH && leaf.length > 2 * LEAF_LIMIT ? split(leaf, depth) : leaf;
};

/** A branch of LEAF_LIMIT entries or fewer as the leaf of its entries, in key order (the run owns it). */
const collapse = (branch: Branch): Leaf => {
  const keys: string[] = [];
  const values: unknown[] = [];
  collectInto(branch, keys, 0, 0);
  collectInto(branch, values, 0, 1);
  return fresh(trieOf(keys, values) as Leaf);
};

const removeIn = (current: Node, hash: number, key: string, depth: number): Node => {
  if (!isLeaf(current)) {
    const digit = digitAt(hash, depth);
    const child = current.c[digit] ?? null;
    if (child === null) return current;
    const before = nodeSize(child);
    const updated = removeIn(child, hash, key, depth + 1);
    const grown = nodeSize(updated) - before;
    if (grown === 0) return current;
    if (current.n + grown === 0) return empty as unknown as Leaf;
    const branch = withChild(current, digit, updated, grown);
    // Back to a leaf once it holds no more than one: the layout stays a function of the entries.
    return branch.n <= LEAF_LIMIT ? collapse(branch) : branch;
  }
  const slot = slotOf(current, key);
  if (slot < 0) return current;
  if (current.length === 2) return empty as unknown as Leaf;
  if (owns(current)) {
    current.splice(slot, 2);
    return current;
  }
  const from = sliceable(current);
  return fresh(from.slice(0, slot).concat(from.slice(slot + 2)));
};

/**
 * The native map a transient owner writes in place for `map`: the map itself when the owner
 * started it, a copy when another did, a new one for the empty map; undefined for a trie that
 * holds entries (a state read in, or sealed on the way): its writes copy a path as any run's,
 * instead of copying every entry into a native map, which a replay sealing its store at every
 * prompt would pay again at each.
 */
const nativeFor = <V>(map: PersistentMap<V>, owner: Owner): NativeMap | undefined => {
  if (map instanceof NativeMap) return map.owner === owner ? map : new NativeMap(owner, map);
  return size(map) === 0 ? new NativeMap(owner) : undefined;
};

const asMap = <V>(native: NativeMap): PersistentMap<V> => native as unknown as PersistentMap<V>;

/** The map with `key` set to `value` (the same map when it already holds exactly that value). */
export const set = <V>(map: PersistentMap<V>, key: string, value: V): PersistentMap<V> => {
  const owner = nativeOwner();
  const native = owner === undefined ? undefined : nativeFor(map, owner);
  if (native !== undefined) {
    if (native !== (map as unknown) && native.get(key) === value) return map;
    native.set(key, value);
    return asMap(native);
  }
  return isMutating()
    ? wrap(setIn(node(map), fnv1a(key), key, value, 0))
    : asOneRun(() => wrap(setIn(node(map), fnv1a(key), key, value, 0)));
};

/** The map without `key` (the same map when it has no such key). */
export const remove = <V>(map: PersistentMap<V>, key: string): PersistentMap<V> => {
  if (map instanceof NativeMap ? !map.has(key) : size(map) === 0) return map;
  const owner = nativeOwner();
  const native = owner === undefined ? undefined : nativeFor(map, owner);
  if (native !== undefined) {
    native.delete(key);
    return asMap(native);
  }
  return isMutating()
    ? wrap(removeIn(node(map), fnv1a(key), key, 0))
    : asOneRun(() => wrap(removeIn(node(map), fnv1a(key), key, 0)));
};

/** The map holding `entries` (a later entry of a key wins). */
export const fromEntries = <V>(entries: Iterable<readonly [string, V]>): PersistentMap<V> =>
  asOneRun(() => {
    let result = empty as PersistentMap<V>;
    for (const [key, value] of entries) result = set(result, key, value);
    return result;
  });

/** True when no node below the root is empty and every branch counts its entries right (for tests). */
export const isWellFormed = <V>(map: PersistentMap<V>): boolean => {
  const check = (current: Node, isRoot: boolean): boolean => {
    if (isLeaf(current)) return isRoot || current.length > 0;
    if (current.c.length !== 16 || current.n <= LEAF_LIMIT) return false;
    if (current.n !== current.c.reduce((sum, child) => sum + nodeSize(child), 0)) return false;
    return current.c.every((child) => child === null || check(child, false));
  };
  return check(node(map), true);
};
