/**
 * A `fact-tracker` process running any command line but a bare `hook`, from its arguments to
 * its exit status: the other entry point of the bundle (`scripts/bundle.ts`).
 */
import { createNodeIo } from './nodeIo.js';
import { run } from './run.js';

/** Runs the command line `argv` (without the node and script paths) on the process's streams; resolves to its exit status. */
export const runCommandProcess = (argv: ReadonlyArray<string>): Promise<number> => run(argv, createNodeIo());
