/**
 * `fact-tracker hook`: one hook event of Claude Code or Codex on standard input. It always
 * exits 0 and prints at most one JSON object: a memory tool must never block the agent.
 */
import * as E from 'fp-ts/lib/Either.js';
import type * as TE from 'fp-ts/lib/TaskEither.js';
import { type Failure, failure, internalFailure } from '../../base/failure.js';
import { collapseWhitespace } from '../../base/text.js';
import { alert, type HookOutcome, hookOutput, runHook } from '../../live/hook/hook.js';
import { LIMIT_CODES, MAX_MESSAGE_BYTES } from '../../live/session/limits.js';
import { unusableSessionStore } from '../../live/session/unusableStore.js';
import type { HookCommand } from '../command.js';
import { type CliIo, EXIT_OK } from '../io.js';
import { chooseStore, openPostgresStore, STORE_VARIABLE } from '../store.js';
import { loadTokenCounter } from '../../tokens/load.js';
import { DEFAULT_TOKENIZER } from '../../tokens/names.js';

const outcomeFor = async (command: HookCommand, io: CliIo): Promise<HookOutcome> => {
  // Run by hand at a terminal, it would wait for a JSON event nobody types.
  if (io.stdinIsTty === true)
    return alert(
      failure(
        'io',
        'standard input is a terminal: the hook reads one event as JSON on standard input, as Claude Code and Codex give it (see fact-tracker init to install it)',
      ),
    );
  const [payload, countTokens] = await Promise.all([
    io.readText('-', MAX_MESSAGE_BYTES),
    loadTokenCounter(command.tokenizer ?? DEFAULT_TOKENIZER),
  ]);
  if (E.isLeft(payload))
    return alert(
      /larger than/u.test(payload.left)
        ? failure(
            LIMIT_CODES.input,
            `the hook payload on standard input is larger than ${MAX_MESSAGE_BYTES} bytes; it was not read`,
          )
        : failure('io', payload.left),
    );
  if (E.isLeft(countTokens)) return alert(failure('invalid_option', countTokens.left));
  const choice = chooseStore(command, io.env);
  // A folder is relative to the project, found per event; a database is opened (never connected)
  // here. A store that cannot be used is said when an event needs its session, not on every event.
  const store = E.isLeft(choice)
    ? unusableSessionStore(choice.left, STORE_VARIABLE)
    : choice.right.kind === 'postgres'
      ? E.getOrElse((error: Failure<'io'>) => unusableSessionStore(error, 'PostgreSQL'))(
          await openPostgresStore(choice.right.address),
        )
      : undefined;
  const directory = E.isRight(choice) && choice.right.kind === 'folder' ? choice.right.directory : undefined;
  const projectDir = io.env?.['CLAUDE_PROJECT_DIR'];
  try {
    return await runHook(payload.right, {
      ...(io.cwd === undefined ? {} : { cwd: io.cwd }),
      countTokens: countTokens.right,
      ...(command.tokenizer === undefined ? {} : { tokenizer: command.tokenizer }),
      ...(projectDir === undefined || projectDir === '' ? {} : { projectDir }),
      ...(directory === undefined ? {} : { directory }),
      ...(store === undefined ? {} : { store }),
      ...(command.reviewerPattern === undefined ? {} : { reviewerPattern: command.reviewerPattern }),
      ...(command.maxFacts === undefined ? {} : { maxFacts: command.maxFacts }),
      ...(command.maxTokens === undefined ? {} : { maxTokens: command.maxTokens }),
      ...(command.layout === undefined ? {} : { layout: command.layout }),
    });
  } finally {
    await store?.close();
  }
};

/**
 * Runs the event; whatever happens, resolves to exit status 0. The hook's outermost boundary:
 * an exception here is a bug, told to the user as code `internal` in the `systemMessage`.
 */
export const runHookCommand =
  (command: HookCommand, io: CliIo): TE.TaskEither<string, number> =>
  async () => {
    const run = await outcomeFor(command, io).catch((error: unknown) => alert(internalFailure(error)));
    // Its output written as JSON is part of the boundary: one JSON cannot write is a bug told as such.
    let outcome = run;
    let text: string | undefined;
    try {
      const output = hookOutput(run);
      text = output === undefined ? undefined : JSON.stringify(output);
    } catch (error) {
      outcome = alert(internalFailure(error));
      text = JSON.stringify(hookOutput(outcome));
    }
    if (text !== undefined) io.stdout(`${text}\n`);
    for (const message of outcome.messages) io.stderr(`fact-tracker hook: ${collapseWhitespace(message)}\n`);
    return E.right(EXIT_OK);
  };
