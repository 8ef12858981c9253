/**
 * A persistent vector from small non-negative integers to values, with holes: a 32-way radix
 * trie, so a read is a few array lookups and a write copies one path of 32-slot nodes. The
 * search index numbers its documents with it (numbers only grow; a removed document leaves a
 * hole, and a node whose slots are all holes is dropped). Plain data, opaque to callers, and
 * written in place inside a write run (`asOneRun`) like the persistent map.
 */
import { asOneRun, fresh, isMutating, own } from './owner.js';

declare const opaque: unique symbol;
/** A persistent vector of `V` with holes. Plain data; read and write it only through this module. */
export type PersistentVector<V> = { readonly [opaque]: V };

type Slot = unknown;
interface Vector {
  /** Bits of the index above the leaf level: 0 when the root is a leaf. */
  shift: number;
  root: Slot[] | null;
}

const BITS = 5;
const WIDTH = 1 << BITS;
const MASK = WIDTH - 1;

const view = <V>(vector: PersistentVector<V>): Vector => vector as unknown as Vector;

/** The empty vector. */
export const emptyVector: PersistentVector<never> = Object.freeze({
  shift: 0,
  root: null,
}) as unknown as PersistentVector<never>;

/** The value at `index`, if any. */
export const getAt = <V>(vector: PersistentVector<V>, index: number): V | undefined => {
  const { shift, root } = view(vector);
  if (index < 0 || index >= WIDTH << shift || root === null) return undefined;
  let node: Slot[] | null = root;
  for (let level = shift; level > 0 && node !== null; level -= BITS)
    node = node[(index >>> level) & MASK] as Slot[] | null;
  return node === null ? undefined : ((node[index & MASK] ?? undefined) as V | undefined);
};

const emptyNode = (): Slot[] => fresh(new Array<Slot>(WIDTH).fill(null));

const isHollow = (node: Slot[]): boolean => node.every((slot) => slot === null);

/** `node` with `index` set under it at `level`, or null when nothing is left under it. */
const setIn = (node: Slot[] | null, level: number, index: number, value: Slot): Slot[] | null => {
  if (node === null && value === null) return null;
  const slot = (index >>> level) & MASK;
  const current: Slot[] = node ?? emptyNode();
  const child = level === 0 ? value : setIn((current[slot] ?? null) as Slot[] | null, level - BITS, index, value);
  if (current[slot] === child) return node;
  const next = own(current);
  next[slot] = child;
  return child === null && isHollow(next) ? null : next;
};

/** The vector with `index` holding `value`, or a hole when `value` is undefined. */
export const setAt = <V>(vector: PersistentVector<V>, index: number, value: V | undefined): PersistentVector<V> => {
  if (!Number.isInteger(index) || index < 0) throw new RangeError(`not a vector index: ${index}`);
  const write = (start: PersistentVector<V>): PersistentVector<V> => {
    let { shift, root } = view(start);
    const slot = value === undefined ? null : value;
    if (slot === null && index >= WIDTH << shift) return start;
    while (index >= WIDTH << shift) {
      if (root !== null) {
        const grown = emptyNode();
        grown[0] = root;
        root = grown;
      }
      shift += BITS;
    }
    const updated = setIn(root, shift, index, slot);
    if (updated === root && shift === view(start).shift) return start;
    return fresh({ shift: updated === null ? 0 : shift, root: updated }) as unknown as PersistentVector<V>;
  };
  return isMutating() ? write(vector) : asOneRun(() => write(vector));
};

/** Calls `visit` with every value and its index, in index order. */
export const forEachAt = <V>(vector: PersistentVector<V>, visit: (value: V, index: number) => void): void => {
  const walk = (node: Slot[], level: number, base: number): void => {
    for (let i = 0; i < WIDTH; i += 1) {
      const slot = node[i];
      if (slot === null || slot === undefined) continue;
      if (level === 0) visit(slot as V, base + i);
      else walk(slot as Slot[], level - BITS, base + (i << level));
    }
  };
  const { shift, root } = view(vector);
  if (root !== null) walk(root, shift, 0);
};
