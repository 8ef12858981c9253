/**
 * A command line as a POSIX shell reads it, as far as `init` needs: its words, and the script a
 * shell is started on (`sh -c SCRIPT`), so that the commands the settings already hold are read
 * by the words they run, never by the text they happen to contain.
 */

/** One shell word, unquoted, and whether the shell would expand something in it (a `$` or a backquote not between single quotes). */
export interface Word {
  readonly text: string;
  readonly expands: boolean;
}

/**
 * The words of a simple command line as a POSIX shell splits them (quotes, backslashes), and
 * what follows the first operator (`;`, `&`, `|`, `<`, `>`, `(`, `)`, or a comment), which is no
 * part of the command: empty when there is none.
 */
export const shellWords = (line: string): { readonly words: ReadonlyArray<Word>; readonly rest: string } => {
  const words: Word[] = [];
  let text = '';
  let expands = false;
  let inWord = false;
  const end = (): void => {
    if (inWord) words.push({ text, expands });
    text = '';
    expands = false;
    inWord = false;
  };
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i]!;
    // A shell splits words at its IFS, space, tab and newline: not at a no-break space, which stays in the word.
    if (/[ \t\n]/u.test(c)) {
      end();
      continue;
    }
    if (/[;&|<>()]/u.test(c) || (c === '#' && !inWord)) {
      end();
      return { words, rest: line.slice(i).trim() };
    }
    inWord = true;
    if (c === "'") {
      const close = line.indexOf("'", i + 1);
      const stop = close === -1 ? line.length : close;
      text += line.slice(i + 1, stop);
      i = stop;
    } else if (c === '"') {
      for (i += 1; i < line.length && line[i] !== '"'; i += 1) {
        if (line[i] === '\\' && i + 1 < line.length && /[$`"\\\n]/u.test(line[i + 1]!)) i += 1;
        else if (line[i] === '$' || line[i] === '`') expands = true;
        text += line[i];
      }
    } else if (c === '\\') {
      i += 1;
      if (i < line.length && line[i] !== '\n') text += line[i];
    } else {
      if (c === '$' || c === '`') expands = true;
      text += c;
    }
  }
  end();
  return { words, rest: '' };
};

/** A shell that runs a script given by `-c`. */
const SHELL = /^(?:\/(?:usr\/)?bin\/)?(?:sh|bash|dash|zsh)$/u;

/** An option of a shell's before its script: short ones in a cluster (`-c`, `-lc`, `-e`) or long ones (`--login`). */
const SHELL_OPTION = /^(?:-[A-Za-z]+|--[a-z-]+)$/u;

/**
 * The script a shell is started on by `words` (`sh -c SCRIPT`, `bash -lc SCRIPT`), the last of
 * them; undefined when they start no shell on a script, or give the script arguments of its own.
 */
export const shellScript = (words: ReadonlyArray<Word>): Word | undefined => {
  if (words.length < 3 || !SHELL.test(words[0]!.text)) return undefined;
  const options = words.slice(1, -1).map((word) => word.text);
  return options.every((option) => SHELL_OPTION.test(option)) &&
    options.some((option) => /^-[A-Za-z]*c[A-Za-z]*$/u.test(option))
    ? words[words.length - 1]
    : undefined;
};
