/**
 * A command line as a POSIX shell reads it, as far as `init` needs: the simple commands it runs,
 * each with its words, so that the commands the settings already hold are read by the words they
 * run, never by the text they happen to contain. Lines (a newline ends a command as `;` does),
 * comments, redirections, the grammar's reserved words (`if`, `then`, `!`, `{`, ...) and
 * operators split it; a command substitution (`$(...)`, backquotes, `<(...)`) stays inside its
 * word, its script kept for a reader to read as one.
 */

/** One shell word, unquoted, and whether the shell would expand something in it (a `$` or a backquote not between single quotes). */
export interface Word {
  readonly text: string;
  readonly expands: boolean;
  /** The scripts of the command substitutions in it (`$(...)`, backquotes, `<(...)`), which the shell runs too. */
  readonly scripts?: ReadonlyArray<string>;
  /** True when every character of it was written between quotes or escaped (`'fact-tracker'`): text, as a word given to a program. */
  readonly quoted?: true;
}

/** One simple command of a line. */
export interface Command {
  /** Its words, the variables set for it first; no redirection is one of them. */
  readonly words: ReadonlyArray<Word>;
  /** Its redirections as written (`2>>/tmp/hook.log`), in order. */
  readonly redirections: ReadonlyArray<string>;
  /** The operator that ends it (`;`, `&&`, `||`, `|`, `&`, a newline as `;`), or '' at the end of the line. */
  readonly end: string;
}

type Token =
  | { readonly kind: 'word'; readonly word: Word; readonly plain: boolean }
  | { readonly kind: 'operator'; readonly text: string }
  | { readonly kind: 'redirection'; readonly text: string };

const SEPARATORS = ['&&', '||', ';;', ';&', '|&', ';', '|', '&', '(', ')', '\n'] as const;
const REDIRECTIONS = ['&>>', '&>', '<<<', '<<-', '<<', '<>', '<&', '>>', '>&', '>|', '<', '>'] as const;

/** The index of the `)` that closes the `(` before `from`, past quotes and nested parentheses; the line's length when none does. */
const closing = (line: string, from: number): number => {
  let depth = 1;
  for (let i = from; i < line.length; i += 1) {
    const c = line[i]!;
    if (c === '\\') i += 1;
    else if (c === "'") {
      const close = line.indexOf("'", i + 1);
      i = close === -1 ? line.length : close;
    } else if (c === '"') {
      for (i += 1; i < line.length && line[i] !== '"'; i += 1) if (line[i] === '\\') i += 1;
    } else if (c === '(') depth += 1;
    else if (c === ')' && (depth -= 1) === 0) return i;
  }
  return line.length;
};

/** The index of the backquote that closes the one before `from`; the line's length when none does. */
const closingBackquote = (line: string, from: number): number => {
  for (let i = from; i < line.length; i += 1) {
    if (line[i] === '\\') i += 1;
    else if (line[i] === '`') return i;
  }
  return line.length;
};

/** A word being read: its text, whether it expands, its substitutions' scripts, whether it was written with no quote or escape. */
interface Reading {
  text: string;
  expands: boolean;
  scripts: string[];
  plain: boolean;
  /** True once a character of it was written outside quotes. */
  bare?: true;
}

/** Reads a `$`-form at `i` into `word` (a substitution, arithmetic, `${...}`, `$'...'`): the index of its last character. */
const readDollar = (line: string, i: number, word: Reading, quoted: boolean): number => {
  if (line[i + 1] === "'" && !quoted) {
    // ANSI-C quoting: a literal, its escapes taken as the characters they stand for as far as init reads them.
    let at = i + 2;
    for (; at < line.length && line[at] !== "'"; at += 1) {
      if (line[at] === '\\') at += 1;
      if (at < line.length) word.text += line[at];
    }
    return at;
  }
  word.expands = true;
  if (line.startsWith('$((', i)) {
    const end = closing(line, i + 2);
    word.text += line.slice(i, end + 1);
    return end;
  }
  if (line[i + 1] === '(') {
    const end = closing(line, i + 2);
    word.scripts.push(line.slice(i + 2, end));
    word.text += line.slice(i, end + 1);
    return end;
  }
  if (line[i + 1] === '{') {
    const end = line.indexOf('}', i + 2) === -1 ? line.length : line.indexOf('}', i + 2);
    word.text += line.slice(i, end + 1);
    return end;
  }
  word.text += '$';
  return i;
};

/** Reads a double-quoted part starting after its `"` at `from`: the index of its closing quote. */
const readDoubleQuoted = (line: string, from: number, word: Reading): number => {
  let i = from;
  for (; i < line.length && line[i] !== '"'; i += 1) {
    const c = line[i]!;
    if (c === '\\' && i + 1 < line.length && /[$`"\\\n]/u.test(line[i + 1]!)) {
      i += 1;
      if (line[i] !== '\n') word.text += line[i];
    } else if (c === '$') i = readDollar(line, i, word, true);
    else if (c === '`') {
      const end = closingBackquote(line, i + 1);
      word.expands = true;
      word.scripts.push(line.slice(i + 1, end));
      word.text += line.slice(i, end + 1);
      i = end;
    } else word.text += c;
  }
  return i;
};

/** The tokens of a line: words, separators, redirections; comments and line continuations left out. */
const tokenize = (line: string): ReadonlyArray<Token> => {
  const tokens: Token[] = [];
  let word: Reading | undefined;
  const end = (): void => {
    if (word !== undefined) {
      const { text, expands, scripts, plain, bare } = word;
      const quoted = !plain && bare !== true ? { quoted: true as const } : {};
      tokens.push({
        kind: 'word',
        word: { text, expands, ...(scripts.length === 0 ? {} : { scripts }), ...quoted },
        plain,
      });
    }
    word = undefined;
  };
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i]!;
    // A shell splits words at its IFS, space, tab and newline: not at a no-break space, which stays in the word.
    // A carriage return (a line ended as on Windows) is taken for a blank too: no one means it as part of a word.
    if (c === ' ' || c === '\t' || c === '\r') {
      end();
      continue;
    }
    if (c === '#' && word === undefined) {
      const newline = line.indexOf('\n', i);
      i = (newline === -1 ? line.length : newline) - 1;
      continue;
    }
    if ((c === '<' || c === '>') && line[i + 1] === '(') {
      // A process substitution: a word, whose script the shell runs.
      word ??= { text: '', expands: false, scripts: [], plain: true };
      const close = closing(line, i + 2);
      word.expands = true;
      word.scripts.push(line.slice(i + 2, close));
      word.text += line.slice(i, close + 1);
      i = close;
      continue;
    }
    const redirection = REDIRECTIONS.find((operator) => line.startsWith(operator, i));
    if (redirection !== undefined) {
      // A file descriptor's number written against it (`2>`) is part of it, not a word.
      const descriptor = word !== undefined && word.plain && /^\d+$/u.test(word.text) ? word.text : '';
      if (descriptor !== '') word = undefined;
      end();
      tokens.push({ kind: 'redirection', text: descriptor + redirection });
      i += redirection.length - 1;
      continue;
    }
    const separator = SEPARATORS.find((operator) => line.startsWith(operator, i));
    if (separator !== undefined) {
      end();
      tokens.push({ kind: 'operator', text: separator === '\n' ? ';' : separator });
      i += separator.length - 1;
      continue;
    }
    word ??= { text: '', expands: false, scripts: [], plain: true };
    if (c === "'") {
      const close = line.indexOf("'", i + 1);
      const stop = close === -1 ? line.length : close;
      word.text += line.slice(i + 1, stop);
      word.plain = false;
      i = stop;
    } else if (c === '"') {
      word.plain = false;
      i = readDoubleQuoted(line, i + 1, word);
    } else if (c === '\\') {
      i += 1;
      if (line[i] === '\n') {
        // A line continuation: no character at all, and no word when none was begun.
        if (word.text === '' && word.plain && word.scripts.length === 0) word = undefined;
        continue;
      }
      word.plain = false;
      if (i < line.length) word.text += line[i];
    } else if (c === '$') {
      word.plain = false;
      if (line[i + 1] !== "'") word.bare = true;
      i = readDollar(line, i, word, false);
    } else if (c === '`') {
      const close = closingBackquote(line, i + 1);
      word.plain = false;
      word.bare = true;
      word.expands = true;
      word.scripts.push(line.slice(i + 1, close));
      word.text += line.slice(i, close + 1);
      i = close;
    } else {
      word.text += c;
      word.bare = true;
    }
  }
  end();
  return tokens;
};

/** Words of the shell's grammar that come where a command's first word would (`then fact-tracker hook`). */
const RESERVED: ReadonlySet<string> = new Set([
  '!',
  '{',
  '}',
  'if',
  'then',
  'elif',
  'else',
  'fi',
  'while',
  'until',
  'do',
  'done',
  'esac',
]);

/**
 * The simple commands of a command line, in order: split at its operators, newlines and the
 * grammar's reserved words, a comment left out, a redirection and its target taken out of the
 * command's words; a `for` or `case` clause's head is no command.
 */
export const shellCommands = (line: string): ReadonlyArray<Command> => {
  const commands: Command[] = [];
  let words: Word[] = [];
  let redirections: string[] = [];
  // A `for NAME in ...` head runs nothing up to its separator; a `case` pattern runs nothing up to its `)`.
  let skip: 'none' | 'head' | 'caseHead' | 'pattern' = 'none';
  const push = (end: string): void => {
    if (words.length > 0 || redirections.length > 0) commands.push({ words, redirections, end });
    words = [];
    redirections = [];
  };
  const tokens = tokenize(line);
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i]!;
    if (token.kind === 'redirection') {
      const target = tokens[i + 1];
      if (target?.kind === 'word') i += 1;
      if (skip === 'none') redirections.push(token.text + (target?.kind === 'word' ? target.word.text : ''));
      continue;
    }
    if (token.kind === 'operator') {
      if (skip === 'pattern') {
        if (token.text === ')') skip = 'none';
        continue;
      }
      if (skip === 'head') skip = 'none';
      push(token.text);
      if (token.text === ';;' || token.text === ';&') skip = 'pattern';
      continue;
    }
    const { word, plain } = token;
    const first = words.length === 0 && redirections.length === 0 && plain;
    if (skip === 'caseHead') {
      if (plain && word.text === 'in') skip = 'pattern';
    } else if (skip === 'pattern') {
      if (plain && word.text === 'esac') skip = 'none';
    } else if (skip === 'head') continue;
    else if (first && (word.text === 'for' || word.text === 'select')) skip = 'head';
    else if (first && word.text === 'case') skip = 'caseHead';
    else if (!(first && RESERVED.has(word.text))) words.push(word);
  }
  push('');
  return commands;
};
