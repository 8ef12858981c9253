/**
 * `fact-tracker hook`: one hook event of Claude Code or Codex on standard input. It always
 * exits 0 and prints at most one JSON object: a memory tool must never block the agent.
 */
import * as E from 'fp-ts/lib/Either.js';
import type * as TE from 'fp-ts/lib/TaskEither.js';
import { collapseWhitespace } from '../../base/text.js';
import { type HookOutcome, hookOutput, runHook } from '../../live/hook/hook.js';
import { LIMIT_CODES, MAX_MESSAGE_BYTES } from '../../live/session/limits.js';
import type { HookCommand } from '../command.js';
import { type CliIo, EXIT_OK } from '../io.js';
import { loadTokenCounter } from '../tokenizer.js';

const problem = (message: string): HookOutcome => ({ messages: [message], notices: [message] });

const outcomeFor = async (command: HookCommand, io: CliIo): Promise<HookOutcome> => {
  const [payload, countTokens] = await Promise.all([
    io.readText('-', MAX_MESSAGE_BYTES),
    loadTokenCounter(command.tokenizer),
  ]);
  if (E.isLeft(payload))
    return problem(
      /larger than/u.test(payload.left)
        ? `${LIMIT_CODES.input}: the hook payload on standard input is larger than ${MAX_MESSAGE_BYTES} bytes; it was not read`
        : `io: ${payload.left}`,
    );
  if (E.isLeft(countTokens)) return problem(`invalid_option: ${countTokens.left}`);
  const projectDir = io.env?.['CLAUDE_PROJECT_DIR'];
  return runHook(payload.right, {
    cwd: io.cwd ?? '.',
    countTokens: countTokens.right,
    ...(projectDir === undefined || projectDir === '' ? {} : { projectDir }),
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
    const output = hookOutput(outcome);
    if (output !== undefined) io.stdout(`${JSON.stringify(output)}\n`);
    for (const message of outcome.messages) io.stderr(`fact-tracker hook: ${collapseWhitespace(message)}\n`);
    return E.right(EXIT_OK);
  };
