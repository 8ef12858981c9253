#!/usr/bin/env node
/** The `fact-tracker` binary: the real process and streams, handed to the command router. */
import { createNodeIo } from './nodeIo.js';
import { run } from './run.js';

process.exitCode = await run(process.argv.slice(2), createNodeIo());
