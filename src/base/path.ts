/**
 * One spelling for one file. Agents name a file as they saw it written: `./src/a.ts`,
 * `src\a.ts`, `src/b/../a.ts`, in backticks, with the line they mean (`src/a.ts:12`,
 * `src/a.ts#L12`). Read as given, each spelling would be a subject of its own, so a later task's
 * change would not supersede an earlier one and a section would list one file twice. Only what
 * names the same file in every checkout is folded: letters are compared as Unicode NFC (a
 * decomposed `é` is the composed one; full-width and look-alike letters stay other files), and an
 * absolute path stays absolute, since no root is known here to make it relative.
 */

/** Quotes a model puts around a path it writes in prose: a pair of them around the whole text. */
const QUOTES = ['`', '"', "'"] as const;

/** The text without the pairs of quotes around all of it (`` `'a'` `` is `a`), if it has any. */
const unquoted = (text: string): string => {
  let inner = text;
  for (;;) {
    const quote = QUOTES.find((mark) => inner.length > 2 && inner.startsWith(mark) && inner.endsWith(mark));
    if (quote === undefined) return inner;
    inner = inner.slice(1, -1).trim();
  }
};

/**
 * A location after a file (`:12`, `:12:5`, `:L2-L9` as evidence pointers write it, `#L12`,
 * `#L12-L20` or `#L12C5` as GitHub's anchors do), at the end of the text. Tried on the last
 * characters only, so nothing backtracks over a long path.
 */
const LOCATION = /(?::L?\d{1,9}(?:-L?\d{1,9})?(?::\d{1,9})?|#L\d{1,9}(?:C\d{1,9})?(?:-L\d{1,9}(?:C\d{1,9})?)?)$/u;
const LOCATION_TAIL = 40;

/** The text without a location at its end; a task's subject (`task:12`) or a bare location is no file and stays. */
const withoutLocation = (text: string): string => {
  const tail = text.slice(-LOCATION_TAIL);
  const found = LOCATION.exec(tail);
  if (found === null) return text;
  const path = text.slice(0, text.length - found[0].length);
  return path === '' || path.toLowerCase() === 'task' ? text : path;
};

/** A URL (`https://host//a`) is no path of the project: its slashes are kept as written. */
const URL_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//iu;

/**
 * The path with `/` between its segments, no empty or `.` segment and each `..` resolved
 * against the segment before it, as git names files (`src/b/../a.ts` is `src/a.ts`); a `..`
 * that climbs above where the path starts is kept, and `/..` is `/`. No trailing slash: a folder
 * is one name with or without it.
 */
const resolvedSegments = (path: string): string => {
  const absolute = path.startsWith('/');
  const kept: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment !== '..') kept.push(segment);
    else if (kept.length > 0 && kept[kept.length - 1] !== '..') kept.pop();
    else if (!absolute) kept.push(segment);
  }
  const joined = kept.join('/');
  if (absolute) return `/${joined}`;
  return joined === '' ? '.' : joined;
};

/** `path` (unquoted, NFC) with `/` for `\\` and its segments resolved; a URL as it is. */
const resolvedPath = (path: string): string =>
  URL_SCHEME.test(path) ? path : resolvedSegments(path.replaceAll('\\', '/'));

/** One pass of `normalizePath`: quotes, NFC, separators and segments, then a location and the quotes before it. */
const respelled = (text: string): string => {
  const path = unquoted(text).normalize('NFC');
  // Quotes around nothing are what was written, not an empty name.
  if (path === '') return text;
  const resolved = resolvedPath(path);
  const located = withoutLocation(resolved);
  return located === resolved ? resolved : resolvedPath(unquoted(located));
};

/**
 * Passes past which a spelling is taken as it stands. Each pass but the last shortens the text,
 * and one exposes what the next drops only when quotes, segments and locations nest (`./\`a\``
 * resolves to a quoted name), which no agent writes deeper than this.
 */
const MAX_PASSES = 8;

/**
 * A whitespace-collapsed path in the one spelling every other spelling of its file gives: the
 * quotes around it and a location after it dropped, Unicode NFC, `\\` read as `/`, and its `.`,
 * `..` and empty segments resolved (see `resolvedSegments`). A URL keeps its slashes. The answer
 * is its own spelling (normalized again, it is the same), so a stored subject names its pair:
 * passes are made until one changes nothing (at most `MAX_PASSES`, each linear in the text).
 */
export const normalizePath = (text: string): string => {
  let current = text;
  for (let pass = 0; pass < MAX_PASSES; pass += 1) {
    const next = respelled(current);
    if (next === current) return current;
    current = next;
  }
  return current;
};
