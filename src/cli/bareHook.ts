/**
 * `fact-tracker hook` without options, as agents run it on every event: the hook command alone,
 * without the router's parser and option tables (and the shared-context modules they load).
 * With any option the router handles it, as every other command.
 */
import * as E from 'fp-ts/lib/Either.js';
import { runHookCommand } from './commands/hook.js';
import { type CliIo, EXIT_OK } from './io.js';

/**
 * Runs one hook event with the default options; resolves to exit status 0. `runHookCommand`
 * is the boundary that turns a bug into a `systemMessage`; it fails only where it cannot print.
 */
export const runBareHook = async (io: CliIo): Promise<number> => {
  const outcome = await runHookCommand({ name: 'hook', tokenizer: 'estimate' }, io)();
  return E.isRight(outcome) ? outcome.right : EXIT_OK;
};
