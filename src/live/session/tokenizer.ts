/**
 * How a live session counts tokens, and what it records of it. Its counter budgets the sections
 * it answers; the counter's name, when it is a named one other than the estimate (`o200k`), goes
 * into each prompt's line (`tokenizer`), so `fact-tracker replay` budgets that section alike. A
 * counter of the caller's own has no name: nothing is recorded for it. A prompt sent again
 * answers its line's section, budgeted with the tokenizer that line names. The session never
 * loads a tokenizer itself: the o200k tables stay out of everything that opens a session.
 */
import * as E from 'fp-ts/lib/Either.js';
import { quoteValue } from '../../base/schema.js';
import type { HistoryPromptEvent } from '../../core/history/events.js';
import type { TrackerEnvironment } from '../../core/tracker/transition.js';
import type { TokenCounter } from '../../tokens/estimate.js';
import { DEFAULT_TOKENIZER, isTokenizerName, TOKENIZER_NAMES, type TokenizerName } from '../../tokens/names.js';
import type { SessionError } from './model.js';

/** How a session counts tokens. */
export interface SessionTokenizerOptions {
  /**
   * Counts the tokens of sections (default: ceil(characters / 4), what `replay` uses by
   * default). An answer that is not a finite number 0 or more fails the call with
   * `invalid_input` naming `countTokens`.
   */
  readonly countTokens?: TokenCounter;
  /**
   * The name of `countTokens` when it is a tokenizer the package ships (`o200k` for
   * `countO200kTokens` from `session-fact-tracker/o200k`, which must then be given): recorded in
   * each prompt's line, the estimate (the default) excepted, so a replay of the log budgets each
   * section as it was given. Leave it out for a counter of your own, which has no name: nothing
   * is recorded.
   */
  readonly tokenizer?: TokenizerName;
}

/** A session's counting: its own counter, the name its prompt lines record, and a recorded prompt's counter. */
export interface SessionCounting {
  /** The session's environment: its counter. */
  readonly env: TrackerEnvironment;
  /** The tokenizer its prompt lines record, if any. */
  readonly recorded: TokenizerName | undefined;
  /** The environment a recorded prompt's section is drawn in: with the tokenizer its line names. */
  readonly envOf: (
    prompt: Pick<HistoryPromptEvent, 'line' | 'tokenizer'>,
  ) => E.Either<SessionError, TrackerEnvironment>;
}

const invalidInput = (message: string): SessionError => ({ code: 'invalid_input', message });

/** The counting `options` ask for: `countTokens`, named by `tokenizer` when it is a named one, else the estimate. */
export const sessionCounting = (options: SessionTokenizerOptions): E.Either<SessionError, SessionCounting> => {
  const { countTokens, tokenizer } = options;
  if (tokenizer !== undefined && !isTokenizerName(tokenizer))
    return E.left(invalidInput(`tokenizer must be ${TOKENIZER_NAMES.join(' or ')}, not ${quoteValue(tokenizer)}`));
  const recorded = tokenizer === DEFAULT_TOKENIZER ? undefined : tokenizer;
  if (recorded !== undefined && countTokens === undefined)
    return E.left(
      invalidInput(
        `tokenizer ${recorded} names countTokens, which is not given (countO200kTokens from session-fact-tracker/o200k)`,
      ),
    );
  const env: TrackerEnvironment = countTokens === undefined ? {} : { countTokens };
  return E.right({
    env,
    recorded,
    envOf: ({ line, tokenizer: named }) => {
      // A line that names none was budgeted with the estimate, unless by a counter of the caller's
      // own: the session's, when it has no name.
      if (named === undefined) return E.right(recorded === undefined ? env : {});
      if (named === recorded) return E.right(env);
      if (named === DEFAULT_TOKENIZER) return E.right({});
      return E.left(
        invalidInput(
          `the prompt on line ${line} was budgeted with the tokenizer ${named}, which this session does not count with`,
        ),
      );
    },
  });
};
