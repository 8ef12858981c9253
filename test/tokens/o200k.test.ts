/**
 * The o200k counter counts exactly what gpt-tokenizer counts, its long pieces merged through a
 * heap instead of the package's scan of every pair (quadratic in a piece: a run of 100,000
 * `!` took minutes).
 */
import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { countO200kTokens } from '../../src/tokens/o200k.js';

/** gpt-tokenizer's own count, special tokens counted as the text they are (as the counter does). */
const reference = (text: string): number => countTokens(text, { disallowedSpecial: new Set() });

describe('countO200kTokens', () => {
  it('counts any text exactly as gpt-tokenizer does', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), (text) => {
        expect(countO200kTokens(text)).toBe(reference(text));
      }),
      { numRuns: 300 },
    );
  });

  it('counts long pieces (past the heap threshold of 256 bytes) exactly as gpt-tokenizer does', () => {
    const unit = fc.oneof(
      fc.constantFrom('!', '.', '_', ' ', 'a', 'A', 'z', '7', 'é', '日本', '🙂', '-=', 'ab', 'Ab', '{', '\\'),
      fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 3 }),
    );
    fc.assert(
      fc.property(
        fc.array(unit, { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 300, max: 700 }),
        (units, times) => {
          const text = units.map((piece) => piece.repeat(times)).join('');
          expect(countO200kTokens(text)).toBe(reference(text));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('refuses a text that is no string with a TypeError naming it, as estimateTokens does', () => {
    expect(() => countO200kTokens(null as never)).toThrow(
      expect.objectContaining({ name: 'TypeError', message: 'the text is null, not a string' }),
    );
    expect(() => countO200kTokens(42 as never)).toThrow(
      expect.objectContaining({ name: 'TypeError', message: 'the text is a number, not a string' }),
    );
  });

  it('quotes special tokens as text', () => {
    expect(countO200kTokens('<|endoftext|>')).toBe(reference('<|endoftext|>'));
    expect(countO200kTokens('<|endoftext|>')).toBeGreaterThan(1);
  });
});
