/**
 * `fact-tracker hook`: one hook event of Claude Code or Codex on standard input. It always
 * exits 0 and prints at most one JSON object: a memory tool must never block the agent.
 */
import * as E from 'fp-ts/lib/Either.js';
import type * as TE from 'fp-ts/lib/TaskEither.js';
import { collapseWhitespace } from '../../base/text.js';
import { type HookOutcome, runHook } from '../../hook/hook.js';
import type { HookCommand } from '../args.js';
import { type CliIo, EXIT_OK } from '../io.js';
import { loadTokenCounter } from '../tokenizer.js';

const outcomeFor = async (command: HookCommand, io: CliIo): Promise<HookOutcome> => {
  const [payload, countTokens] = await Promise.all([io.readText('-'), loadTokenCounter(command.tokenizer)]);
  if (E.isLeft(payload)) return { messages: [payload.left] };
  if (E.isLeft(countTokens)) return { messages: [countTokens.left] };
  return runHook(payload.right, {
    cwd: io.cwd ?? '.',
    countTokens: countTokens.right,
    ...(command.sessionsDir === undefined ? {} : { directory: command.sessionsDir }),
    ...(command.reviewerPattern === undefined ? {} : { reviewerPattern: command.reviewerPattern }),
    ...(command.maxFacts === undefined ? {} : { maxFacts: command.maxFacts }),
    ...(command.maxTokens === undefined ? {} : { maxTokens: command.maxTokens }),
  });
};

/** Runs the event; whatever happens, resolves to exit status 0. */
export const runHookCommand =
  (command: HookCommand, io: CliIo): TE.TaskEither<string, number> =>
  async () => {
    const outcome = await outcomeFor(command, io);
    if (outcome.output !== undefined) io.stdout(`${JSON.stringify(outcome.output)}\n`);
    for (const message of outcome.messages) io.stderr(`fact-tracker hook: ${collapseWhitespace(message)}\n`);
    return E.right(EXIT_OK);
  };
