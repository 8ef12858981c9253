/**
 * Reading dispatch histories from files and streams on Node (`session-fact-tracker/history/node`;
 * the package root stays browser-safe). A history is read line by line, in memory bounded by
 * its longest line (at most `HISTORY_LINE_LIMITS.length` characters are held of any line), so
 * a file of any size can be read, replayed or followed.
 */
import { createReadStream } from 'node:fs';
import * as E from 'fp-ts/lib/Either.js';
import { describeError, kindOf } from '../base/describe.js';
import { type Failure, failure } from '../base/failure.js';
import { createHistoryLineReader, type HistoryEvent, type HistoryLineError } from '../core/history/events.js';
import { type HistoryLine, lineBatches } from '../core/history/lines.js';
import { type HistoryReplayOptions, type ReplayResult, startHistoryReplay } from '../core/replay/replay.js';

/** Where a history is read from: a file path, or a stream of chunks (a `Readable`, `process.stdin`, ...). */
export type HistorySource = string | AsyncIterable<Uint8Array | string>;

/** One non-blank line of a history, read: its event, or why it is not one. Both carry the line number (`line`). */
export type ReadHistoryLine = E.Either<HistoryLineError, HistoryEvent>;

/** True for an object whose `Symbol.asyncIterator` is a function; one whose field cannot be read (a Proxy) is none. */
const isAsyncIterable = (source: object): boolean => {
  try {
    return typeof (source as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator] === 'function';
  } catch {
    return false;
  }
};

/** Why `source` is no history source (neither a path nor a stream), or undefined when it is one. */
const sourceProblem = (source: unknown): string | undefined => {
  if (typeof source === 'string')
    return source.includes('\0') ? 'the history source is a path holding U+0000, which no file name can' : undefined;
  return typeof source === 'object' && source !== null && isAsyncIterable(source)
    ? undefined
    : `the history source is ${kindOf(source)}, not a file path or a stream of chunks (an async iterable)`;
};

const chunksOf = (source: HistorySource): AsyncIterable<Uint8Array | string> => {
  // A source that is none (null from an unset variable) is said, not failed on inside the reader.
  const problem = sourceProblem(source);
  if (problem !== undefined) throw new TypeError(problem);
  return typeof source === 'string'
    ? (createReadStream(source, { highWaterMark: 256 * 1024 }) as AsyncIterable<Buffer>)
    : source;
};

/**
 * The lines of a history as they are read, each non-blank one as its event or its error, in
 * file order (a line without `at` is timed from the event before it, as `parseHistory` does).
 * A file that cannot be read makes the iteration throw the reading error (a source that is
 * neither a path nor a stream, a TypeError naming it).
 */
export async function* readHistoryEvents(source: HistorySource): AsyncGenerator<ReadHistoryLine> {
  const read = createHistoryLineReader();
  for await (const batch of lineBatches(chunksOf(source)))
    for (const line of batch) {
      const parsed = read(line);
      if (parsed !== undefined) yield parsed;
    }
}

/**
 * `replayHistory` for a history read as it goes: the same result for the same lines, reading
 * stops as soon as the replay does (`asOf`, `untilLine`). With `onPrompt`, prompts are handed
 * out rather than kept, and memory is bounded by the store, not by the history. A source that
 * is neither a path nor a stream gives a Left `invalid_input`, one that cannot be read `io`, each
 * with the reason; an exception of the replay itself (a callback's own, such as `onPrompt`'s) is
 * no reading failure and is thrown as it is.
 */
export const replayHistoryFile = async (
  source: HistorySource,
  options: HistoryReplayOptions = {},
): Promise<E.Either<Failure<'invalid_input' | 'io'>, ReplayResult>> => {
  // A source that is none is answered as one that cannot be read, never thrown at the caller.
  const problem = sourceProblem(source);
  if (problem !== undefined) return E.left(failure('invalid_input', problem));
  const replay = startHistoryReplay(options);
  const batches = lineBatches(chunksOf(source))[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<HistoryLine[]>;
    try {
      next = await batches.next();
    } catch (error) {
      const where = typeof source === 'string' ? source : 'the history stream';
      // The stream is the caller's: it may fail with anything, a value with no text form included.
      return E.left(failure('io', `cannot read ${where}: ${describeError(error)}`));
    }
    if (next.done === true) break;
    let going = false;
    try {
      going = replay.feed(next.value);
    } finally {
      // Reading stops (the file is closed) when the replay does, or throws.
      if (!going) await batches.return(undefined);
    }
    if (!going) break;
  }
  return E.right(replay.finish());
};
