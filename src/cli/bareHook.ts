/**
 * `fact-tracker hook` as agents run it on every event: the hook command alone, without the
 * router's parser and option tables (and the shared-context modules they load), given no
 * option or the layout alone (as `fact-tracker init --layout` writes it). With any other option
 * the router handles it, as every other command.
 */
import * as E from 'fp-ts/lib/Either.js';
import { isSectionLayout, type SectionLayout } from '../core/fact.js';
import { bareHookArgs } from './bareHookArgs.js';
import { runHookCommand } from './commands/hook.js';
import { uncaughtLine } from './boundary.js';
import { type CliIo, EXIT_OK } from './io.js';

/** What a bare hook is given: nothing, or the layout of its sections. */
export interface BareHookOptions {
  readonly layout?: SectionLayout;
}

/**
 * The options of `fact-tracker hook ARGS` when a bare hook can run them: no argument, or
 * `--layout lines|grouped` (or `--layout=...`). Undefined for anything else, which the router
 * parses (and refuses with a usage message when it is wrong).
 */
export const bareHookOptions = (args: ReadonlyArray<string>): BareHookOptions | undefined => {
  const read = bareHookArgs(args);
  if (read === undefined) return undefined;
  if (read.layout === undefined) return {};
  return isSectionLayout(read.layout) ? { layout: read.layout } : undefined;
};

/**
 * Runs one hook event with the default options but the layout; resolves to exit status 0.
 * `runHookCommand` is the boundary that turns a bug into a `systemMessage`; past it, one line,
 * and the agent carries on.
 */
export const runBareHook = async (io: CliIo, options: BareHookOptions = {}): Promise<number> => {
  try {
    const outcome = await runHookCommand({ name: 'hook', tokenizer: 'estimate', ...options }, io)();
    return E.isRight(outcome) ? outcome.right : EXIT_OK;
  } catch (error) {
    // As the router says it: one line, and the agent carries on.
    io.stderr(uncaughtLine(error));
    return EXIT_OK;
  }
};
