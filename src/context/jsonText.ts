/**
 * Context files as JSON text: parsed with a failure that says where the text broke without
 * quoting it (a broken file may hold anything, a pasted secret too), and written as two-space
 * JSON with a final newline, since the files are committed and their diffs should read well.
 */
import * as E from 'fp-ts/lib/Either.js';
import type { ContextError } from './model.js';

const corrupt = (message: string): ContextError => ({ code: 'corrupt', message });

/** The line of the file a line of the text parsed stands on: the same, unless the text is one side of a conflict. */
export type FileLine = (line: number) => number;

/** Where in `text` the UTF-16 offset `position` is, as `line L, column C`, L a line of the file (`fileLine`). */
const lineAndColumn = (text: string, position: number, fileLine: FileLine = (line) => line): string => {
  const before = text.slice(0, position);
  const line = before.split('\n').length;
  return `line ${fileLine(line)}, column ${position - before.lastIndexOf('\n')}`;
};

/**
 * Why `text` is not JSON, without quoting it: the parser's own message quotes the text, and a
 * broken context file may hold anything (a pasted secret), so only a position is kept.
 */
const jsonProblem = (text: string, error: SyntaxError, fileLine: FileLine | undefined): string => {
  const { message } = error;
  const position = /\bposition (\d+)/u.exec(message);
  if (position !== null) return `at ${lineAndColumn(text, Number(position[1]), fileLine)}`;
  if (/unexpected end/iu.test(message)) return 'it ends too early';
  return 'unexpected text';
};

/**
 * Parses JSON text, calling a failure what it is: a truncated or corrupt file (never quoting
 * it), at a line of the file (`fileLine`, for a side of a conflict). Only the parser's own
 * refusal, a `SyntaxError`, is such a failure; anything else is a bug and is not caught here.
 */
export const parseJsonText = (text: string, fileLine?: FileLine): E.Either<ContextError, unknown> => {
  const json = text.replace(/^\uFEFF/u, '');
  try {
    return E.right(JSON.parse(json) as unknown);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    return E.left(corrupt(`not valid JSON, the file is truncated or corrupt (${jsonProblem(json, error, fileLine)})`));
  }
};

/**
 * The deepest arrays and objects a context or sessions file may nest: its own fields reach
 * seven levels, a team's annotation a few more. The parser reads far deeper text, but walking
 * it (a secret scan, a freeze, the write back) overflows the stack: such a file is corrupt.
 */
export const JSON_NESTING_MAX = 512;

const [BACKSLASH, QUOTE, OPEN_ARRAY, OPEN_OBJECT, CLOSE_ARRAY, CLOSE_OBJECT] = [...'\\"[{]}'].map((c) =>
  c.charCodeAt(0),
);

/**
 * `text`, or why it is corrupt: its arrays and objects nest deeper than `JSON_NESTING_MAX`
 * (where, at a line of the file: `fileLine`). A scan that skips strings, run before the parser
 * builds anything, in a plain loop: it reads every file of up to 5 MiB, as fast as the parser.
 */
export const checkJsonNesting = (text: string, fileLine?: FileLine): E.Either<ContextError, string> => {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const character = text.charCodeAt(i);
    if (inString) {
      if (character === BACKSLASH) i += 1;
      else if (character === QUOTE) inString = false;
    } else if (character === QUOTE) inString = true;
    else if (character === CLOSE_ARRAY || character === CLOSE_OBJECT) depth -= 1;
    else if ((character === OPEN_ARRAY || character === OPEN_OBJECT) && ++depth > JSON_NESTING_MAX)
      return E.left(
        corrupt(
          `arrays and objects nested deeper than ${JSON_NESTING_MAX} levels (at ${lineAndColumn(text, i, fileLine)}), which no file of the shared context holds: the file is corrupt`,
        ),
      );
  }
  return E.right(text);
};

/**
 * `text` without the commas that stand right before a closing `}` or `]` (outside strings): the
 * typo a hand edit leaves most often, which JSON does not allow. Undefined when there is none;
 * otherwise the text and where the first one was.
 */
export const withoutTrailingCommas = (text: string): { readonly text: string; readonly first: string } | undefined => {
  const cuts: number[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const character = text[i];
    if (inString) {
      if (character === '\\') i += 1;
      else if (character === '"') inString = false;
    } else if (character === '"') inString = true;
    else if (character === ',') {
      let next = i + 1;
      while (next < text.length && ' \t\n\r'.includes(text[next]!)) next += 1;
      if (text[next] === '}' || text[next] === ']') cuts.push(i);
    }
  }
  if (cuts.length === 0) return undefined;
  const parts = cuts.map((cut, i) => text.slice(i === 0 ? 0 : cuts[i - 1]! + 1, cut));
  return { text: parts.join('') + text.slice(cuts[cuts.length - 1]! + 1), first: lineAndColumn(text, cuts[0]!) };
};

/** A document as file text: two-space JSON and a final newline. */
export const formatJsonDocument = (document: unknown): string => `${JSON.stringify(document, null, 2)}\n`;
