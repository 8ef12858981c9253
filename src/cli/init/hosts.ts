/** The agents `fact-tracker init` sets up (a module of its own: the parser needs the names, not the merging). */
export const INIT_HOSTS = ['claude', 'codex'] as const;
/** One of them. */
export type InitHost = (typeof INIT_HOSTS)[number];
