#!/usr/bin/env node
/**
 * The `fact-tracker` binary: the real process and streams, handed to the command router. A hook
 * runs on every agent event, so `hook` alone skips the router and loads only what a hook needs.
 */
import { createNodeIo } from './nodeIo.js';

const argv = process.argv.slice(2);
process.exitCode =
  argv.length === 1 && argv[0] === 'hook'
    ? await (await import('./bareHook.js')).runBareHook(createNodeIo())
    : await (await import('./run.js')).run(argv, createNodeIo());
