/**
 * session-fact-tracker/context/node: the shared context's Node shell (files, git, locks).
 */
export { resolveContext, updateContext, writeContext } from './edit.js';
export { moveContext } from './move.js';
export type { ContextChange } from './edit.js';
export { loadContext } from './load.js';
export type { ConflictReport, LoadedContext } from './load.js';
export type { ContextOptions, ContextPaths } from './scope.js';
