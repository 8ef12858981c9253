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
