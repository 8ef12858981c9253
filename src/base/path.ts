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

/** The text without the one pair of quotes around all of it, if it has one. */
const unquoted = (text: string): string => {
  for (const quote of QUOTES)
    if (text.length > 2 && text.startsWith(quote) && text.endsWith(quote)) return text.slice(1, -1).trim();
  return text;
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

/**
 * A whitespace-collapsed path in the one spelling every other spelling of its file gives: the
 * quotes around it and a location after it dropped, Unicode NFC, `\` read as `/`, and its `.`,
 * `..` and empty segments resolved (see `resolvedSegments`). A URL keeps its slashes.
 */
export const normalizePath = (text: string): string => {
  const path = unquoted(withoutLocation(unquoted(text))).normalize('NFC');
  // Quotes around nothing are what was written, not an empty name.
  if (path === '') return text;
  return URL_SCHEME.test(path) ? path : resolvedSegments(path.replaceAll('\\', '/'));
};
