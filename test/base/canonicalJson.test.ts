/**
 * Canonical JSON: one text per value whatever the order of its objects' members, and otherwise
 * exactly what JSON.stringify writes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/base/canonicalJson.js';

/** `value` with the members of every object in reverse order. */
const reversed = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(reversed);
  if (typeof value !== 'object' || value === null) return value;
  const copy = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(value).reverse()) copy[key] = reversed((value as Record<string, unknown>)[key]);
  return copy;
};

describe('canonicalJson', () => {
  it('writes the same text for an object with its members in another order, and reads back as the value', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (value) => {
        const text = canonicalJson(value);
        expect(canonicalJson(reversed(value) as Record<string, unknown>)).toBe(text);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it('sorts members at every depth, keeps the order of arrays, and leaves out what JSON.stringify leaves out', () => {
    expect(canonicalJson({ b: [{ d: 1, c: 2 }, 3], a: undefined, ['__proto__']: { z: 1, y: 2 } })).toBe(
      '{"__proto__":{"y":2,"z":1},"b":[{"c":2,"d":1},3]}',
    );
    expect(canonicalJson([3, 1, 2])).toBe('[3,1,2]');
    const sorted = { a: 1, b: { c: [1, 2], d: 'x' } };
    expect(canonicalJson(sorted)).toBe(JSON.stringify(sorted));
  });
});
