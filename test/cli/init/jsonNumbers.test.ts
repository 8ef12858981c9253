/** `findInexactNumber`: the numbers of a JSON text that JSON.parse cannot keep exactly. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findInexactNumber } from '../../../src/cli/init/jsonNumbers.js';

describe('findInexactNumber', () => {
  it('finds a number past the precision or the range of a double', () => {
    expect(findInexactNumber('{"a": 12345678901234567891}')).toBe('12345678901234567891');
    expect(findInexactNumber('[1, 9007199254740993]')).toBe('9007199254740993');
    expect(findInexactNumber('{"x": 1e400}')).toBe('1e400');
    expect(findInexactNumber('{"x": 1e-400}')).toBe('1e-400');
  });

  it('accepts numbers whose spelling alone would change, and ignores digits inside strings', () => {
    expect(findInexactNumber('{"a": 1.0, "b": 1e2, "c": 0.10, "d": -0.5E-3, "e": 5e-324, "f": 0}')).toBeUndefined();
    expect(findInexactNumber('{"id": "12345678901234567891", "q": "\\" 1e400"}')).toBeUndefined();
  });

  it('reads strings of megabytes, escapes and all, to the number after them', () => {
    const long = 'x'.repeat(10_000_000);
    const escaped = 'a\\"'.repeat(3_000_000);
    expect(findInexactNumber(JSON.stringify({ long, escaped, n: 1 }))).toBeUndefined();
    expect(
      findInexactNumber(`{"long": ${JSON.stringify(long)}, "escaped": ${JSON.stringify(escaped)}, "n": 1e400}`),
    ).toBe('1e400');
  });

  it('finds no inexact number in any JSON text JSON.stringify writes', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(findInexactNumber(JSON.stringify(value) ?? 'null')).toBeUndefined();
      }),
    );
  });
});
