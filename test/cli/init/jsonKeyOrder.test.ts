/** `markIndexKeys` and `unmarkIndexKeys`: a JSON text's keys kept in its order through a parse and a rewrite. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { markIndexKeys, unmarkIndexKeys } from '../../../src/cli/init/jsonKeyOrder.js';

/** A JSON text parsed through the mark and written back, indented by `indent`. */
const rewrite = (text: string, indent: string | number = 2): string =>
  unmarkIndexKeys(JSON.stringify(JSON.parse(markIndexKeys(text)), null, indent));

describe('markIndexKeys and unmarkIndexKeys', () => {
  it('keep keys that read as array indices where the text put them, at any depth', () => {
    const text = '{"web": 1, "7": {"b": 2, "10": 3, "2": [{"z": 4, "0": 5}]}, "4294967295": 6, "1": 7}';
    for (const indent of [2, '\t']) expect(rewrite(text, indent).replace(/\s/gu, '')).toBe(text.replace(/\s/gu, ''));
  });

  it('give back a key that starts with the mark, and leave strings that are no keys as they are', () => {
    const text = '{"\\u00007": ["\\u00001", "\\u0000x\\":"], "a": "\\u00002", "\\u0000": 1, "8": "\\"7\\": 1"}';
    expect(rewrite(text).replace(/\s/gu, '')).toBe(text.replace(/\s/gu, ''));
  });

  it('change nothing of any JSON value JSON.stringify writes', () => {
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: 'binary' }), (value) => {
        const text = JSON.stringify(value, null, 2) ?? 'null';
        expect(rewrite(text)).toBe(text);
      }),
    );
  });
});
