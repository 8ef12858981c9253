/** Steps the commands share: reading and replaying a history, loading a tokenizer, drawing progress. */
import * as E from 'fp-ts/lib/Either.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { pipe } from 'fp-ts/lib/function.js';
import { type HistoryReplayOptions, type ReplayResult, startHistoryReplay } from '../../history/replay.js';
import type { HistoryLine } from '../../history/lines.js';
import type { TokenCounter } from '../../tokens/estimate.js';
import type { CommandName } from '../args.js';
import { type CliIo, EXIT_OK, EXIT_REJECTED_LINES } from '../io.js';
import { openSource, type Source } from '../source.js';
import { loadTokenCounter, type TokenizerName } from '../tokenizer.js';

/** Replays of more events than this draw progress on a terminal's stderr. */
export const PROGRESS_THRESHOLD = 2000;

/** A history, as its lines are read. */
export type HistorySource = Extract<Source, { kind: 'history' }>;

/** Opens FILE as a history; a saved state is pointed to `facts` rather than read as bad lines. */
export const openHistory = (io: CliIo, file: string): TE.TaskEither<string, HistorySource> =>
  pipe(
    () => openSource(io, file),
    TE.chainEitherK((source) =>
      source.kind === 'state'
        ? E.left(`${file} is a saved state, not a dispatch history: read it with fact-tracker facts ${file}`)
        : E.right(source),
    ),
  );

/**
 * Replays a history as its lines are read, drawing progress on a terminal, with `afterBatch`
 * called after each batch (to write out what it produced). Reading stops as soon as the replay
 * does (`--as-of`, `--line`); a failure to read half-way is a Left with its one-line reason.
 */
export const replaySource = (
  io: CliIo,
  source: HistorySource,
  options: HistoryReplayOptions,
  afterBatch: () => void = () => undefined,
): TE.TaskEither<string, ReplayResult> => {
  return async () => {
    const replay = startHistoryReplay(options);
    const progress = progressOnStderr(io);
    const batches = source.batches[Symbol.asyncIterator]();
    let next: IteratorResult<HistoryLine[]>;
    try {
      for (next = await batches.next(); next.done !== true; next = await batches.next()) {
        const going = replay.feed(next.value);
        afterBatch();
        progress.update(replay.replayed(), source.fractionRead());
        if (!going) {
          await batches.return?.();
          break;
        }
      }
    } catch (error) {
      progress.finish();
      return E.left(error instanceof Error ? error.message : 'cannot read the history');
    }
    progress.finish();
    return E.right(replay.finish());
  };
};

/** The token counter `--tokenizer` names. */
export const tokenCounter =
  (name: TokenizerName): TE.TaskEither<string, TokenCounter> =>
  () =>
    loadTokenCounter(name);

/** Progress on stderr while a long replay runs, when stderr is a terminal; `finish` clears it. */
export const progressOnStderr = (
  io: CliIo,
): { readonly update: (replayed: number, fractionRead: number | undefined) => void; readonly finish: () => void } => {
  let drawn = false;
  return {
    update: (replayed, fractionRead) => {
      if (!io.stderrIsTty || replayed <= PROGRESS_THRESHOLD) return;
      drawn = true;
      const read = fractionRead === undefined ? '' : ` (${Math.floor(fractionRead * 100)}% of the file read)`;
      io.stderr(`\r\u001b[2Kfact-tracker: replayed ${replayed} events${read}`);
    },
    finish: () => {
      if (drawn) io.stderr('\r\u001b[2K');
    },
  };
};

/**
 * 2 when some lines were rejected, 0 otherwise. The rejections are in the report on stdout; one
 * line on stderr says so too, for when stdout goes to a file or another program.
 */
export const exitStatusFor = (
  io: CliIo,
  command: CommandName,
  errors: ReadonlyArray<unknown>,
  omitted: number = 0,
): number => {
  const count = errors.length + omitted;
  if (count === 0) return EXIT_OK;
  const listed = omitted === 0 ? 'listed in the report' : `the first ${errors.length} listed in the report`;
  io.stderr(`fact-tracker ${command}: ${count} ${count === 1 ? 'line was' : 'lines were'} rejected (${listed})\n`);
  return EXIT_REJECTED_LINES;
};

/** JSON output: two-space indented, one trailing newline. */
export const toJson = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;
