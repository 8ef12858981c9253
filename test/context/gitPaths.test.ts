/**
 * Git's paths as bytes (issue 28, item 7): any name survives the trip through text, valid names
 * read as they are, and every name is shown on one line, apart from every other.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collapseWhitespace } from '../../src/base/text.js';
import { decodeGitOutput, displayGitPath, encodeGitPath, stdinPathLine } from '../../src/context/node/gitPaths.js';

describe('git paths as bytes', () => {
  it('decoding any bytes and encoding them again gives the same bytes, and valid UTF-8 decodes as UTF-8', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.string({ unit: 'grapheme', maxLength: 20 }), (bytes, text) => {
        const buffer = Buffer.from(bytes);
        expect(encodeGitPath(decodeGitOutput(buffer)).equals(buffer)).toBe(true);
        expect(decodeGitOutput(Buffer.from(text, 'utf8'))).toBe(text);
      }),
    );
  });

  it('shows every path on one line, unchanged by whitespace collapsing, and apart from every other path', () => {
    // The escapes read back: a path shown once stands for one path only.
    const undisplay = (shown: string): string =>
      shown.replace(/\\(?:x([0-9A-F]{2})|u\{([0-9A-F]+)\}|(\\))/gu, (_, byte?: string, code?: string) =>
        byte !== undefined
          ? String.fromCharCode(0xdc00 + parseInt(byte, 16))
          : code !== undefined
            ? String.fromCodePoint(parseInt(code, 16))
            : '\\',
      );
    const tricky = fc.constantFrom(
      ' ',
      '\n',
      '\t',
      '\r',
      '\\',
      'a',
      'u',
      '{',
      'x',
      '\u00a0',
      '\u202e',
      '\ufeff',
      '\u{e0041}',
      '😀',
    );
    const names = fc.oneof(
      fc.uint8Array({ maxLength: 24 }).map((bytes) => decodeGitOutput(Buffer.from(bytes))),
      fc.array(tricky, { maxLength: 12 }).map((parts) => parts.join('')),
    );
    fc.assert(
      fc.property(names, (name) => {
        const shown = displayGitPath(name);
        expect(collapseWhitespace(shown)).toBe(shown);
        expect(undisplay(shown)).toBe(name);
      }),
    );
    expect(
      ['src/a\nb.ts', 'src/a b.ts', 'src/a\\u{A}b.ts', 'src/a  b.ts ', '\u202egnp.exe'].map(displayGitPath),
    ).toEqual(['src/a\\u{A}b.ts', 'src/a b.ts', 'src/a\\\\u{A}b.ts', 'src/a \\u{20}b.ts\\u{20}', '\\u{202E}gnp.exe']);
  });

  it('shows a byte that is not UTF-8 as \\xFF, and C-quotes a stdin path only where a line would break it', () => {
    const path = decodeGitOutput(Buffer.from([0x73, 0xff, 0x2e, 0xc3, 0xa9]));
    expect(displayGitPath(path)).toBe('s\\xFF.é');
    expect(stdinPathLine(path).equals(Buffer.from([0x73, 0xff, 0x2e, 0xc3, 0xa9, 0x0a]))).toBe(true);
    expect(stdinPathLine('a\nb"c').toString('latin1')).toBe('"a\\012b\\"c"\n');
    expect(stdinPathLine('"quoted').toString('latin1')).toBe('"\\"quoted"\n');
  });
});
