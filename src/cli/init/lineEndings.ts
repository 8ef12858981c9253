/**
 * The form of a settings file's text that no merge reads and every rewrite keeps: a byte-order
 * mark at its start, and CRLF line endings. Editors on Windows write both, and a user there
 * expects a file `init` merges into to keep them (git would show every line changed otherwise).
 */
import * as E from 'fp-ts/lib/Either.js';

const BOM = '\uFEFF';

/** True when `text` has line breaks and every one is CRLF. */
const isCrlfText = (text: string): boolean => text.includes('\r\n') && !/(?:^|[^\r])\n/u.test(text);

/**
 * `edit` given a file's text with LF line endings and no byte-order mark, its result given back
 * the file's own: CRLF on every line when every line of the file ended in CRLF (what is added
 * ends its lines as the file does; a file that mixes them gets LF on what is written), and the
 * mark when the file started with one. A result that changes nothing is the file's text itself,
 * byte for byte; a new file (undefined) is edited as it is.
 */
export const keepingLineEndings =
  <L>(edit: (current: string | undefined) => E.Either<L, string>) =>
  (current: string | undefined): E.Either<L, string> => {
    if (current === undefined) return edit(undefined);
    const mark = current.startsWith(BOM) ? BOM : '';
    const body = current.slice(mark.length);
    const crlf = isCrlfText(body);
    const lf = crlf ? body.replace(/\r\n/gu, '\n') : body;
    return E.map((edited: string) =>
      edited === lf ? current : `${mark}${crlf ? edited.replace(/\n/gu, '\r\n') : edited}`,
    )(edit(lf));
  };
