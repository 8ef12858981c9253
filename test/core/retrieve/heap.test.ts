import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstTier, nextTier, popCandidate } from '../../../src/core/retrieve/heap.js';
import type { CandidateScratch } from '../../../src/core/retrieve/scratch.js';

/** Walks candidates as the scan does: the first tier's heap, then the waiting ones', popping every one. */
const walk = (bounds: ReadonlyArray<number>): Array<[number, number]> => {
  const heap: CandidateScratch = { docs: Int32Array.from(bounds, (_, i) => i), bounds: Float64Array.from(bounds) };
  const tier = firstTier(heap, bounds.length);
  let waiting = bounds.length - tier;
  const taken: Array<[number, number]> = [];
  for (let left = tier; left > 0 || waiting > 0; left -= 1) {
    if (left === 0) {
      left = nextTier(heap, tier, waiting);
      waiting = 0;
    }
    taken.push([heap.docs[0]!, heap.bounds[0]!]);
    popCandidate(heap, left);
  }
  return taken;
};

// Bounds as the scan makes them: mostly small (recency alone), a few large, many tied.
const boundArb = fc.oneof(
  fc.constantFrom(0, 0.5, 1, 1e-12),
  fc.double({ min: 0, max: 1, noNaN: true }),
  fc.double({ min: 0, max: 1e6, noNaN: true }),
);

describe('the candidates a scan walks', () => {
  it('come out every one exactly once, never a higher bound after a lower one, whether they fit one tier or need two', () => {
    fc.assert(
      fc.property(fc.array(boundArb, { maxLength: 2_000, size: 'max' }), (bounds) => {
        const taken = walk(bounds);
        expect(taken.map(([doc]) => doc).sort((a, b) => a - b)).toEqual(bounds.map((_, i) => i));
        expect(taken.every(([doc, bound]) => bound === bounds[doc])).toBe(true);
        expect(taken.every(([, bound], i) => i === 0 || bound <= taken[i - 1]![1])).toBe(true);
      }),
      // A failure is reported as found: shrinking lists of thousands of bounds takes minutes.
      { numRuns: 100, endOnFailure: true },
    );
  });

  it('of a thousand, with a few high bounds among low ones, puts no more than a few hundred in the first tier', () => {
    const bounds = Array.from({ length: 1_000 }, (_, i) => (i % 10 === 0 ? 100 + i : i / 1_000));
    const heap: CandidateScratch = { docs: Int32Array.from(bounds, (_, i) => i), bounds: Float64Array.from(bounds) };
    const tier = firstTier(heap, bounds.length);
    expect(tier).toBeGreaterThan(0);
    expect(tier).toBeLessThan(400);
    expect(heap.bounds[0]).toBe(Math.max(...bounds));
  });
});
