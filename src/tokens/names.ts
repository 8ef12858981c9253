/**
 * The names of the token counters the package ships: what `--tokenizer` chooses from, and what
 * a live session's prompt line records (`tokenizer`) when its counter is a named one. Names
 * only: the counters themselves are loaded where they are needed (`load.ts`), so the pure layers
 * that read a name never reach the o200k tables.
 */

/** The tokenizer names, the default first. */
export const TOKENIZER_NAMES = Object.freeze(['estimate', 'o200k'] as const);
/** A tokenizer name. */
export type TokenizerName = (typeof TOKENIZER_NAMES)[number];

/** The default tokenizer: ceil(characters / 4), never recorded in a prompt's line. */
export const DEFAULT_TOKENIZER: TokenizerName = 'estimate';

/** True for the name of a tokenizer the package ships. */
export const isTokenizerName = (value: unknown): value is TokenizerName =>
  (TOKENIZER_NAMES as ReadonlyArray<unknown>).includes(value);
