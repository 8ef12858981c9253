/**
 * A bare `fact-tracker hook` process (see `bareHook.ts`), from its streams to its exit status:
 * an entry point of the bundle (`scripts/bundle.ts`), which holds it and everything it imports
 * in one file, so the process that runs on every agent event reads that instead of loading two
 * hundred modules one by one.
 */
import { bareHookOptions, runBareHook } from './bareHook.js';
import { EXIT_OK } from './io.js';
import { createNodeIo, exitOnUncaughtError } from './nodeIo.js';

/**
 * Runs one hook event on the process's streams, given `args` (the command line after `hook`);
 * resolves to its exit status. Undefined, having done nothing, when a bare hook does not take
 * those arguments: the router runs it then.
 */
export const runHookProcess = (args: ReadonlyArray<string> = []): Promise<number> | undefined => {
  const options = bareHookOptions(args);
  if (options === undefined) return undefined;
  // A hook never fails the agent's work, even on a bug of ours.
  exitOnUncaughtError(EXIT_OK);
  return runBareHook(createNodeIo(), options);
};
