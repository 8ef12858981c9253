/** `fact-tracker explain FILE --line N`: every fact's score and decision for one prompt. */
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { pipe } from 'fp-ts/lib/function.js';
import { parseHistory } from '../../history/events.js';
import { explainPromptAt, replayHistory, type ReplayResult } from '../../history/replay.js';
import type { ExplainCommand } from '../args.js';
import type { CliIo } from '../io.js';
import { type ExplainView, renderExplain } from '../render.js';
import { createStyle } from '../style.js';
import { exitStatusFor, progressOnStderr, readHistory, tokenCounter, toJson } from './shared.js';

/** Why line N has nothing to explain, in words. */
const notAPrompt = (text: string, command: ExplainCommand): string => {
  const { events, errors } = parseHistory(text);
  const where = `${command.file}:${command.line}`;
  const bad = errors.find((error) => error.line === command.line);
  if (bad !== undefined) return `${where} is not a valid event (${bad.code}: ${bad.message})`;
  const event = events.find((candidate) => candidate.line === command.line);
  if (event !== undefined) return `${where} is a ${event.type} event; explain needs the line of a prompt event`;
  return `${where} holds no event (blank or past the end of the file)`;
};

const viewOf = (text: string, command: ExplainCommand, result: ReplayResult): E.Either<string, ExplainView> => {
  const retrieval = result.retrievals.find((entry) => entry.line === command.line);
  const decisions = explainPromptAt(result, command.line);
  return retrieval === undefined || O.isNone(decisions)
    ? E.left(notAPrompt(text, command))
    : E.right({
        line: retrieval.line,
        taskPrompt: retrieval.taskPrompt,
        query: retrieval.query,
        decisions: decisions.value,
        errors: result.report.errors,
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
  errors: view.errors,
});

/** Replays up to the prompt on `--line` and prints its retrieval, fact by fact; resolves to the exit status. */
export const runExplain = (command: ExplainCommand, io: CliIo): TE.TaskEither<string, number> =>
  pipe(
    TE.Do,
    TE.apS('text', readHistory(io, command.file)),
    TE.apS('countTokens', tokenCounter(command.tokenizer)),
    TE.chainEitherK(({ text, countTokens }) => {
      const progress = progressOnStderr(io);
      const result = replayHistory(text, {
        countTokens,
        untilLine: command.line,
        keepRetrievals: true,
        ...(command.maxFacts === undefined ? {} : { maxFacts: command.maxFacts }),
        ...(command.maxTokens === undefined ? {} : { maxTokens: command.maxTokens }),
        ...(command.layout === undefined ? {} : { layout: command.layout }),
        ...(progress.onProgress === undefined ? {} : { onProgress: progress.onProgress }),
      });
      progress.finish();
      return viewOf(text, command, result);
    }),
    TE.map((view) => {
      io.stdout(command.json ? toJson(toJsonView(view)) : `${renderExplain(view, createStyle(io.colour))}\n`);
      return exitStatusFor(io, 'explain', view.errors);
    }),
  );
