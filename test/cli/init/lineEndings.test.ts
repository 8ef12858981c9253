/** `keepingLineEndings`: a merge reads LF text without a byte-order mark, and the file keeps its own. */
import * as E from 'fp-ts/lib/Either.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keepingLineEndings } from '../../../src/cli/init/lineEndings.js';

/** A merge that appends a line, as `init` adds its entries. */
const appendLine = (current: string | undefined): E.Either<never, string> => E.right(`${current ?? ''}added\n`);

/** Lines of text, with the breaks and the mark the tests vary. */
const fileText = fc
  .tuple(
    fc.boolean(),
    fc.array(fc.tuple(fc.string({ unit: fc.constantFrom('a', '{', ' ', '\r') }), fc.constantFrom('\n', '\r\n'))),
  )
  .map(([mark, lines]) => `${mark ? '\ufeff' : ''}${lines.map(([line, end]) => line + end).join('')}`);

describe('keepingLineEndings', () => {
  it('gives the merge LF text without the mark, and the file its CRLF line endings and its mark back', () => {
    const seen: Array<string | undefined> = [];
    const merged = keepingLineEndings((current: string | undefined) => {
      seen.push(current);
      return appendLine(current);
    })('\ufeff{\r\n}\r\n');
    expect([seen, merged]).toEqual([['{\n}\n'], E.right('\ufeff{\r\n}\r\nadded\r\n')]);
    // A file that mixes them gets LF on what is written, and keeps its mark; a new one is as the merge writes it.
    expect(keepingLineEndings(appendLine)('\ufeff{\r\n}\n')).toEqual(E.right('\ufeff{\r\n}\nadded\n'));
    expect(keepingLineEndings(appendLine)(undefined)).toEqual(E.right('added\n'));
    expect(keepingLineEndings(() => E.left('refused'))('{}\r\n')).toEqual(E.left('refused'));
  });

  it('a merge that changes nothing gives back the file text byte for byte', () => {
    fc.assert(
      fc.property(fileText, (text) => {
        expect(keepingLineEndings((current: string | undefined) => E.right(current ?? ''))(text)).toEqual(
          E.right(text),
        );
      }),
    );
  });

  it('what a merge adds to a file ends its lines as every line of the file did, after the mark it had', () => {
    fc.assert(
      fc.property(fileText, (text) => {
        const merged = keepingLineEndings(appendLine)(text);
        const written = E.isRight(merged) ? merged.right : '';
        const body = text.replace(/^\ufeff/u, '');
        // Every line break of the file is CRLF: there is one, and no LF without its CR.
        const crlf = body.includes('\r\n') && body.split('\r\n').every((part) => !part.includes('\n'));
        expect(written).toBe(`${text}added${crlf ? '\r\n' : '\n'}`);
      }),
    );
  });
});
