/**
 * Bounded answers: no tool hands back more than the configured number of tokens. An answer's
 * long list is cut from the end until the whole answer, as JSON, fits, and the answer says how
 * many entries were left out, so a caller can ask for fewer or narrower ones.
 */
import * as E from 'fp-ts/lib/Either.js';
import { type Failure, failure } from '../../base/failure.js';
import { checkedTokenCount } from '../../tokens/checked.js';
import type { TokenCounter } from '../../tokens/estimate.js';

/** The tokens of `value` as the JSON a client receives (a counter that answers no number of tokens throws, naming it). */
export const answerTokens = (value: unknown, countTokens: TokenCounter): number =>
  checkedTokenCount(countTokens(JSON.stringify(value)));

/**
 * The answer `build` makes from as many entries of `list` as fit in `maxTokens`, told how many
 * were left out (binary search: a few serializations, whatever the list's length). Left when
 * even the answer without any entry is over the bound.
 */
export const fitAnswer = <A, T>(
  list: ReadonlyArray<T>,
  build: (kept: ReadonlyArray<T>, omitted: number) => A,
  maxTokens: number,
  countTokens: TokenCounter,
): E.Either<Failure, A> => {
  const withCount = (count: number): A => build(list.slice(0, count), list.length - count);
  const fits = (count: number): boolean => answerTokens(withCount(count), countTokens) <= maxTokens;
  if (fits(list.length)) return E.right(withCount(list.length));
  if (!fits(0))
    return E.left(
      failure(
        'answer_too_large',
        `the answer is over the bound of ${maxTokens} tokens even without its list (${answerTokens(withCount(0), countTokens)} tokens without it)`,
      ),
    );
  let low = 0;
  let high = list.length;
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (fits(middle)) low = middle;
    else high = middle;
  }
  return E.right(withCount(low));
};
