/**
 * Copying arrays that may be frozen (`copyOf`, `sliceable`): the copies the writers make of
 * frozen nodes, whatever the array holds.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { copyOf, sliceable } from '../../src/persistent/sliceable.js';

/** Arrays as nodes hold them: numbers alone (postings, times), keys and values, objects, nulls, mixed. */
const arrayArb = fc.oneof(
  fc.array(fc.integer()),
  fc.array(fc.double({ noNaN: true })),
  fc.array(fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.object())),
  fc.array(fc.oneof(fc.constant(null), fc.record({ n: fc.nat() }))),
);

describe('copyOf', () => {
  it('gives an unfrozen array equal to the one given, frozen or not, element for element, never the same array', () => {
    fc.assert(
      fc.property(arrayArb, fc.boolean(), (array, frozen) => {
        const given = frozen ? Object.freeze(array.slice()) : array;
        const copy = copyOf(given);
        expect(copy).not.toBe(given);
        expect(Object.isFrozen(copy)).toBe(false);
        expect(copy).toHaveLength(given.length);
        given.forEach((element, i) => expect(copy[i]).toBe(element));
        copy.push(1);
        expect(given).toHaveLength(array.length);
      }),
    );
  });

  it('keeps a hole of an unfrozen array a hole, as slice does', () => {
    const holey = [1, , 3];
    expect(1 in copyOf(holey)).toBe(false);
  });
});

describe('sliceable', () => {
  it('gives an unfrozen array itself and a frozen one as an equal unfrozen copy, so slice and concat give what they give on the original', () => {
    fc.assert(
      fc.property(arrayArb, fc.nat(), fc.nat(), (array, a, b) => {
        expect(sliceable(array)).toBe(array);
        const frozen = Object.freeze(array.slice());
        const from = sliceable(frozen);
        expect(Object.isFrozen(from)).toBe(false);
        expect(from.slice(a, b)).toEqual(array.slice(a, b));
        expect(from.concat([a])).toEqual(array.concat([a]));
      }),
    );
  });
});
