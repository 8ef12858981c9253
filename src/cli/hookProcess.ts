/**
 * A `fact-tracker hook` process without options, from its streams to its exit status: an entry
 * point of the bundle (`scripts/bundle.ts`), which holds it and everything it imports in a few
 * files, so the process that runs on every agent event reads those instead of loading two
 * hundred modules one by one.
 */
import { runBareHook } from './bareHook.js';
import { EXIT_OK } from './io.js';
import { createNodeIo, exitOnUncaughtError } from './nodeIo.js';

/** Runs one hook event on the process's streams; resolves to its exit status. */
export const runHookProcess = (): Promise<number> => {
  // A hook never fails the agent's work, even on a bug of ours.
  exitOnUncaughtError(EXIT_OK);
  return runBareHook(createNodeIo());
};
