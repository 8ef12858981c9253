/**
 * session-fact-tracker/context/node: the shared context's Node shell (files, git, locks).
 */
export { loadContext, updateContext, writeContext } from './store.js';
export type { ContextChange, ContextOptions, ContextPaths, LoadedContext } from './store.js';
