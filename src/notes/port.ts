/**
 * The model port: the one call the ledger needs from a language model. The shell passes every
 * answer through `settleExtraction` or `settleProfileRewrite`, and the log replay does the
 * same with recorded answers, so a live run and its replay record the very same events.
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { refuseArgument } from '../base/describe.js';
import { redactedClipEnd } from '../base/secrets.js';
import { failure } from '../base/failure.js';
import { type CategorizedFact, type ModelFailure, NOTES_LIMITS, type NotesEvent } from './model.js';
import { type NotableFactsResponse, parseNotableFactsResponseWithWarnings } from './parse.js';

/** What the shell passes to `complete`: abort when the signal fires (the shell's timeout). */
export interface CompleteOptions {
  readonly signal: AbortSignal;
}

/**
 * The user's model call: the prompt in, the model's text out. It may reject; the shell records
 * why (`model_error`), or as `truncated` when it rejects with an error whose `code` is
 * `'truncated'` (the answer stopped at its token limit, as `anthropicComplete` reports it).
 */
export type CompleteFn = (prompt: string, options: CompleteOptions) => Promise<string>;

/** Why a model call produced no list (no answer in time, a failed call, an unusable answer), and the failure itself. */
export type { ModelFailure, ModelFailureCode } from './model.js';

/** The outcome of one model call: its text, or why there is none. */
export type ModelOutcome = E.Either<ModelFailure, string>;

/** Which user's list in which session an extraction was for. */
export interface NotesSlot {
  readonly user: string;
  readonly session: string;
}

const parsed = (
  outcome: ModelOutcome,
  categories: ReadonlyArray<string>,
  maxFacts: number,
  previous: ReadonlyArray<CategorizedFact> = [],
): E.Either<ModelFailure, NotableFactsResponse> =>
  pipe(
    outcome,
    E.chain((text) =>
      pipe(
        parseNotableFactsResponseWithWarnings(text, { categories, maxFacts, previous }),
        // A cut answer is a failure of its own: a larger answer budget helps, a better prompt does not.
        E.mapLeft((error): ModelFailure =>
          error.code === 'truncated'
            ? failure('truncated', error.message)
            : failure('invalid_response', `${error.code}: ${error.message}`),
        ),
      ),
    ),
  );

/** What an extraction's event may say besides its outcome: the list it updated, and when its messages were told. */
export interface ExtractionContext {
  /** The list the extraction updated: past the cap, the facts it carried over go first. */
  readonly previous?: ReadonlyArray<CategorizedFact>;
  /** Epoch milliseconds of the latest user message the extraction covered. */
  readonly messagesAt?: number;
}

/** At most 20 warnings and a line counting the rest: an answer of 30,000 bad entries must not make a 1 MB event. */
const warningsField = (warnings: ReadonlyArray<string>): { warnings?: ReadonlyArray<string> } => {
  const over = warnings.length - NOTES_LIMITS.warnings;
  if (warnings.length === 0) return {};
  return over <= 0
    ? { warnings }
    : {
        warnings: [
          ...warnings.slice(0, NOTES_LIMITS.warnings),
          `and ${over} more ${over === 1 ? 'warning' : 'warnings'}`,
        ],
      };
};

/**
 * The failure as an event keeps it: its message clipped (a recorded error may be any size) and
 * its secrets redacted, before the clip and of what the clip makes, as a fact's are: a model
 * client may quote the request it failed on (a key in its URL or header, a prompt holding a
 * token the user pasted).
 */
const bounded = ({ code, message }: ModelFailure): ModelFailure =>
  failure(code, redactedClipEnd(message, NOTES_LIMITS.messageLength));

/** `outcome`, refused with a TypeError when it is no Either (null from an unset variable). */
const checkedOutcome = (outcome: ModelOutcome): ModelOutcome =>
  typeof outcome === 'object' && outcome !== null
    ? outcome
    : refuseArgument('the outcome', outcome, "an Either of the model's text or a failure");

/**
 * The event an extraction's outcome records: the parsed list, or the failure (which keeps the
 * list). A slot or an outcome that is none is refused with a TypeError.
 */
export const settleExtraction = (
  slot: NotesSlot,
  outcome: ModelOutcome,
  at: number,
  categories: ReadonlyArray<string>,
  context: ExtractionContext = {},
): NotesEvent => {
  if (typeof slot !== 'object' || slot === null) refuseArgument('the slot', slot, 'an object ({ user, session })');
  checkedOutcome(outcome);
  // A context that is none (null) reads as none, as options do.
  const { previous, messagesAt }: ExtractionContext = typeof context === 'object' && context !== null ? context : {};
  return pipe(
    parsed(outcome, categories, NOTES_LIMITS.hardCap, previous),
    E.match(
      (failed): NotesEvent => ({
        type: 'notes/extractionFailed',
        user: slot.user,
        session: slot.session,
        ...bounded(failed),
        at,
      }),
      ({ facts, warnings }): NotesEvent => ({
        type: 'notes/extracted',
        user: slot.user,
        session: slot.session,
        facts,
        at,
        ...(messagesAt === undefined ? {} : { messagesAt }),
        ...warningsField(warnings),
      }),
    ),
  );
};

/** The event a model-backed profile rewrite's outcome records. A user that is no string, or an outcome that is none, is refused with a TypeError. */
export const settleProfileRewrite = (
  user: string,
  outcome: ModelOutcome,
  at: number,
  categories: ReadonlyArray<string>,
): NotesEvent => {
  if (typeof user !== 'string') refuseArgument('the user', user, 'a string');
  checkedOutcome(outcome);
  return pipe(
    parsed(outcome, categories, NOTES_LIMITS.globalCap),
    E.match(
      (failed): NotesEvent => ({ type: 'notes/profileRewriteFailed', user, ...bounded(failed), at }),
      ({ facts, warnings }): NotesEvent => ({
        type: 'notes/profileRewritten',
        user,
        facts,
        at,
        ...warningsField(warnings),
      }),
    ),
  );
};
