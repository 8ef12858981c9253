/**
 * The candidates a phase scores exactly, as a max-heap by bound in scratch arrays: the walk
 * takes them highest bound first and mostly stops after a few dozen, so they are not sorted.
 */
import type { CandidateScratch } from './scratch.js';

/** Adds a candidate to the heap of `count`; returns the new count. */
export const pushCandidate = (heap: CandidateScratch, count: number, doc: number, bound: number): number => {
  if (count === heap.docs.length) {
    const docs = new Int32Array(2 * count);
    const bounds = new Float64Array(2 * count);
    docs.set(heap.docs);
    bounds.set(heap.bounds);
    heap.docs = docs;
    heap.bounds = bounds;
  }
  const { docs, bounds } = heap;
  let at = count;
  while (at > 0) {
    const parent = (at - 1) >> 1;
    if (bounds[parent]! >= bound) break;
    docs[at] = docs[parent]!;
    bounds[at] = bounds[parent]!;
    at = parent;
  }
  docs[at] = doc;
  bounds[at] = bound;
  return count + 1;
};

/** Puts (doc, bound) at `at` or below it in the heap of `count`, moving larger children up. */
const siftDown = (heap: CandidateScratch, count: number, at: number, doc: number, bound: number): void => {
  const { docs, bounds } = heap;
  for (;;) {
    const left = 2 * at + 1;
    if (left >= count) break;
    const child = left + 1 < count && bounds[left + 1]! > bounds[left]! ? left + 1 : left;
    if (bounds[child]! <= bound) break;
    docs[at] = docs[child]!;
    bounds[at] = bounds[child]!;
    at = child;
  }
  docs[at] = doc;
  bounds[at] = bound;
};

/** Removes the top of the heap of `count` candidates. */
export const popCandidate = (heap: CandidateScratch, count: number): void => {
  const n = count - 1;
  siftDown(heap, n, 0, heap.docs[n]!, heap.bounds[n]!);
};

/** Orders the first `count` candidates of the scratch into a heap (Floyd's: bottom up, in linear time). */
export const heapifyCandidates = (heap: CandidateScratch, count: number): void => {
  for (let at = (count >> 1) - 1; at >= 0; at -= 1) siftDown(heap, count, at, heap.docs[at]!, heap.bounds[at]!);
};

/** How many candidates the first tier aims at: a walk mostly stops within the first 64. */
const TIER = 128;
/** Bounds sampled to choose the first tier's pivot. */
const SAMPLES = 64;

/**
 * Readies the first `count` candidates for a walk highest bound first, in tiers: those with a
 * bound at least a pivot go first, as a heap, and the rest wait after them unordered, until
 * `nextTier` makes them the heap (every bound of the first tier is at least every bound of the
 * second, so the walk takes them in the same order of bounds). A walk that stops within the
 * first tier never orders the hundreds of candidates below it. The pivot is the bound that about
 * TIER of the candidates reach, estimated from SAMPLES evenly spaced ones: a poor estimate
 * costs time, never order. Returns the first tier's size (all of them when few).
 */
export const firstTier = (heap: CandidateScratch, count: number): number => {
  if (count <= 2 * TIER) {
    heapifyCandidates(heap, count);
    return count;
  }
  const { docs, bounds } = heap;
  // The `rank`-th largest of the sampled bounds, kept in a short descending list.
  const rank = Math.ceil((SAMPLES * TIER) / count);
  const top: number[] = [];
  for (let i = 0; i < SAMPLES; i += 1) {
    const bound = bounds[Math.floor((i * count) / SAMPLES)]!;
    if (top.length === rank && bound <= top[rank - 1]!) continue;
    let at = Math.min(top.length, rank - 1);
    while (at > 0 && top[at - 1]! < bound) {
      top[at] = top[at - 1]!;
      at -= 1;
    }
    top[at] = bound;
  }
  const pivot = top[top.length - 1]!;
  let tier = 0;
  for (let i = 0; i < count; i += 1) {
    const bound = bounds[i]!;
    if (!(bound >= pivot)) continue;
    const doc = docs[i]!;
    docs[i] = docs[tier]!;
    bounds[i] = bounds[tier]!;
    docs[tier] = doc;
    bounds[tier] = bound;
    tier += 1;
  }
  heapifyCandidates(heap, tier);
  return tier;
};

/**
 * Makes the `waiting` candidates that follow a first tier of `tier` (see `firstTier`) the heap,
 * once the first tier's heap is empty; returns its size.
 */
export const nextTier = (heap: CandidateScratch, tier: number, waiting: number): number => {
  heap.docs.copyWithin(0, tier, tier + waiting);
  heap.bounds.copyWithin(0, tier, tier + waiting);
  heapifyCandidates(heap, waiting);
  return waiting;
};
