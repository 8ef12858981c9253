/**
 * The table headers of a TOML text, found line by line as `init` edits Codex's `config.toml`
 * in place. A line inside a multi-line string (`"""` or `'''`) is text, whatever it looks like:
 * instructions that show a `[mcp_servers.fact-tracker]` line are no such table.
 */

/** Inside a multi-line string, and which one; or outside any. */
type StringState = '"""' | "'''" | undefined;

/**
 * A header line: `[name]` or `[[name]]`, a comment after it (to the line's CR too, kept where the
 * file mixes line endings: `.` stops before it); the name is trimmed apart. No two
 * parts of the pattern match the same spaces: `\s*` around a lazy name went back over a line of
 * spaces for every split of them, seconds for a few thousand in a line a repository may hold.
 */
const TABLE_HEADER = /^\s*\[\[?([^\]]*)\]\]?\s*(?:#[^\n]*)?$/u;

/**
 * The index just past the delimiter that closes the multi-line string `delimiter` in `line` from
 * `from`, -1 when the string goes on past the line. A run of up to five quotes closes it (the
 * string may end in one or two quotes); a backslash in a basic string escapes what follows it.
 */
const closingAt = (line: string, from: number, delimiter: '"""' | "'''"): number => {
  for (let at = from; at < line.length; at += 1) {
    if (delimiter === '"""' && line[at] === '\\') at += 1;
    else if (line.startsWith(delimiter, at)) {
      let end = at + 3;
      while (end < at + 5 && line[end] === delimiter[0]) end += 1;
      return end;
    }
  }
  return -1;
};

/** The index just past the one-line string that opens at `from` in `line` (a basic one takes escapes). */
const endOfString = (line: string, from: number): number => {
  const quote = line[from]!;
  for (let at = from + 1; at < line.length; at += 1) {
    if (quote === '"' && line[at] === '\\') at += 1;
    else if (line[at] === quote) return at + 1;
  }
  return line.length;
};

/** Whether the next line starts inside a multi-line string, given whether `line` did. */
const stateAfter = (line: string, state: StringState): StringState => {
  let at = 0;
  let inside = state;
  while (at < line.length) {
    if (inside !== undefined) {
      const close = closingAt(line, at, inside);
      if (close === -1) return inside;
      at = close;
      inside = undefined;
    } else if (line[at] === '#') return undefined;
    else if (line.startsWith('"""', at) || line.startsWith("'''", at)) {
      inside = line[at] === '"' ? '"""' : "'''";
      at += 3;
    } else if (line[at] === '"' || line[at] === "'") at = endOfString(line, at);
    else at += 1;
  }
  return inside;
};

/**
 * The name of the table each line of a TOML text opens, as written between its brackets;
 * undefined for a line that is no header, a line inside a multi-line string among them. The
 * text is valid TOML (it was parsed first): a string always ends.
 */
export const tableHeaders = (lines: ReadonlyArray<string>): ReadonlyArray<string | undefined> => {
  let state: StringState;
  return lines.map((line) => {
    const header = state === undefined ? TABLE_HEADER.exec(line)?.[1]?.trim() : undefined;
    state = stateAfter(line, state);
    return header;
  });
};
