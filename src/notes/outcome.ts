/**
 * What one model call came to, as data: the text, or why there is none. The port produces it,
 * the events record its failures; it sits apart so that neither has to import the other.
 */
import type * as E from 'fp-ts/lib/Either.js';

/** Why a model call produced no list: no answer in time, a failed call, or an unusable answer. */
export type ModelFailureReason = 'timeout' | 'model_error' | 'invalid_response';

/** A model call that produced no list. */
export interface ModelFailure {
  readonly reason: ModelFailureReason;
  readonly message: string;
}

/** The outcome of one model call: its text, or why there is none. */
export type ModelOutcome = E.Either<ModelFailure, string>;
