/** Steps the commands share: reading a history, loading a tokenizer, drawing progress. */
import * as E from 'fp-ts/lib/Either.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { pipe } from 'fp-ts/lib/function.js';
import type { TokenCounter } from '../../tokens/estimate.js';
import type { CommandName } from '../args.js';
import { type CliIo, EXIT_OK, EXIT_REJECTED_LINES } from '../io.js';
import { isSavedStateText } from '../source.js';
import { loadTokenCounter, type TokenizerName } from '../tokenizer.js';

/** Replays of more events than this draw progress on a terminal's stderr. */
export const PROGRESS_THRESHOLD = 2000;

/** Reads FILE as a history; a saved state is pointed to `facts` rather than read as bad lines. */
export const readHistory = (io: CliIo, file: string): TE.TaskEither<string, string> =>
  pipe(
    () => io.readText(file),
    TE.chainEitherK((text) =>
      isSavedStateText(text)
        ? E.left(`${file} is a saved state, not a dispatch history: read it with fact-tracker facts ${file}`)
        : E.right(text),
    ),
  );

/** The token counter `--tokenizer` names. */
export const tokenCounter =
  (name: TokenizerName): TE.TaskEither<string, TokenCounter> =>
  () =>
    loadTokenCounter(name);

/** Progress on stderr while a long replay runs, when stderr is a terminal; `finish` clears it. */
export const progressOnStderr = (
  io: CliIo,
): { readonly onProgress?: (replayed: number, total: number) => void; readonly finish: () => void } => {
  if (!io.stderrIsTty) return { finish: () => undefined };
  let drawn = false;
  return {
    onProgress: (replayed, total) => {
      if (total <= PROGRESS_THRESHOLD) return;
      drawn = true;
      io.stderr(`\r\u001b[2Kfact-tracker: replayed ${replayed} of ${total} events`);
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
export const exitStatusFor = (io: CliIo, command: CommandName, errors: ReadonlyArray<unknown>): number => {
  if (errors.length === 0) return EXIT_OK;
  io.stderr(
    `fact-tracker ${command}: ${errors.length} ${errors.length === 1 ? 'line was' : 'lines were'} rejected (listed in the report)\n`,
  );
  return EXIT_REJECTED_LINES;
};

/** JSON output: two-space indented, one trailing newline. */
export const toJson = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;
