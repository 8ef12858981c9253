/**
 * A token counter's answers, checked where the library reads them. The counter is the
 * caller's function: one that answers no number of tokens (NaN, a string, undefined, a
 * negative, Infinity) is a setting at fault and is said so by its name. Unchecked, such an
 * answer read as a section that never fits (an empty section, silently) or, negative, as one
 * that always does (the budget ignored).
 */
import { describeError } from '../base/describe.js';
import { type Failure, failure } from '../base/failure.js';
import { estimateTokens, type TokenCounter } from './estimate.js';

/** What a counter that answered no number of tokens is reported as: the caller's setting, not a bug. */
export type TokenCountFailure = Failure<'invalid_input'>;

/** Where the exceptions `checkedTokenCount` throws keep their failure: no other exception has it. */
const FAILURE = Symbol('token count failure');

/** The answer in words that quote none of its text (a string answer could hold a line break). */
const kindOf = (answer: unknown): string => {
  if (typeof answer === 'number' || answer === undefined || answer === null) return String(answer);
  return typeof answer === 'object' ? 'an object' : `a ${typeof answer}`;
};

/** True for a number of tokens: finite, 0 or more (not necessarily whole). */
export const isTokenCount = (answer: unknown): answer is number =>
  typeof answer === 'number' && Number.isFinite(answer) && answer >= 0;

/**
 * `answer` when it is a number of tokens; anything else throws a TypeError naming
 * `countTokens`, which the tracker's and the session's boundaries answer as `invalid_input`
 * (`tokenCountFailure`) and the pure core lets through to its caller.
 */
export const checkedTokenCount = (answer: unknown): number => {
  if (isTokenCount(answer)) return answer;
  const message = `countTokens answered ${kindOf(answer)}, not a number of tokens (a finite number 0 or more)`;
  throw Object.assign(new TypeError(message), { [FAILURE]: failure('invalid_input' as const, message) });
};

/**
 * The failure an exception `checkedTokenCount` threw stands for, as a fresh value; undefined
 * for any other exception. Never throws: the exception may be the caller's own, a Proxy whose
 * traps throw or answer anything.
 */
export const tokenCountFailure = (error: unknown): TokenCountFailure | undefined => {
  try {
    const carried: unknown =
      typeof error === 'object' && error !== null ? (error as { readonly [FAILURE]?: unknown })[FAILURE] : undefined;
    if (typeof carried !== 'object' || carried === null) return undefined;
    const { code, message } = carried as Partial<TokenCountFailure>;
    return code === 'invalid_input' && typeof message === 'string' ? failure(code, message) : undefined;
  } catch {
    return undefined;
  }
};

/**
 * `counter` as a shell hands it to the core, once, where it reads its options: an exception the
 * counter throws is thrown again saying it is the counter's (`the token counter (countTokens)
 * threw: ...`), so the shell's boundary answers `internal` naming it rather than in the counter's
 * own words, which name nothing. A refused count (`checkedTokenCount`) goes through as it is. The
 * library's estimate, which throws for no text, is taken as it is: the budget stage knows it; so
 * is a value that is no function, which the core reads as the estimate.
 */
export const namedTokenCounter = (counter: TokenCounter): TokenCounter =>
  counter === estimateTokens || typeof counter !== 'function'
    ? counter
    : (text) => {
        try {
          return counter(text);
        } catch (error) {
          if (tokenCountFailure(error) !== undefined) throw error;
          throw new Error(`the token counter (countTokens) threw: ${describeError(error)}`, { cause: error });
        }
      };
