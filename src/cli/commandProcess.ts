/**
 * A `fact-tracker` process running any command line but a bare `hook`, from its arguments to
 * its exit status: the other entry point of the bundle (`scripts/bundle.ts`).
 */
import { EXIT_FAILURE, EXIT_OK } from './io.js';
import { createNodeIo, exitOnUncaughtError } from './nodeIo.js';
import { run } from './run.js';

/** Runs the command line `argv` (without the node and script paths) on the process's streams; resolves to its exit status. */
export const runCommandProcess = (argv: ReadonlyArray<string>): Promise<number> => {
  // As the router does: a hook exits 0 even on a bug of ours, so the agent carries on.
  exitOnUncaughtError(argv[0] === 'hook' ? EXIT_OK : EXIT_FAILURE);
  return run(argv, createNodeIo());
};
