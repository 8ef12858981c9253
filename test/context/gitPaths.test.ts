/** Git's paths as bytes (issue 28, item 7): any name survives the trip through text, and valid names read as they are. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
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

  it('shows a byte that is not UTF-8 as \\xFF, and C-quotes a stdin path only where a line would break it', () => {
    const path = decodeGitOutput(Buffer.from([0x73, 0xff, 0x2e, 0xc3, 0xa9]));
    expect(displayGitPath(path)).toBe('s\\xFF.é');
    expect(stdinPathLine(path).equals(Buffer.from([0x73, 0xff, 0x2e, 0xc3, 0xa9, 0x0a]))).toBe(true);
    expect(stdinPathLine('a\nb"c').toString('latin1')).toBe('"a\\012b\\"c"\n');
    expect(stdinPathLine('"quoted').toString('latin1')).toBe('"\\"quoted"\n');
  });
});
