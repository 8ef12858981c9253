/** `fact-tracker replay FILE`: what each prompt of a history would get, and at what cost. */
import * as E from 'fp-ts/lib/Either.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { pipe } from 'fp-ts/lib/function.js';
import { parseJson } from '../../base/json.js';
import { isRecord } from '../../base/record.js';
import type { HistoryLine } from '../../core/history/lines.js';
import type { ReplayError, ReplayResult } from '../../core/replay/replay.js';
import { selectRecordedPrompts } from '../../core/store/write.js';
import { encodeState } from '../../saved/savedState.js';
import type { ReplayCommand } from '../command.js';
import { type CliIo, EXIT_REJECTED_LINES } from '../io.js';
import { jsonReplayOutput, type ReplayOutput, textReplayOutput } from '../replayOutput.js';
import { saveSection } from '../saveSection.js';
import { createStyle } from '../style.js';
import { DEFAULT_TOKENIZER } from '../../tokens/names.js';
import { openHistory, progressOnStderr, replaySource } from './history.js';
import { replayCounting } from './recordedTokenizers.js';
import { statusAfterReport } from './shared.js';

/** The codes of a dispatch the transition rejects (`invalid_input` is also a prompt's whose task no record can hold). */
const REJECTED_RESULT_CODES: ReadonlyArray<string> = [
  'marker_missing',
  'json_parse_failed',
  'schema_invalid',
  'invalid_input',
];

/**
 * True when `error`, a line the replay rejected, is a dispatch's result: `invalid_input` is also
 * a prompt's whose task id is refused, which only the line's text (in `batch`, the lines being
 * replayed) tells apart. Such a line is an event, so it is JSON; it is read only then.
 */
const isRejectedResult = (error: ReplayError, batch: ReadonlyArray<HistoryLine>): boolean => {
  if (!REJECTED_RESULT_CODES.includes(error.code)) return false;
  if (error.code !== 'invalid_input') return true;
  const text = batch.find(({ line }) => line === error.line)?.text;
  const value = text === undefined ? undefined : E.getOrElseW(() => undefined)(parseJson(text));
  return isRecord(value) && value['type'] === 'dispatch';
};

/**
 * Why nothing of the history would be saved, or undefined when it leaves a store worth saving.
 * A history of rejected lines only (a file given by mistake, results without their markers), of
 * no line at all (nothing piped into -, a blank file), or of events that store nothing (a compact,
 * an invalidate) leaves an empty store, which would be saved over the state there. A store whose
 * facts a compaction removed is not empty while it keeps the files their tasks changed or the
 * times their pairs were closed, which its saved state holds.
 */
const nothingToSave = (
  { report, store }: ReplayResult,
  asOf: number | undefined,
  rejectedResults: number,
): string | undefined => {
  const { summary, errors } = report;
  if (summary.events === 0)
    return errors.length > 0
      ? 'no line of the history could be applied'
      : asOf === undefined
        ? 'the history holds no line'
        : 'the history holds no event up to --as-of';
  // A prompt of blank text is counted but never recorded: the store decides.
  if (summary.allFacts > 0 || selectRecordedPrompts(store).length > 0) return undefined;
  // No fact left: the store is small, and its saved state says what else it keeps.
  const { files, tombstones } = encodeState(store);
  if (files !== undefined || tombstones !== undefined) return undefined;
  if (summary.dispatches === 0) return 'the history records no fact and no prompt';
  // At most this many results were rejected: fewer than the dispatches, and a compaction removed what one added.
  const rejected = rejectedResults + (report.errorsOmitted ?? 0);
  return rejected < summary.dispatches
    ? 'the history records no fact and no prompt (a compaction removed the facts the results added)'
    : 'the history records no fact and no prompt (the contract rejected every dispatch result)';
};

/** Saves the store into FILE, unless the history leaves nothing to save (`nothingToSave`). */
const save = (
  io: CliIo,
  command: ReplayCommand,
  result: ReplayResult,
  rejectedResults: number,
): TE.TaskEither<string, ReplayResult> => {
  if (command.save === undefined) return TE.right(result);
  const nothing = nothingToSave(result, command.asOf, rejectedResults);
  return nothing !== undefined
    ? TE.left(`nothing saved into ${command.save}: ${nothing}`)
    : pipe(
        saveSection(io, command.save, { kind: 'facts', store: result.store }),
        TE.map(() => result),
      );
};

/**
 * Replays the history as it is read, printing each prompt as it comes, prints the end of the
 * report, and saves the store when asked; resolves to the exit status.
 */
export const runReplay = (command: ReplayCommand, io: CliIo): TE.TaskEither<string, number> => {
  // The save is what was asked for, whoever reads the report: `replay h --save s | head` saves too.
  if (command.save !== undefined) io.outliveReader?.();
  // The lines being replayed, and the results rejected among them, for the reason a save gives.
  let batch: ReadonlyArray<HistoryLine> = [];
  let rejectedResults = 0;
  return pipe(
    TE.Do,
    TE.apS('counting', () => replayCounting(command.tokenizer)),
    // Opened once the token counter is there (`bind` waits; `apS` would run both at once): an open
    // source is closed only by the replay that reads it, so nothing may fail between the two.
    TE.bind('source', () => openHistory(io, command.input)),
    // The report is written as the replay goes: on a terminal, it takes the line the progress is on.
    TE.bind('progress', () => TE.right(progressOnStderr(io))),
    TE.bind('output', ({ progress }) =>
      TE.right<string, ReplayOutput>(
        command.json
          ? jsonReplayOutput(progress.beforeOutput(io.stdout))
          : // Without --tokenizer, the report's counts are the estimate's, whatever budgeted each section.
            textReplayOutput(
              progress.beforeOutput(io.stdout),
              command.tokenizer ?? DEFAULT_TOKENIZER,
              createStyle(io.colour),
            ),
      ),
    ),
    TE.bind('result', ({ source, counting, output, progress }) =>
      replaySource(
        io,
        source,
        {
          ...counting.options,
          onPrompt: output.prompt,
          onError: (error) => {
            // A reader that closes the report early (`| head`) still learns that lines were rejected.
            io.statusIfCut?.(EXIT_REJECTED_LINES);
            if (isRejectedResult(error, batch)) rejectedResults += 1;
            output.error(error);
          },
          ...(command.maxFacts === undefined ? {} : { maxFacts: command.maxFacts }),
          ...(command.maxTokens === undefined ? {} : { maxTokens: command.maxTokens }),
          ...(command.layout === undefined ? {} : { layout: command.layout }),
          ...(command.asOf === undefined ? {} : { asOf: command.asOf }),
        },
        {
          beforeBatch: (lines) => {
            batch = lines;
            return counting.beforeBatch?.(lines) ?? Promise.resolve(E.right(undefined));
          },
          afterBatch: async () => {
            // What the batch produced is written, and the next batch waits until the output takes
            // it: a report read slowly (`replay --json | jq`) is never queued whole in memory.
            output.flush();
            await io.drain?.();
          },
          progress,
        },
      ),
    ),
    // The report is ended before the save: its prompts are already out, and a save refused or
    // failed must not leave half a report (with --json, half a document) on standard output.
    TE.chainFirst(({ result, output }) => TE.fromIO(() => output.end(result.report))),
    TE.chain(({ result }) => save(io, command, result, rejectedResults)),
    // The end of the report (the facts table, the JSON document's tail) is taken before the
    // rejected lines are said on stderr: a reader that closes it early ends the process quietly.
    TE.chain(({ report }) => TE.fromTask(statusAfterReport(io, 'replay', report.errors, report.errorsOmitted))),
  );
};
