/**
 * Splitting a history into numbered lines, from a whole text or from a stream of chunks, with
 * the same lines either way: breaks at `\r\n`, `\n` or `\r`, one leading byte-order mark
 * dropped. A stream is read in memory bounded by its longest line, and no line is held past
 * `HISTORY_LINE_LIMITS.length + 1` characters: enough for the parser to reject it as too
 * large, never the whole of a 200 MB line without a break.
 */
import { refuseArgument } from '../../base/describe.js';
import { isRecord } from '../../base/record.js';
import { decodedChunks } from './encoding.js';

/**
 * What one history line may hold: at most 16 Mi characters (UTF-16 units, a reader holds no
 * more of a line than that) and 100 levels of nested arrays and objects (code that walks a
 * value recursively, `JSON.stringify` among it, overflows the stack a few thousand levels down).
 */
export const HISTORY_LINE_LIMITS = Object.freeze({ length: 16 * 1024 * 1024, depth: 100 } as const);

/** One line of a history as read: its number, counting every line from 1, and its text without the line break. */
export interface HistoryLine {
  readonly line: number;
  readonly text: string;
}

/**
 * Refuses `value`, the element `index` of the lines fed, unless it is a history line: a line fed
 * as its bare text, or null, is a programmer's mistake, said plainly rather than met deep inside
 * the reader. (Its name is made only for the message: this runs on every line of a replay.)
 */
export const checkHistoryLine = (value: unknown, index: number): void => {
  if (!isRecord(value)) refuseArgument(`the lines[${index}]`, value, 'a history line ({ line, text })');
  const { line, text } = value;
  if (typeof text !== 'string') refuseArgument(`the lines[${index}].text`, text, 'a string');
  if (typeof line !== 'number') refuseArgument(`the lines[${index}].line`, line, 'a number');
};

const LF = 0x0a;
const CR = 0x0d;
const BOM = 0xfeff;

/** Splits text pushed piece by piece into lines; `end` gives the last line. */
interface LineSplitter {
  /** The lines this piece completes, in order. */
  readonly push: (text: string) => HistoryLine[];
  /** The last line (no break after it), if it has any text. */
  readonly end: () => HistoryLine[];
}

/** A splitter that keeps at most `maxLength + 1` characters of any line. */
const createLineSplitter = (maxLength: number): LineSplitter => {
  let pending = '';
  let line = 1;
  let started = false;
  /** The piece before ended in `\r`: a `\n` opening this one belongs to that break. */
  let afterCr = false;

  const append = (piece: string): void => {
    // Past the limit the line is only carried to its end, never grown.
    if (pending.length > maxLength) return;
    pending = pending === '' ? piece : pending + piece;
    if (pending.length > maxLength) pending = pending.slice(0, maxLength + 1);
  };

  const push = (text: string): HistoryLine[] => {
    const lines: HistoryLine[] = [];
    if (text === '') return lines;
    let start = 0;
    if (!started) {
      started = true;
      if (text.charCodeAt(0) === BOM) start = 1;
    }
    if (afterCr && text.charCodeAt(start) === LF) start += 1;
    afterCr = false;
    let nextLf = text.indexOf('\n', start);
    let nextCr = text.indexOf('\r', start);
    while (nextLf !== -1 || nextCr !== -1) {
      const at = nextCr === -1 || (nextLf !== -1 && nextLf < nextCr) ? nextLf : nextCr;
      append(text.slice(start, at));
      lines.push({ line, text: pending });
      pending = '';
      line += 1;
      start = at + 1;
      if (text.charCodeAt(at) === CR) {
        if (start === text.length) afterCr = true;
        else if (text.charCodeAt(start) === LF) start += 1;
      }
      if (nextLf !== -1 && nextLf < start) nextLf = text.indexOf('\n', start);
      if (nextCr !== -1 && nextCr < start) nextCr = text.indexOf('\r', start);
    }
    if (start < text.length) append(text.slice(start));
    return lines;
  };

  const end = (): HistoryLine[] => {
    const last = pending === '' ? [] : [{ line, text: pending }];
    pending = '';
    return last;
  };

  return { push, end };
};

/** The lines of a whole history text, numbered from 1. */
export const linesOfText = (text: string): HistoryLine[] => {
  // A value that is not text (null from an unset variable) is a programmer's mistake: said plainly.
  if (typeof text !== 'string') refuseArgument('the history', text, 'a string');
  const splitter = createLineSplitter(Infinity);
  return [...splitter.push(text), ...splitter.end()];
};

/**
 * The lines of a history read as a stream of chunks (bytes, or text), a batch per chunk (so a
 * reader pays one await per chunk, not per line); empty batches are skipped. Bytes are UTF-8, or
 * UTF-16 when their first bytes say so (see `decodedChunks`); invalid sequences read as U+FFFD, as
 * they do when the whole file is read as text. With `onTornLine`, the text after the last line
 * break is handed to it rather than read as a line: a session's log ends at its last complete
 * line, and what follows is a torn line a writer killed mid-append left.
 */
export async function* lineBatches(
  chunks: AsyncIterable<Uint8Array | string>,
  maxLength: number = HISTORY_LINE_LIMITS.length,
  onTornLine?: (torn: HistoryLine) => void,
): AsyncGenerator<HistoryLine[]> {
  const splitter = createLineSplitter(maxLength);
  for await (const text of decodedChunks(chunks)) {
    const lines = splitter.push(text);
    if (lines.length > 0) yield lines;
  }
  const last = splitter.end();
  if (onTornLine !== undefined) last.forEach((torn) => onTornLine(torn));
  else if (last.length > 0) yield last;
}
