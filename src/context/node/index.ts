/**
 * session-fact-tracker/context/node: the shared context's Node shell (files, git, locks).
 */
export { loadContext, moveContext, resolveContext, updateContext, writeContext } from './store.js';
export type { ConflictReport, ContextChange, ContextOptions, ContextPaths, LoadedContext } from './store.js';
