/** Steps every command shares: loading a tokenizer, exit statuses, JSON output. */
import type * as T from 'fp-ts/lib/Task.js';
import type * as TE from 'fp-ts/lib/TaskEither.js';
import type { TokenCounter } from '../../tokens/estimate.js';
import type { CommandName } from '../command.js';
import { type CliIo, EXIT_OK, EXIT_REJECTED_LINES } from '../io.js';
import { number } from '../render.js';
import { loadTokenCounter } from '../../tokens/load.js';
import type { TokenizerName } from '../../tokens/names.js';

/** The token counter `--tokenizer` names. */
export const tokenCounter =
  (name: TokenizerName): TE.TaskEither<string, TokenCounter> =>
  () =>
    loadTokenCounter(name);

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
  const listed = omitted === 0 ? 'listed in the report' : `the first ${number(errors.length)} listed in the report`;
  io.stderr(
    `fact-tracker ${command}: ${number(count)} ${count === 1 ? 'line was' : 'lines were'} rejected (${listed})\n`,
  );
  return EXIT_REJECTED_LINES;
};

/**
 * The exit status once standard output took the whole report (see `exitStatusFor`): a reader
 * that closes it early (`| head`) ends the process quietly while it waits, with the status
 * `statusIfCut` set, and is not told of the rejected lines on stderr.
 */
export const statusAfterReport =
  (io: CliIo, command: CommandName, errors: ReadonlyArray<unknown>, omitted: number = 0): T.Task<number> =>
  async () => {
    await io.drain?.();
    return exitStatusFor(io, command, errors, omitted);
  };

/**
 * Prints a report that is written whole once its file was read (`facts`, `explain`) and resolves
 * to the exit status, as `replay` ends: a reader that closes it early (`| head`) ends the
 * process quietly, with 2 when lines were rejected.
 */
export const printReport =
  (
    io: CliIo,
    command: CommandName,
    report: string,
    errors: ReadonlyArray<unknown>,
    omitted: number = 0,
  ): T.Task<number> =>
  async () => {
    if (errors.length + omitted > 0) io.statusIfCut?.(EXIT_REJECTED_LINES);
    io.stdout(report);
    return statusAfterReport(io, command, errors, omitted)();
  };

/** JSON output: two-space indented, one trailing newline. */
export const toJson = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;
