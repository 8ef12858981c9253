/**
 * Reading a history or a saved state for `replay`, `facts`, `explain` and `context --facts`: a
 * history is replayed as its lines are read, with progress on a terminal. (Apart from
 * shared.ts, so a command that reads no history does not load the replay.)
 */
import * as E from 'fp-ts/lib/Either.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { pipe } from 'fp-ts/lib/function.js';
import type { HistoryLine } from '../../core/history/lines.js';
import { type HistoryReplayOptions, type ReplayResult, startHistoryReplay } from '../../core/replay/replay.js';
import type { FactStore } from '../../core/store/state.js';
import type { HistoryInput } from '../command.js';
import { type CliIo, ReadFailure } from '../io.js';
import { number, type RejectedLines } from '../render.js';
import { openSource, parseSavedState, readOrFailure, type Source } from '../source.js';

/** Replays of more events than this draw progress on a terminal's stderr. */
export const PROGRESS_THRESHOLD = 2000;

/** A history, as its lines are read. */
export type HistorySource = Extract<Source, { kind: 'history' }>;

/** What a command reads: a FILE, or a session of a store. */
export type Readable = string | HistoryInput;

/** The FILE a command reads (`-` for standard input), or undefined for a session of a store. */
const fileOf = (input: Readable): string | undefined =>
  typeof input === 'string' ? input : input.kind === 'file' ? input.file : undefined;

/** True when the command reads standard input (`-`). */
export const isStandardInput = (input: Readable): boolean => fileOf(input) === '-';

/** How messages name what is read: the FILE, standard input (as every message names `-`), or the session. */
export const labelOf = (input: Readable): string => {
  if (typeof input !== 'string' && input.kind === 'session') return `session ${input.id}`;
  const file = typeof input === 'string' ? input : input.file;
  return file === '-' ? 'standard input' : file;
};

/** Opens FILE (or the session: its module loaded only then) and tells a history from a saved state. */
const openReadable = async (io: CliIo, input: Readable): Promise<E.Either<string, Source>> =>
  typeof input === 'string' || input.kind === 'file'
    ? openSource(io, typeof input === 'string' ? input : input.file)
    : (await import('./storedSession.js')).openStoredSession(io, input.id, input.store);

/** Opens FILE (or the session) as a history; a saved state is pointed to `facts` rather than read as bad lines. */
export const openHistory = (io: CliIo, input: Readable): TE.TaskEither<string, HistorySource> =>
  pipe(
    () => openReadable(io, input),
    TE.chain((source) => async () => {
      if (source.kind === 'history') return E.right(source);
      await source.close();
      // The command to run names the input as it was given: `-` for standard input.
      return E.left(
        `${labelOf(input)} is a saved state, not a dispatch history: read it with fact-tracker facts ${fileOf(input) ?? labelOf(input)}`,
      );
    }),
  );

/** What a command does around each batch of lines a replay reads (see `replaySource`). */
export interface BatchSteps {
  /** Loads what the batch's lines need; a Left stops the replay with its reason. */
  readonly beforeBatch?: ((lines: ReadonlyArray<HistoryLine>) => Promise<E.Either<string, void>>) | undefined;
  /** Writes out what the batch produced, and waits until the output can take more. */
  readonly afterBatch?: () => void | Promise<void>;
  /** The progress drawn (the command's own when it writes to standard output as it goes). */
  readonly progress?: Progress;
}

/**
 * Replays a history as its lines are read, drawing progress on a terminal, with the command's
 * `steps` around each batch. Reading stops as soon as the replay does (`--as-of`, `--line`); a
 * failure to read half-way is a Left with its one-line reason (any other exception is a bug, and
 * is let through to the router). However it ends, the source is closed: its file is released
 * when the replay is over. A session's log read to its end without its torn last line says so
 * in one line on stderr.
 */
export const replaySource = (
  io: CliIo,
  source: HistorySource,
  options: HistoryReplayOptions,
  steps: BatchSteps = {},
): TE.TaskEither<string, ReplayResult> => {
  return async () => {
    const replay = startHistoryReplay(options);
    const progress = steps.progress ?? progressOnStderr(io);
    const batches = source.batches[Symbol.asyncIterator]();
    let next: IteratorResult<HistoryLine[]>;
    try {
      for (next = await batches.next(); next.done !== true; next = await batches.next()) {
        const ready = (await steps.beforeBatch?.(next.value)) ?? E.right(undefined);
        if (E.isLeft(ready)) return ready;
        const going = replay.feed(next.value);
        await steps.afterBatch?.();
        progress.update(replay.replayed(), source.fractionRead());
        if (!going) break;
      }
    } catch (error) {
      if (!(error instanceof ReadFailure)) throw error;
      return E.left(error.message);
    } finally {
      progress.finish();
      await source.close();
    }
    // Said once the progress is cleared: the line is left out as a live session sets it aside, not
    // rejected; past `untilLine` (`explain --line`), it is a line the replay would not read anyway.
    const torn = source.tornLine?.();
    if (torn !== undefined && torn <= (options.untilLine ?? Infinity))
      io.stderr(
        `fact-tracker: the session log's torn last line (line ${torn}, no line break after it: a writer killed mid-append) was left out\n`,
      );
    return E.right(replay.finish());
  };
};

/** Progress drawn on one line of stderr while a long replay runs (see `progressOnStderr`). */
export interface Progress {
  readonly update: (replayed: number, fractionRead: number | undefined) => void;
  /** `write`, erasing the progress first when standard output is a terminal, most likely the same one. */
  readonly beforeOutput: (write: (text: string) => void) => (text: string) => void;
  readonly finish: () => void;
}

/**
 * Progress on stderr while a long replay runs, when stderr is a terminal; `finish` clears it.
 * A report written to the same terminal meanwhile would go on the progress line, after its
 * text: its writes go through `beforeOutput`, which erases the progress, drawn again with the
 * next update below what they wrote, and only once they ended a line (erasing the line to draw
 * on would erase the report's text on it, as JSON's `}` before its `,`). A report going
 * elsewhere (a file, a pipe) leaves it drawn.
 */
export const progressOnStderr = (io: CliIo): Progress => {
  let drawn = false;
  let atLineStart = true;
  const clear = (): void => {
    if (drawn) io.stderr('\r\u001b[2K');
    drawn = false;
  };
  return {
    update: (replayed, fractionRead) => {
      if (!io.stderrIsTty || replayed <= PROGRESS_THRESHOLD || !atLineStart) return;
      drawn = true;
      const read = fractionRead === undefined ? '' : ` (${Math.floor(fractionRead * 100)}% of the file read)`;
      io.stderr(`\r\u001b[2Kfact-tracker: replayed ${number(replayed)} events${read}`);
    },
    beforeOutput: (write) =>
      io.stdoutIsTty === true
        ? (text) => {
            clear();
            write(text);
            if (text !== '') atLineStart = text.endsWith('\n');
          }
        : write,
    finish: clear,
  };
};

/** A fact store and the history lines rejected on the way to it (none for a saved state). */
export interface LoadedStore {
  readonly store: FactStore;
  readonly rejected: RejectedLines;
}

/**
 * The store of FILE: a saved state decoded whole (or refused), or the store a history replays
 * to (as it is read, up to `asOf`).
 */
export const loadStore = (io: CliIo, input: Readable, asOf?: number): TE.TaskEither<string, LoadedStore> =>
  pipe(
    () => openReadable(io, input),
    TE.chain((source) =>
      source.kind === 'state'
        ? pipe(
            readOrFailure(source.text),
            TE.chainEitherK((text) =>
              pipe(
                parseSavedState(text),
                E.bimap(
                  (reason) => `${labelOf(input)}: ${reason}`,
                  (store): LoadedStore => ({ store, rejected: { errors: [] } }),
                ),
              ),
            ),
          )
        : pipe(
            // Only the store is wanted: no prompt report is kept.
            replaySource(io, source, { onPrompt: () => undefined, ...(asOf === undefined ? {} : { asOf }) }),
            TE.map(({ store, report: { errors, errorsOmitted } }) => ({
              store,
              rejected: errorsOmitted === undefined ? { errors } : { errors, errorsOmitted },
            })),
          ),
    ),
  );
