/**
 * Paths as git prints them: bytes, not necessarily UTF-8 (a file named `bad\xffname.js` is a
 * valid name on Linux). Read as UTF-8 they would come back mangled (U+FFFD), name no file, and
 * count as deleted on every read. Here a path is a string in which each byte that is not part
 * of valid UTF-8 stands as a lone surrogate U+DC80 to U+DCFF (as Python's `surrogateescape`
 * does): valid names read exactly as before, no valid name can hold a lone surrogate, and the
 * bytes come back unchanged for the file system and for git.
 */

const ESCAPE_BASE = 0xdc00;

/** Decodes UTF-8 and throws at the first byte that is not (a global, so no `node:` import is needed). */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The length of the valid UTF-8 sequence at `i`, or 0 when the byte there does not start one. */
const sequenceLength = (bytes: Uint8Array, i: number): number => {
  const first = bytes[i]!;
  const continuation = (at: number, low = 0x80, high = 0xbf): boolean =>
    at < bytes.length && bytes[at]! >= low && bytes[at]! <= high;
  if (first < 0x80) return 1;
  if (first >= 0xc2 && first <= 0xdf) return continuation(i + 1) ? 2 : 0;
  if (first >= 0xe0 && first <= 0xef) {
    // No overlong forms (E0 A0..), no surrogates (ED ..9F).
    const [low, high] = first === 0xe0 ? [0xa0, 0xbf] : first === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
    return continuation(i + 1, low, high) && continuation(i + 2) ? 3 : 0;
  }
  if (first >= 0xf0 && first <= 0xf4) {
    const [low, high] = first === 0xf0 ? [0x90, 0xbf] : first === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
    return continuation(i + 1, low, high) && continuation(i + 2) && continuation(i + 3) ? 4 : 0;
  }
  return 0;
};

/** Git's output as text: UTF-8 where it is valid, each other byte as a lone surrogate. */
export const decodeGitOutput = (bytes: Buffer): string => {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch (error) {
    // Not valid UTF-8 somewhere (the fatal decoder's TypeError): each stray byte is kept, below.
    if (!(error instanceof TypeError)) throw error;
  }
  let text = '';
  let run = 0;
  let i = 0;
  while (i < bytes.length) {
    const length = sequenceLength(bytes, i);
    if (length > 0) i += length;
    else {
      text += bytes.toString('utf8', run, i) + String.fromCharCode(ESCAPE_BASE + bytes[i]!);
      i += 1;
      run = i;
    }
  }
  return text + bytes.toString('utf8', run, bytes.length);
};

const ESCAPED = /[\uDC80-\uDCFF]/u;
const ESCAPED_ALL = /[\uDC80-\uDCFF]/gu;

/** The bytes of a path read by `decodeGitOutput`. */
export const encodeGitPath = (path: string): Buffer => {
  if (!ESCAPED.test(path)) return Buffer.from(path, 'utf8');
  const parts: Buffer[] = [];
  let run = 0;
  for (const match of path.matchAll(ESCAPED_ALL)) {
    parts.push(Buffer.from(path.slice(run, match.index), 'utf8'), Buffer.of(match[0].charCodeAt(0) - ESCAPE_BASE));
    run = match.index + 1;
  }
  parts.push(Buffer.from(path.slice(run), 'utf8'));
  return Buffer.concat(parts);
};

/**
 * What a path may hold that would not show as itself on one line: a byte that is not UTF-8, a
 * backslash (which starts the escapes), a control, format, other invisible or separator character, and any
 * space (`displayGitPath` keeps a space that stands alone between two other characters).
 */
const UNSHOWN = /[\uDC80-\uDCFF\\\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{Zl}\p{Zp}\p{Zs}]/gu;

/**
 * A path read by `decodeGitOutput` as people read it, on one line and told apart from every
 * other: each byte that is not UTF-8 as `\xFF`, a backslash as `\\`, and each character that
 * would break the line, vanish or merge with its neighbours as its code point (`\u{A}` for a
 * line break, `\u{20}` for a space at either end or after another). Output that collapses
 * whitespace would otherwise show `src/a\nb.ts` and `src/a b.ts` alike.
 */
export const displayGitPath = (path: string): string =>
  path.replace(UNSHOWN, (character, at: number) => {
    if (ESCAPED.test(character)) return `\\x${(character.charCodeAt(0) - ESCAPE_BASE).toString(16).toUpperCase()}`;
    if (character === '\\') return '\\\\';
    if (character === ' ' && at > 0 && at < path.length - 1 && path[at - 1] !== ' ') return ' ';
    return `\\u{${character.codePointAt(0)!.toString(16).toUpperCase()}}`;
  });

/** The absolute path of the repository-relative `path` under `root`, as bytes for the file system. */
export const pathUnder = (root: string, path: string): Buffer =>
  Buffer.concat([Buffer.from(root.endsWith('/') ? root : `${root}/`, 'utf8'), encodeGitPath(path)]);

/**
 * A path as one line of `git hash-object --stdin-paths`, which unquotes a line that starts
 * with `"` as C does: quoted when it holds a line break or a carriage return, or starts with a
 * quote (other bytes, UTF-8 or not, pass as they are).
 */
export const stdinPathLine = (path: string): Buffer => {
  const bytes = encodeGitPath(path);
  if (!bytes.includes(0x0a) && !bytes.includes(0x0d) && bytes[0] !== 0x22)
    return Buffer.concat([bytes, Buffer.of(0x0a)]);
  let quoted = '"';
  for (const byte of bytes) {
    if (byte === 0x22 || byte === 0x5c) quoted += `\\${String.fromCharCode(byte)}`;
    else if (byte < 0x20 || byte >= 0x7f) quoted += `\\${byte.toString(8).padStart(3, '0')}`;
    else quoted += String.fromCharCode(byte);
  }
  return Buffer.from(`${quoted}"\n`, 'latin1');
};
