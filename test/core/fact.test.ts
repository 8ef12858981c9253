import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createFactId } from '../../src/index.js';

const reference = (s: string, r: string, o: string): string =>
  createHash('sha256').update(`${s}\u001f${r}\u001f${o}`, 'utf8').digest('hex').slice(0, 16);

describe('createFactId', () => {
  it('is the first 16 hex characters of SHA-256 over subject, relation and object joined by U+001F', () => {
    expect(createFactId('src/a.ts', 'modified_by', 'task:1')).toBe(reference('src/a.ts', 'modified_by', 'task:1'));
    expect(createFactId('', '', '')).toBe(reference('', '', ''));
    expect(createFactId('ünïcödé 🚀', 'r', 'x'.repeat(2000))).toBe(reference('ünïcödé 🚀', 'r', 'x'.repeat(2000)));
  });

  it('agrees with a reference SHA-256 for any strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string(), fc.string({ maxLength: 600 }), (s, r, o) => {
        expect(createFactId(s, r, o)).toBe(reference(s, r, o));
      }),
    );
  });
});

describe('hashing', () => {
  it('the portable SHA-256 gives the same hex prefix as the native one, for any text and length', async () => {
    const { portableSha256HexPrefix, sha256HexPrefix } = await import('../../src/base/hash.js');
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), fc.constantFrom(1, 4, 8, 16, 32), (text, bytes) => {
        expect(sha256HexPrefix(text, bytes)).toHaveLength(bytes * 2);
        expect(portableSha256HexPrefix(text, bytes)).toBe(sha256HexPrefix(text, bytes));
      }),
    );
  });
});
