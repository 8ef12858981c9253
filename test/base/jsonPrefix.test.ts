/** `openJsonEnd`: how far a text reads as a JSON array or object cut short. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openJsonEnd } from '../../src/base/jsonPrefix.js';

const isOpen = (text: string): boolean => openJsonEnd(text, 0) === text.length;

describe('openJsonEnd', () => {
  it('reads JSON cut anywhere as open: inside a key, a string, an escape, a number or a literal', () => {
    for (const text of [
      '{',
      '[',
      '{"category"',
      '{"category": ',
      '{"a": [1, 2',
      '{"a": tr',
      '{"a": "x\\',
      '{"a": "x\\u00',
      '{"a": 1.',
      '{"a": -',
      '{"a": 1e+',
      '[{"category": "People", "fact": "x"}, ',
    ])
      expect(isOpen(text)).toBe(true);
  });

  it('stops at the first character that is no JSON, or at the bracket that closes the value', () => {
    expect(openJsonEnd('{ by "category"', 0)).toBe(2);
    expect(openJsonEnd('{"category", "fact"}', 0)).toBe(11);
    expect(openJsonEnd('[1, 2] and more', 0)).toBe(5);
    expect(openJsonEnd('see {"a": 1', 0)).toBe(0);
    expect(openJsonEnd('see {"a": 1', 4)).toBe(11);
    for (const text of ['{"a": 01', '{"a": truex', '[1,]', '{"a": "x\\q', '{"a": 1.e', '[}', '[1 2', '{"a": "\n'])
      expect(isOpen(text)).toBe(false);
  });

  it('reads every proper prefix of a JSON array or object as open, and the whole as closed at its end', () => {
    const containerArb = fc.oneof(fc.array(fc.jsonValue()), fc.dictionary(fc.string(), fc.jsonValue()));
    fc.assert(
      fc.property(containerArb, fc.constantFrom(0, 2), fc.nat(), (value, indent, at) => {
        const text = JSON.stringify(value, null, indent);
        expect(openJsonEnd(text, 0)).toBe(text.length - 1);
        expect(isOpen(text.slice(0, 1 + (at % (text.length - 1))))).toBe(true);
      }),
    );
  });
});
