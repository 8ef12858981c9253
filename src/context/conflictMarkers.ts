/**
 * Git's conflict markers in a context file: a `git pull` or merge that could not join two
 * versions leaves both in the file, and each side is a whole file again once the markers are
 * read, so neither is discarded.
 */
import { checkedText } from './arguments.js';

/** The two versions of a file with conflict markers, ours (HEAD) and theirs, and their common ancestor when the markers hold it. */
export interface ConflictSides {
  readonly ours: string;
  readonly theirs: string;
  /** The common ancestor, when every conflict shows its base (git's `diff3` or `zdiff3` style). */
  readonly base?: string;
  /** The line of the file on which each line of a side stands (1-based), to place what is wrong in a side where the user opens it. */
  readonly fileLines: { readonly ours: ReadonlyArray<number>; readonly theirs: ReadonlyArray<number> };
}

/** A side of a conflict, as the command's messages name it. */
export type ConflictSide = 'ours' | 'theirs';

/** A problem found in one side of a conflict: its places (`contexts[2]`) are counted in that side, not in the file. */
export const inSide = (side: ConflictSide, problem: string): string => `in ${side}, ${problem}`;

const OPEN = /^<{7}(?: |$)/u;
const BASE = /^\|{7}(?: |$)/u;
const SEPARATOR = /^={7}$/u;
const CLOSE = /^>{7}(?: |$)/u;

/**
 * The two sides of `text` when it holds git's conflict markers (`<<<<<<<`, an optional
 * `|||||||` base, `=======`, `>>>>>>>`, each at the start of a line), and the base when every
 * conflict shows one; undefined when it holds none, or markers that do not nest as git writes them.
 */
export const splitConflictMarkers = (text: string): ConflictSides | undefined => {
  const lines = checkedText(text).split(/(?<=\n)/u);
  let ours = '';
  let theirs = '';
  const fileLines = { ours: [] as number[], theirs: [] as number[] };
  let base = '';
  let state: 'both' | 'ours' | 'base' | 'theirs' = 'both';
  let conflicts = 0;
  let bases = 0;
  for (const [index, line] of lines.entries()) {
    const bare = line.replace(/\r?\n$/u, '');
    if (state === 'both' && OPEN.test(bare)) {
      state = 'ours';
      conflicts += 1;
    } else if (state === 'ours' && BASE.test(bare)) {
      state = 'base';
      bases += 1;
    } else if ((state === 'ours' || state === 'base') && SEPARATOR.test(bare)) state = 'theirs';
    else if (state === 'theirs' && CLOSE.test(bare)) state = 'both';
    else if (state !== 'both' && (OPEN.test(bare) || CLOSE.test(bare))) return undefined;
    else {
      if (state === 'both' || state === 'ours') {
        ours += line;
        fileLines.ours.push(index + 1);
      }
      if (state === 'both' || state === 'theirs') {
        theirs += line;
        fileLines.theirs.push(index + 1);
      }
      if (state === 'both' || state === 'base') base += line;
    }
  }
  if (conflicts === 0 || state !== 'both') return undefined;
  return bases === conflicts ? { ours, theirs, base, fileLines } : { ours, theirs, fileLines };
};

/** True when a line of `text` starts with a conflict marker. */
export const hasConflictMarkers = (text: string): boolean =>
  /^<{7}(?: |$)/mu.test(checkedText(text)) && /^>{7}(?: |$)/mu.test(text);
