/**
 * session-fact-tracker/context/node: the shared context's Node shell (files, git, locks).
 */
export { moveContext, resolveContext, updateContext, writeContext } from './edit.js';
export type { ContextChange } from './edit.js';
export { loadContext } from './load.js';
export type { ConflictReport, LoadedContext } from './load.js';
export type { ContextOptions, ContextPaths } from './scope.js';
