/** `findDuplicateKey`: the keys a JSON object gives twice, which JSON.parse keeps one of. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findDuplicateKey } from '../../src/base/jsonKeys.js';

describe('findDuplicateKey', () => {
  it('finds a key given twice in one object, at any depth, written the same or escaped', () => {
    expect(findDuplicateKey('{"env": {}, "env": {}}')).toBe('env');
    expect(findDuplicateKey('{"a": [{"x": 1, "y": {"k": 1, "k": 2}}]}')).toBe('k');
    expect(findDuplicateKey('{"a\\u0062": 1, "ab": 2}')).toBe('ab');
  });

  it('takes the same key in different objects, strings that look like keys, and values for no duplicate', () => {
    expect(findDuplicateKey('{"k": {"k": 1}, "a": [{"k": 1}, {"k": 2}], "b": ["k", "k"]}')).toBeUndefined();
    expect(findDuplicateKey('{"k": "k", "s": "\\", \\"k\\": "}')).toBeUndefined();
  });

  it('finds no duplicate key in any JSON text JSON.stringify writes', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(findDuplicateKey(JSON.stringify(value) ?? 'null')).toBeUndefined();
      }),
    );
  });
});
