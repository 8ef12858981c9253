/**
 * `fact-tracker hook` without options, as agents run it on every event: the hook command alone,
 * without the router's parser and option tables (and the shared-context modules they load).
 * With any option the router handles it, as every other command.
 */
import * as E from 'fp-ts/lib/Either.js';
import { runHookCommand } from './commands/hook.js';
import { uncaughtLine } from './boundary.js';
import { type CliIo, EXIT_OK } from './io.js';

/**
 * Runs one hook event with the default options; resolves to exit status 0. `runHookCommand`
 * is the boundary that turns a bug into a `systemMessage`; past it, one line, and the agent
 * carries on.
 */
export const runBareHook = async (io: CliIo): Promise<number> => {
  try {
    const outcome = await runHookCommand({ name: 'hook', tokenizer: 'estimate' }, io)();
    return E.isRight(outcome) ? outcome.right : EXIT_OK;
  } catch (error) {
    // As the router says it: one line, and the agent carries on.
    io.stderr(uncaughtLine(error));
    return EXIT_OK;
  }
};
