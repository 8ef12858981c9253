/** Calling the context shell in tests: its options, and unwrapping a call that must succeed, or must fail. */
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import type { ContextError } from '../../src/context/model.js';
import type { ContextOptions, LoadedContext } from '../../src/context/node/index.js';

/** The loaded context of a call that must succeed with the feature on. */
export const loadedOf = (result: E.Either<ContextError, O.Option<LoadedContext>>): LoadedContext => {
  if (E.isLeft(result)) throw new Error(`expected a context, got ${result.left.code}: ${result.left.message}`);
  if (O.isNone(result.right)) throw new Error('expected a context, got none (flag off)');
  return result.right.value;
};

/** The error of a call that must fail. */
export const errorOf = (result: E.Either<ContextError, unknown>): ContextError => {
  if (E.isRight(result)) throw new Error('expected an error');
  return result.left;
};

/** The options of a planning context in `cwd` with the feature on and the clock stopped at `now`. */
export const planningAt = (cwd: string, now: number, extra: Partial<ContextOptions> = {}): ContextOptions => ({
  kind: 'planning',
  cwd,
  enabled: true,
  now: () => now,
  ...extra,
});
