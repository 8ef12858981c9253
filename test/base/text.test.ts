import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collapseWhitespace, isBlank, utf8Length } from '../../src/base/text.js';

const INVISIBLE_OR_BREAKING = /[\p{Cf}\p{Default_Ignorable_Code_Point}\p{Cc}\p{Zl}\p{Zp}\n\r\t]/u;

describe('collapseWhitespace', () => {
  it.each([
    ['zero-width space', 'a\u200Bb', 'ab'],
    ['left-to-right and right-to-left marks', 'x\u200E\u200Fy', 'xy'],
    ['Arabic letter mark', 'x\u061Cy', 'xy'],
    ['tag characters spelling text', 'ok\u{E0041}\u{E0042}', 'ok'],
    ['soft hyphen and word joiner', 'co\u00ADop\u2060', 'coop'],
    ['Hangul fillers', 'a\u3164b\u115F\u1160c\uFFA0', 'abc'],
    ['variation selectors and the combining grapheme joiner', 'o\uFE0Fk\u034F\u{E0100}', 'ok'],
    ['a bidi override, as a space', 'a\u202Eb', 'a b'],
    ['newlines and tabs', ' a\n\tb\r\n', 'a b'],
  ])('removes or collapses %s', (_name, input, expected) => {
    expect(collapseWhitespace(input)).toBe(expected);
  });

  it('keeps emoji and other astral text', () => {
    expect(collapseWhitespace('ship it \u{1F680}')).toBe('ship it \u{1F680}');
  });

  it('leaves no format, control or line-breaking character in any text, and is idempotent', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const collapsed = collapseWhitespace(text);
        expect(INVISIBLE_OR_BREAKING.test(collapsed)).toBe(false);
        expect(collapseWhitespace(collapsed)).toBe(collapsed);
      }),
    );
  });

  it('leaves no format, control or line-breaking character, whichever code point stands between two letters', () => {
    // Every code point, not a sample: the fast path's list of code units must miss none the patterns match.
    const kept: string[] = [];
    for (let code = 0; code <= 0x10ffff; code += 1) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      if (INVISIBLE_OR_BREAKING.test(collapseWhitespace(`a${String.fromCodePoint(code)}b`)))
        kept.push(code.toString(16));
    }
    expect(kept).toEqual([]);
  });

  it('collapses a run of whitespace millions of characters long in a text outside Latin-1', () => {
    // One match over such a run, 8.5 million characters, overflowed the engine's regexp stack.
    const run = ' '.repeat(8_500_000);
    expect(collapseWhitespace(`a${run}設`)).toBe('a 設');
    expect(collapseWhitespace(`${run}設\n\t${run}b\u3000${run}`)).toBe('設 b');
    expect(isBlank(`${run}設`)).toBe(false);
  });

  it('collapses a text past a million characters, a piece at a time, as it collapses the text whole', () => {
    const padding = '\n'.repeat(1_000_001);
    const part = fc.oneof(
      fc.constantFrom('a', '設', '\u200B', '\u202E', '\u2028', '\r\n', '\u3000'),
      fc
        .constantFrom(1, 4_095, 4_096, 4_097, 8_193)
        .chain((length) => fc.constantFrom(' ', '\t\u0085').map((unit) => unit.repeat(length))),
    );
    fc.assert(
      fc.property(fc.array(part, { maxLength: 8 }), (parts) => {
        const text = parts.join('');
        expect(collapseWhitespace(`${text}${padding}`)).toBe(collapseWhitespace(text));
      }),
      { numRuns: 40 },
    );
  });
});

describe('isBlank', () => {
  it.each([
    ['empty', ''],
    ['spaces and a tab', ' \t '],
    ['a zero-width space', '\u200B'],
    ['zero-width non-joiner and joiner', '\u200C\u200D'],
    ['a word joiner and a byte-order mark', '\u2060\uFEFF'],
    ['a soft hyphen and direction marks among spaces', ' \u00AD\u200E\u200F '],
    ['tag characters', '\u{E0041}\u{E0042}'],
    ['a bidi override and a control character', '\u202E\u0007'],
    ['a Hangul filler', '\u3164'],
    ['halfwidth and leading Hangul fillers among spaces', ' \uFFA0 \u115F '],
    ['a variation selector', '\uFE0F'],
  ])('is true for %s', (_name, text) => {
    expect(isBlank(text)).toBe(true);
  });

  it.each([
    ['a letter', 'a'],
    ['a letter after a zero-width space', '\u200Ba'],
    ['an emoji', '\u{1F680}'],
    ['a no-break space before a digit', '\u00A07'],
  ])('is false for %s', (_name, text) => {
    expect(isBlank(text)).toBe(false);
  });

  it('is true exactly for the text collapseWhitespace leaves nothing of', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        expect(isBlank(text)).toBe(collapseWhitespace(text) === '');
      }),
    );
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('\u200B', '\u2060', '\uFEFF', '\u{E0020}', '\u3164', '\uFE0F', ' ', '\n', 'x'), {
          maxLength: 10,
        }),
        (chars) => {
          const text = chars.join('');
          expect(isBlank(text)).toBe(collapseWhitespace(text) === '');
        },
      ),
    );
  });
});

describe('utf8Length', () => {
  it('counts the bytes UTF-8 takes, a lone surrogate as the U+FFFD that replaces it', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary' }),
        fc.string({ unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code)) }),
        (text, surrogates) => {
          for (const given of [text, surrogates + text, text + surrogates])
            expect(utf8Length(given)).toBe(new TextEncoder().encode(given).length);
        },
      ),
    );
    expect([utf8Length(''), utf8Length('a\u00e9\u20ac\u{1F600}'), utf8Length('\uD800\uDC00\uDC00')]).toEqual([
      0, 10, 7,
    ]);
  });
});
