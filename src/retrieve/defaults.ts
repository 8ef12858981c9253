/** The section's defaults, in a module of their own so that the command line's help can quote them cheaply. */

/** Facts a `[Session Context]` section holds at most, by default. */
export const DEFAULT_MAX_FACTS = 10;
/** The token budget of a `[Session Context]` section, header included, by default. */
export const DEFAULT_MAX_TOKENS = 500;
