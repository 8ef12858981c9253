/**
 * The layout of a persistent map (persistentMap.ts): a trie on the 8 hex digits of a 32-bit
 * hash of each key. A node whose keys are at most LEAF_LIMIT (or that is MAX_DEPTH deep) is a
 * leaf, its entries flat as alternating keys and values in key order; any other is a branch of
 * 16 children by the next digit. So the layout is a function of the entries alone, whatever
 * writes made them: two maps of the same entries are deep-equal, and `trieOf` builds the very
 * nodes a run of writes would.
 */
import { fnv1a } from '../base/hash.js';

/** A leaf: key, value, key, value, ... */
export type Leaf = Array<unknown>;
/** A branch: its entry count and its 16 children by the next hex digit (null where none). */
export interface Branch {
  n: number;
  c: Array<Node | null>;
}
/** A node of the trie. */
export type Node = Leaf | Branch;

// persistentMap.ts holds the same two constants and digit for its own lookups (see there).
const LEAF_LIMIT = 16;
const MAX_DEPTH = 8;

/** The hex digit of `hash` that picks a child at `depth` (0 past the last: colliding keys share a leaf). */
const digitAt = (hash: number, depth: number): number => (depth < MAX_DEPTH ? (hash >>> (28 - 4 * depth)) & 15 : 0);

const byKey = (a: number, b: number, keys: ReadonlyArray<string>): number =>
  keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : 0;

/** The node at `depth` of the entries `at` (indexes into keys, values and hashes). */
const build = (
  at: number[],
  depth: number,
  keys: ReadonlyArray<string>,
  values: ReadonlyArray<unknown>,
  hashes: Uint32Array,
): Node => {
  if (at.length <= LEAF_LIMIT || depth >= MAX_DEPTH) {
    at.sort((a, b) => byKey(a, b, keys));
    const leaf: Leaf = new Array<unknown>(2 * at.length);
    for (let i = 0; i < at.length; i += 1) {
      leaf[2 * i] = keys[at[i]!];
      leaf[2 * i + 1] = values[at[i]!];
    }
    return leaf;
  }
  const groups: Array<number[] | undefined> = [];
  for (const i of at) (groups[digitAt(hashes[i]!, depth)] ??= []).push(i);
  const c = new Array<Node | null>(16).fill(null);
  groups.forEach((group, digit) => {
    if (group !== undefined) c[digit] = build(group, depth + 1, keys, values, hashes);
  });
  return { n: at.length, c };
};

/**
 * The trie of these entries (distinct keys), as new unfrozen nodes nothing owns: the layout
 * the same entries get from any run of writes.
 */
export const trieOf = (keys: ReadonlyArray<string>, values: ReadonlyArray<unknown>): Node => {
  const hashes = new Uint32Array(keys.length);
  const at: number[] = new Array<number>(keys.length);
  for (let i = 0; i < keys.length; i += 1) {
    hashes[i] = fnv1a(keys[i]!);
    at[i] = i;
  }
  return build(at, 0, keys, values, hashes);
};
