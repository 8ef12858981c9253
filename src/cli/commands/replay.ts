/** `fact-tracker replay FILE`: what each prompt of a history would get, and at what cost. */
import * as TE from 'fp-ts/lib/TaskEither.js';
import { pipe } from 'fp-ts/lib/function.js';
import { replayHistory, type ReplayResult } from '../../history/replay.js';
import type { ReplayCommand } from '../args.js';
import type { CliIo } from '../io.js';
import { renderReplay } from '../render.js';
import { formatSavedState } from '../source.js';
import { createStyle } from '../style.js';
import { exitStatusFor, progressOnStderr, readHistory, tokenCounter, toJson } from './shared.js';

const save = (io: CliIo, file: string | undefined, result: ReplayResult): TE.TaskEither<string, ReplayResult> =>
  file === undefined
    ? TE.right(result)
    : pipe(
        () => io.writeText(file, formatSavedState(result.store)),
        TE.map(() => result),
      );

/** Replays the history, saves the store when asked, and prints the report; resolves to the exit status. */
export const runReplay = (command: ReplayCommand, io: CliIo): TE.TaskEither<string, number> =>
  pipe(
    TE.Do,
    TE.apS('text', readHistory(io, command.file)),
    TE.apS('countTokens', tokenCounter(command.tokenizer)),
    TE.map(({ text, countTokens }) => {
      const progress = progressOnStderr(io);
      const result = replayHistory(text, {
        countTokens,
        ...(command.maxFacts === undefined ? {} : { maxFacts: command.maxFacts }),
        ...(command.maxTokens === undefined ? {} : { maxTokens: command.maxTokens }),
        ...(command.layout === undefined ? {} : { layout: command.layout }),
        ...(command.asOf === undefined ? {} : { asOf: command.asOf }),
        ...(progress.onProgress === undefined ? {} : { onProgress: progress.onProgress }),
      });
      progress.finish();
      return result;
    }),
    TE.chain((result) => save(io, command.save, result)),
    TE.map(({ report }) => {
      io.stdout(command.json ? toJson(report) : `${renderReplay(report, command.tokenizer, createStyle(io.colour))}\n`);
      return exitStatusFor(io, 'replay', report.errors);
    }),
  );
