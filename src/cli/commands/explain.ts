/** `fact-tracker explain FILE --line N`: every fact's score and decision for one prompt. */
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { pipe } from 'fp-ts/lib/function.js';
import { redactSecrets } from '../../base/secrets.js';
import { isBlankLine, parseHistoryLine } from '../../core/history/events.js';
import type { HistoryLine } from '../../core/history/lines.js';
import { explainPromptAt, type ReplayResult } from '../../core/replay/replay.js';
import { withoutSessionContext } from '../../core/search/sectionLines.js';
import type { ExplainCommand } from '../command.js';
import type { CliIo } from '../io.js';
import { type ExplainView, renderExplain } from '../render.js';
import { createStyle } from '../style.js';
import { type HistorySource, isStandardInput, labelOf, openHistory, replaySource } from './history.js';
import { replayCounting } from './recordedTokenizers.js';
import { printReport, toJson } from './shared.js';

/**
 * Why line N has nothing to explain, in words, from its text (undefined when the file ends before
 * it) and the replay's rejection of it (a prompt whose task id no record can hold).
 */
const notAPrompt = (command: ExplainCommand, text: string | undefined, result: ReplayResult): string => {
  const stdin = isStandardInput(command.input);
  const where = stdin ? `line ${command.line} of standard input` : `${labelOf(command.input)}:${command.line}`;
  if (text === undefined || isBlankLine(text))
    return `${where} holds no event (blank or past the end of the ${stdin ? 'input' : 'file'})`;
  const parsed = parseHistoryLine(text, command.line, undefined);
  if (E.isLeft(parsed)) return `${where} is not a valid event (${parsed.left.code}: ${parsed.left.message})`;
  const rejected = result.report.errors.find((error) => error.line === command.line);
  if (parsed.right.type === 'prompt' && rejected !== undefined)
    return `${where} was rejected (${rejected.code}: ${rejected.message})`;
  return `${where} is ${/^[aeiou]/u.test(parsed.right.type) ? 'an' : 'a'} ${parsed.right.type} event; explain needs the line of a prompt event`;
};

/** The source, noting the text of line `line` as it goes by. */
const watchingLine = (source: HistorySource, line: number, seen: (text: string) => void): HistorySource => ({
  ...source,
  batches: (async function* (): AsyncGenerator<HistoryLine[]> {
    for await (const batch of source.batches) {
      const found = batch.find((entry) => entry.line === line);
      if (found !== undefined) seen(found.text);
      yield batch;
    }
  })(),
});

const viewOf = (
  command: ExplainCommand,
  result: ReplayResult,
  text: string | undefined,
): E.Either<string, ExplainView> => {
  const retrieval = result.retrievals.find((entry) => entry.line === command.line);
  const decisions = explainPromptAt(result, command.line);
  const { errors, errorsOmitted } = result.report;
  return retrieval === undefined || O.isNone(decisions)
    ? E.left(notAPrompt(command, text, result))
    : E.right({
        line: retrieval.line,
        // As the store keeps it and the ranking read it: a token pasted into a prompt is no word to
        // show, and a section it carries from an earlier prompt is other tasks' facts, not its words.
        taskPrompt: redactSecrets(withoutSessionContext(retrieval.taskPrompt)),
        query: retrieval.query,
        decisions: decisions.value,
        rejected: errorsOmitted === undefined ? { errors } : { errors, errorsOmitted },
      });
};

const toJsonView = (view: ExplainView): unknown => ({
  line: view.line,
  taskId: view.query.taskId,
  taskPrompt: view.taskPrompt,
  ...(view.query.tags === undefined ? {} : { tags: view.query.tags }),
  maxFacts: view.query.maxFacts,
  maxTokens: view.query.maxTokens,
  // Everything a decision carries (score, decision, reason, score parts), with the fact last for reading.
  decisions: view.decisions.map(({ fact, ...decision }) => ({ ...decision, fact })),
  ...view.rejected,
});

/** Replays up to the prompt on `--line` (reading no further) and prints its retrieval, fact by fact; resolves to the exit status. */
export const runExplain = (command: ExplainCommand, io: CliIo): TE.TaskEither<string, number> => {
  let lineText: string | undefined;
  return pipe(
    TE.Do,
    TE.apS('counting', () => replayCounting(command.tokenizer)),
    // Opened once the token counter is there (`bind` waits; `apS` would run both at once): an open
    // source is closed only by the replay that reads it, so nothing may fail between the two.
    TE.bind('source', () => openHistory(io, command.input)),
    TE.chain(({ source, counting }) =>
      replaySource(
        io,
        watchingLine(source, command.line, (text) => (lineText = text)),
        {
          ...counting.options,
          untilLine: command.line,
          keepRetrievals: command.line,
          // The prompts before the line are not shown: none is kept.
          onPrompt: () => undefined,
          ...(command.maxFacts === undefined ? {} : { maxFacts: command.maxFacts }),
          ...(command.maxTokens === undefined ? {} : { maxTokens: command.maxTokens }),
          ...(command.layout === undefined ? {} : { layout: command.layout }),
        },
        { beforeBatch: counting.beforeBatch },
      ),
    ),
    TE.chainEitherK((result) => viewOf(command, result, lineText)),
    TE.chain((view) =>
      TE.fromTask(
        printReport(
          io,
          'explain',
          command.json ? toJson(toJsonView(view)) : `${renderExplain(view, createStyle(io.colour))}\n`,
          view.rejected.errors,
          view.rejected.errorsOmitted,
        ),
      ),
    ),
  );
};
