/**
 * The files the commands read: a dispatch history, read as a stream of numbered lines (any
 * size, in memory bounded by its longest line), or a saved state, read whole (its size is the
 * store's). Which one a file is, is decided from its first line alone. A state file that is cut
 * short or corrupt must be reported as a broken state, never read as a history full of bad
 * lines, so the decision looks only at how the file starts.
 */
import { constants as bufferConstants } from 'node:buffer';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { number } from '../base/count.js';
import { parseJson } from '../base/json.js';
import { repeatedKeyReason } from '../base/jsonKeys.js';
import { isRecord } from '../base/record.js';
import { collapseWhitespace } from '../base/text.js';
import { decodedChunks } from '../core/history/encoding.js';
import { HISTORY_EVENT_FIELDS, HISTORY_EVENT_TYPES } from '../core/history/events.js';
import { HISTORY_LINE_LIMITS, type HistoryLine, lineBatches } from '../core/history/lines.js';
import { decodeState, encodeState, SAVED_STATE_FIELDS, STATE_FORMAT } from '../saved/savedState.js';
import type { FactStore } from '../core/store/state.js';
import { type CliIo, type OpenOptions, ReadFailure } from './io.js';

/**
 * True for a line opening with `{` (its caller checks) that opens a saved state whose first line
 * is not a whole object: `{` alone (pretty-printed) or `{"format":` (cut short), spaces between.
 * Read by trimming, not a pattern: a pattern's loop over millions of spaces before a character
 * outside Latin-1 overflowed the engine's regexp stack.
 */
const isStateOpening = (line: string): boolean => {
  const rest = line.slice(1).trimStart();
  return rest === '' || (rest.startsWith('"format"') && rest.slice('"format"'.length).trimStart().startsWith(':'));
};

const FIRST_VISIBLE = /\S/u;
const LINE_BREAK = /[\r\n]/u;

const withoutBom = (text: string): string => text.replace(/^\uFEFF/u, '');

/**
 * True when a file whose first line with text is `firstLine` (whitespace before it removed) is
 * meant as a saved state: that line is a whole JSON object tagged with a saved state's `format`,
 * as every state written on one line starts, or it opens a state document. Any other first line
 * starts a history, an object without `type` too (a note another tool wrote at the top of a
 * session's log): `sessions export` prints a log as it is, and `replay -` must read it as
 * `replay --session` reads the log, its first line a rejected one.
 */
export const isSavedStateStart = (firstLine: string): boolean => {
  if (!firstLine.startsWith('{')) return false;
  const parsed = parsedLine(firstLine);
  return parsed === undefined
    ? isStateOpening(firstLine)
    : isRecord(parsed.value) && parsed.value['format'] === STATE_FORMAT;
};

/** A line's JSON value, or undefined when it is no JSON (a state cut into lines, a line cut short). */
const parsedLine = (line: string): { readonly value: unknown } | undefined =>
  E.match(
    () => undefined,
    (value: unknown) => ({ value }),
  )(parseJson(line));

/** The key that opens a line of an object written over several lines (`"type": "prompt",`), if it opens with one. */
const OPENING_KEY = /^"(?:[^"\\]|\\.)*"\s*:/u;

/**
 * How much of a line `openingKeyOf` looks at: far more than an event's field name and the spaces
 * after it take, and the key's pattern looped over a line of millions of characters outside
 * Latin-1 overflowed the engine's regexp stack.
 */
const OPENING_KEY_READ = 4_096;

/** True for a key that is a field of a dispatch history's event, as no saved state's top level has one. */
export const isHistoryEventField = (key: unknown): boolean =>
  (HISTORY_EVENT_FIELDS as ReadonlyArray<unknown>).includes(key);

/** True for a key that says what a document `{` alone opens is: a field of a line (`isLineField`) or of a saved state. */
const saysWhatItIs = (key: unknown, isLineField: (key: unknown) => boolean): boolean =>
  isLineField(key) || (SAVED_STATE_FIELDS as ReadonlyArray<unknown>).includes(key);

/** How much of a document `{` alone opens is read for a key that says what it is, past its first key (see `isSpreadLines`). */
export const SPREAD_KEYS_READ = 65_536;

/**
 * True when `rest`, what follows a line `{` alone, is an object written over several lines whose
 * first top-level key that says what it is is a field of a line (`isLineField`: an event's, a
 * conversation log line's), not of a saved state: a history or a log pretty-printed (`jq .`, and
 * `jq -S .`, which sorts a field the parser ignores, `"note"`, before `"output"` in an event without
 * `at`). A key of neither kind says nothing: the next one where the keys are is read, the lines of
 * a value, further in, skipped, up to `SPREAD_KEYS_READ` characters past the first key.
 */
export const isSpreadLines = (rest: string, isLineField: (key: unknown) => boolean): boolean => {
  const start = rest.search(FIRST_VISIBLE);
  if (start === -1) return false;
  // From the start of the line the first key is on: its indentation is where the keys are.
  const from = Math.max(rest.lastIndexOf('\n', start), rest.lastIndexOf('\r', start)) + 1;
  let indent: number | undefined;
  for (const line of rest.slice(from, start + SPREAD_KEYS_READ).split(/\r\n?|\n/u)) {
    const text = line.trimStart();
    if (text === '') continue;
    const depth = line.length - text.length;
    indent ??= depth;
    // The object ended: a line further out than its keys, or its closing brace at the margin.
    if (depth < indent || (depth === 0 && text.startsWith('}'))) return false;
    if (depth > indent) continue;
    const key = openingKeyOf(text);
    if (saysWhatItIs(key, isLineField)) return isLineField(key);
  }
  return false;
};

/** The name of the key `line` opens with (`"type": "prompt",` gives `type`), if it opens with one. */
export const openingKeyOf = (line: string): unknown => {
  const key = OPENING_KEY.exec(line.slice(0, OPENING_KEY_READ))?.[0].replace(/\s*:$/u, '');
  return key === undefined ? undefined : parsedLine(key)?.value;
};

/** True when `firstLine` (as `isSavedStateStart` takes it) is a dispatch history's event: a JSON object whose `type` is one. */
export const isHistoryEventStart = (firstLine: string): boolean => {
  const value = firstLine.startsWith('{') ? parsedLine(firstLine)?.value : undefined;
  return isRecord(value) && (HISTORY_EVENT_TYPES as ReadonlyArray<unknown>).includes(value['type']);
};

/** The first line of `text` that holds more than whitespace, from its first visible character (at most the line limit, and one more). */
export const firstLineOf = (text: string): string => {
  const start = text.search(FIRST_VISIBLE);
  if (start === -1) return '';
  const rest = text.slice(start, start + HISTORY_LINE_LIMITS.length + 1);
  const end = rest.search(LINE_BREAK);
  return end === -1 ? rest : rest.slice(0, end);
};

/** What follows the first line with text of `text`, as `firstLineOf` gives it ('' when there is none). */
export const afterFirstLineOf = (text: string): string => {
  const start = text.search(FIRST_VISIBLE);
  return start === -1 ? '' : text.slice(start + firstLineOf(text).length);
};

/** Reads a saved state, or says in one line why it cannot: never a half-loaded store. */
export const parseSavedState = (text: string): E.Either<string, FactStore> =>
  pipe(
    parseJson(withoutBom(text)),
    E.mapLeft(
      (reason) => `not a readable saved state: the JSON is truncated or corrupt (${collapseWhitespace(reason)})`,
    ),
    // JSON.parse keeps the last of a key given twice: a state edited by hand would lose the first unsaid.
    E.chainFirst(() => {
      const repeated = repeatedKeyReason(text);
      return repeated === undefined
        ? E.right(undefined)
        : E.left(`not a readable saved state: ${repeated}, of which JSON keeps only the last`);
    }),
    E.chain((value) =>
      E.mapLeft(({ message }: { readonly message: string }) => collapseWhitespace(message))(decodeState(value)),
    ),
  );

/** The store as the text of a saved-state file. */
export const formatSavedState = (store: FactStore): string => `${JSON.stringify(encodeState(store))}\n`;

/**
 * A file the commands read, by what its first line says it is. A source read to its end releases
 * its file by itself; one read in part (a replay stopped by `--as-of` or `--line`, a state a
 * command refuses, a replay that fails half-way) is closed by its reader, so that the file is
 * released then, not whenever the collector finds it (a process that runs many commands, as a
 * server or a test does, would otherwise hold their files open).
 */
export type Source =
  | {
      readonly kind: 'history';
      /** The lines, a batch per chunk read; iterating may throw a `ReadFailure`. */
      readonly batches: AsyncIterable<HistoryLine[]>;
      /** How much of the file has been read, from 0 to 1, when its size is known. */
      readonly fractionRead: () => number | undefined;
      /** Releases the file at once, however much of it was read (see `Source`). */
      readonly close: () => Promise<void>;
      /** A session's log read to its end: the number of the torn last line left out, if it has one (see `openSource`). */
      readonly tornLine?: () => number | undefined;
    }
  | {
      readonly kind: 'state';
      /** The whole text, read when asked for (a command that refuses a state never reads it); may reject with a `ReadFailure`. */
      readonly text: () => Promise<string>;
      /** Releases the file at once, however much of it was read (see `Source`). */
      readonly close: () => Promise<void>;
    };

type Chunk = Uint8Array | string;

/** The chunks of a stream, those already taken first. */
async function* replayed(taken: ReadonlyArray<string>, rest: AsyncIterator<string>): AsyncGenerator<string> {
  yield* taken;
  for (let next = await rest.next(); next.done !== true; next = await rest.next()) yield next.value;
}

/** The chunks read so far of a stream being peeked at, and how to read one more. */
interface Peek {
  text: string;
  ended: boolean;
  readonly more: () => Promise<void>;
}

/**
 * Reads chunks until the text after `from` holds a whole line with text, or as long as a history
 * line may be, or the chunks end; returns that line from its first visible character and the
 * index just past it. (A file with no text in its first 16 Mi characters reads as a history: as
 * blank lines.)
 */
const peekLineFrom = async (peek: Peek, from: number): Promise<{ line: string; end: number }> => {
  /** Where the first visible character after `from` is, once seen. */
  let start = -1;
  let searchFrom = from;
  for (;;) {
    if (start === -1) {
      const visible = peek.text.slice(searchFrom).search(FIRST_VISIBLE);
      if (visible !== -1) start = searchFrom + visible;
    }
    // Only what was added can hold the break that ends the line.
    const complete = start !== -1 && peek.text.slice(Math.max(start, searchFrom)).search(LINE_BREAK) !== -1;
    if (complete || peek.ended || peek.text.length > HISTORY_LINE_LIMITS.length + Math.max(start, from - 1) + 1) break;
    searchFrom = peek.text.length;
    await peek.more();
  }
  if (start === -1) return { line: '', end: peek.text.length };
  const line = firstLineOf(peek.text.slice(start));
  return { line, end: start + line.length };
};

/**
 * Reads chunks until the first line with text is whole (and, when the first is `{` alone, a
 * document written over several lines, the next one, and `SPREAD_KEYS_READ` characters more when
 * its key does not say what the document is, see `isSpreadLines`), and returns them with all the
 * chunks, those read included, to be read again from the start, and how to end the reading early
 * (`Source.close`).
 */
const peekFirstLine = async (
  chunks: AsyncIterable<string>,
): Promise<{ firstLine: string; rest?: string; chunks: AsyncIterable<string>; close: () => Promise<void> }> => {
  const iterator = chunks[Symbol.asyncIterator]();
  const taken: string[] = [];
  const peek: Peek = {
    text: '',
    ended: false,
    more: async () => {
      const next = await iterator.next();
      if (next.done === true) peek.ended = true;
      else {
        taken.push(next.value);
        peek.text += next.value;
      }
    },
  };
  const first = await peekLineFrom(peek, 0);
  const spread = first.line.trimEnd() === '{';
  if (spread) {
    const next = await peekLineFrom(peek, first.end);
    if (!saysWhatItIs(openingKeyOf(next.line), isHistoryEventField))
      while (!peek.ended && peek.text.length < next.end + SPREAD_KEYS_READ) await peek.more();
  }
  return {
    firstLine: first.line,
    ...(spread ? { rest: peek.text.slice(first.end) } : {}),
    chunks: replayed(taken, iterator),
    close: async () => {
      try {
        await iterator.return?.();
      } catch (error) {
        // The file was only read: failing to release it says nothing about what was read.
        if (!(error instanceof ReadFailure)) throw error;
      }
    },
  };
};

/** The longest text the engine makes (512 Mi characters): a saved state, read whole, is at most that. */
const { MAX_STRING_LENGTH } = bufferConstants;

/**
 * The text of the chunks of `name`; once they are longer than one text can be (a huge file a `{`
 * alone opens), the file is closed, read in part, and a `ReadFailure` says why, rather than the
 * engine's RangeError, a bug's report.
 */
const readAll = async (chunks: AsyncIterable<string>, name: string, close: () => Promise<void>): Promise<string> => {
  const parts: string[] = [];
  let length = 0;
  for await (const chunk of chunks) {
    length += chunk.length;
    if (length > MAX_STRING_LENGTH) {
      await close();
      throw new ReadFailure(
        `cannot read ${name}: it is longer than the ${number(MAX_STRING_LENGTH)} characters a saved state may have (it is read whole, as one text)`,
      );
    }
    parts.push(chunk);
  }
  return parts.join('');
};

/** The chunks, counting the bytes that went by. */
async function* counted(chunks: AsyncIterable<Chunk>, count: (bytes: number) => void): AsyncGenerator<Chunk> {
  for await (const chunk of chunks) {
    count(chunk.length);
    yield chunk;
  }
}

/**
 * Opens FILE as a history or a saved state, deciding from its first line which it is (`log`: a
 * session's log, a history whatever its first line, read up to its last complete line as a live
 * session and `sessions export` read it, the torn line after it left out and told by `tornLine`).
 * A state is read whole; a history is handed on as batches of lines, read as they are asked for.
 */
export const openSource = async (
  io: CliIo,
  file: string,
  options?: OpenOptions,
  kind: 'log' | 'either' = 'either',
): Promise<E.Either<string, Source>> => {
  const opened =
    io.openStream === undefined
      ? E.map((text: string) => ({ chunks: [text], size: text.length }))(await io.readText(file))
      : await io.openStream(file, options);
  if (E.isLeft(opened)) return opened;
  const { size } = opened.right;
  let bytes = 0;
  try {
    const { firstLine, rest, chunks, close } = await peekFirstLine(
      decodedChunks(counted(opened.right.chunks as AsyncIterable<Chunk>, (n) => (bytes += n))),
    );
    const name = file === '-' ? 'standard input' : file;
    if (kind === 'either' && rest !== undefined && isSpreadLines(rest, isHistoryEventField)) {
      await close();
      return E.left(
        `${name} is a dispatch history written over several lines (pretty-printed, as jq . writes it), not one event a line: write it with jq -c . and read that`,
      );
    }
    if (kind === 'either' && isSavedStateStart(firstLine))
      return E.right({ kind: 'state', text: () => readAll(chunks, name, close), close });
    const fractionRead = (): number | undefined =>
      size === undefined || size === 0 ? undefined : Math.min(1, bytes / size);
    if (kind === 'either') return E.right({ kind: 'history', batches: lineBatches(chunks), fractionRead, close });
    let torn: number | undefined;
    return E.right({
      kind: 'history',
      batches: lineBatches(chunks, undefined, ({ line }) => (torn = line)),
      fractionRead,
      close,
      tornLine: () => torn,
    });
  } catch (error) {
    if (!(error instanceof ReadFailure)) throw error;
    return E.left(error.message);
  }
};

/** What `read` resolves to, or the one-line reason of a `ReadFailure`; any other exception is a bug and is let through. */
export const readOrFailure =
  <A>(read: () => Promise<A>): (() => Promise<E.Either<string, A>>) =>
  async () => {
    try {
      return E.right(await read());
    } catch (error) {
      if (!(error instanceof ReadFailure)) throw error;
      return E.left(error.message);
    }
  };
