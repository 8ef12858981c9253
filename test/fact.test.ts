import { createHash } from 'node:crypto';
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { createFactId } from '../src/index.js';

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
    const { portableSha256HexPrefix, sha256HexPrefix } = await import('../src/hash.js');
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), fc.constantFrom(1, 4, 8, 16, 32), (text, bytes) => {
        expect(sha256HexPrefix(text, bytes)).toHaveLength(bytes * 2);
        expect(portableSha256HexPrefix(text, bytes)).toBe(sha256HexPrefix(text, bytes));
      }),
    );
  });
});

describe('checked facts', () => {
  it('a fact parseNewFact returned and that was frozen since is taken as it is; any other input is checked again', async () => {
    const { makeFact, parseCheckedFact, parseNewFact } = await import('../src/fact.js');
    const built = makeFact({ subject: 'src/a.ts', relation: 'modified_by', object: 'task:1', tags: ['file_change'], validFrom: 1, sourceTaskId: '1', sourceRole: 'implementer', confidence: 1 });
    const parsed = parseNewFact(built);
    if (E.isLeft(parsed)) throw new Error(parsed.left);
    // Not frozen: it could have changed since, so it is checked (and copied) again.
    const unfrozen = parseCheckedFact(parsed.right);
    expect(E.isRight(unfrozen) && unfrozen.right !== parsed.right).toBe(true);
    Object.freeze(parsed.right);
    const frozen = parseCheckedFact(parsed.right);
    expect(E.isRight(frozen) && frozen.right === parsed.right).toBe(true);
    // A frozen look-alike that parseNewFact never returned is still checked: a wrong id is refused.
    expect(E.isLeft(parseCheckedFact(Object.freeze({ ...parsed.right, id: '0000000000000000' })))).toBe(true);
  });
});
